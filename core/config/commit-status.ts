/**
 * `commitStatus`: the deploy result on each deployed commit, per environment (automation/commit-status/):
 * a status on the commit of every GitRepo on one git host, and optionally one comment per pull request.
 * The token is a credential, so the stack file only names the environment variable the runner gets it
 * from (a CI secret), as a webhook's URL (notifications.ts). Which host gets a GitRepo's status is the
 * operator's setting alone: a GitRepo on another host is skipped with a warning, never guessed.
 */
import { Field } from "./reader";
import { keysOf } from "./field-table";
import { COMMIT_STATUS_FIELDS, COMMIT_STATUS_HOSTS } from "./stack-fields";
import { httpUrlProblem } from "./http-url";

const URL_RULES = { credentials: "keep them out of the stack file (the token comes from tokenFromEnv)", queryOrFragment: "" };

export type CommitStatusHost = (typeof COMMIT_STATUS_HOSTS)[number];

export interface CommitStatusConfig {
  host: CommitStatusHost;
  /** The API's base URL, without a trailing slash. */
  apiUrl: string;
  /** The environment variable holding the token, read when a status is posted. */
  tokenFromEnv: string;
  /** The status's name (GitHub's and Gitea's context, GitLab's name): one per environment; absent: pulumi-fleet/<stack> (contextOf). */
  context?: string;
  targetUrl?: string;
  pullRequestComment: boolean;
  /** Only these GitRepos (by name); absent: all of them. */
  gitRepos?: string[];
}

/** Where each host's API is when the stack file does not say (Gitea has no public default). */
export const DEFAULT_API_URLS: Partial<Record<CommitStatusHost, string>> = {
  github: "https://api.github.com",
  gitlab: "https://gitlab.com/api/v4",
};

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Each host's limit on a status's name (GitHub's context is 255; GitLab's name and Gitea's context too). */
const MAX_CONTEXT = 255;

/** The status's name on the commit: the stack file's, or pulumi-fleet/<stack>. */
export function contextOf(c: CommitStatusConfig, stack: string): string {
  return c.context ?? `pulumi-fleet/${stack}`;
}

/** `gitRepoNames`: the stack's GitRepos, which `gitRepos` must name. */
export function readCommitStatus(f: Field, gitRepoNames: readonly string[]): CommitStatusConfig | undefined {
  if (!f.present) return undefined;
  f.object(keysOf(COMMIT_STATUS_FIELDS));
  if (f.child("token").present)
    f.child("token").fail(
      "a token is a credential and is never kept in the stack file: put it in an environment variable of the runner (a CI secret) and name that variable in tokenFromEnv",
    );
  const host = f.child("host").oneOf(COMMIT_STATUS_HOSTS);
  const apiUrl = f.child("apiUrl").optString() ?? DEFAULT_API_URLS[host];
  if (apiUrl === undefined) return f.child("apiUrl").fail(`is required for host ${host} (its API's base URL, e.g. https://gitea.example.com/api/v1)`);
  const problem = httpUrlProblem(apiUrl, URL_RULES);
  if (problem) f.child("apiUrl").fail(problem);
  const tokenFromEnv = f.child("tokenFromEnv").string();
  if (!ENV_NAME.test(tokenFromEnv))
    f.child("tokenFromEnv").fail(`must be the name of an environment variable (letters, digits and _; got ${JSON.stringify(tokenFromEnv)})`);
  const context = f.child("context").optString();
  if (context !== undefined && (!context.trim() || context.length > MAX_CONTEXT || /\p{Cc}/u.test(context)))
    f.child("context").fail(`must be 1 to ${MAX_CONTEXT} printable characters`);
  const targetUrl = f.child("targetUrl").optString();
  if (targetUrl !== undefined) {
    const p = httpUrlProblem(targetUrl, URL_RULES);
    if (p) f.child("targetUrl").fail(p);
  }
  const gitRepos = f.child("gitRepos").present ? f.child("gitRepos").stringList() : undefined;
  if (gitRepos && !gitRepos.length) f.child("gitRepos").fail("lists no GitRepo: leave it out for all of them, or remove commitStatus");
  gitRepos?.forEach((name, i) => {
    if (!gitRepoNames.includes(name))
      f.child("gitRepos")
        .index(i)
        .fail(`names no GitRepo of this stack (${JSON.stringify(name)})`);
  });
  return {
    host,
    apiUrl: apiUrl.replace(/\/+$/, ""),
    tokenFromEnv,
    ...(context !== undefined ? { context } : {}),
    ...(targetUrl !== undefined ? { targetUrl } : {}),
    pullRequestComment: f.child("pullRequestComment").bool(false),
    ...(gitRepos ? { gitRepos: [...new Set(gitRepos)] } : {}),
  };
}
