/**
 * The operations' one call into commit statuses (gather, decide, act): after an `up` (the watcher's
 * too), each deployed commit gets this environment's status on its git host, and optionally its pull
 * requests one comment each, updated in place. Nothing here fails the up: every problem is a warning
 * naming the repository and commit, with the token (and anything shaped like a credential) redacted.
 * Bounded: a timeout per request, a few attempts, one deadline for the whole run, a few pull requests
 * per commit and a few pages of comments per pull request.
 */
import { CommitStatusConfig, contextOf } from "../../core/config/commit-status";
import { RequestOutcome, requestWithRetries, RetryPolicy } from "../http-request";
import { redactMessage } from "../notify/redact";
import { commentMarker, commentMarkdown } from "./comment";
import { CommitResult, decideCommitStatuses, hostDescription, hostState, UpCommits } from "./decide";
import { ApiRequest, HOST_APIS, HostApi } from "./hosts";
import type { StackRecordStore } from "../engine/stack-record-store";
import { PostedMemory, postedHash } from "./posted-store";

export interface CommitStatusPolicy extends RetryPolicy {
  /** Everything one up posts: what is left when it passes is not sent (and said). */
  deadlineMs: number;
  /** Pull requests commented per commit, and pages of comments read per pull request. */
  maxPulls: number;
  maxCommentPages: number;
  /** The largest answer read (a page of 100 comments of up to 65536 characters each). */
  maxAnswerBytes: number;
}

export const COMMIT_STATUS_POLICY: CommitStatusPolicy = {
  attempts: 3,
  backoffMs: [1000, 2000],
  attemptTimeoutMs: 10_000,
  deadlineMs: 120_000,
  maxPulls: 5,
  maxCommentPages: 10,
  maxAnswerBytes: 8 * 1024 * 1024,
};

export interface CommitStatusOptions {
  stack: string;
  config: CommitStatusConfig | undefined;
  /** The stack's GitRepos with their `repo` URLs. */
  gitRepos: { name: string; repo: string }[];
  warn: (message: string) => void;
  /** Where the token is read (default: process.env). */
  env?: NodeJS.ProcessEnv;
  policy?: CommitStatusPolicy;
  /** What the last ups posted (posted-store.ts): an unchanged result is not sent again. Absent: every result is sent. */
  memory?: StackRecordStore<PostedMemory>;
}

export type { UpCommits };

/** What was posted: per repository and commit, its state and the comments written ("created" or "updated"); `unchanged`: nothing sent, the last up posted the same. */
export interface Posted {
  repository: string;
  commit: string;
  state: string;
  comments: string[];
  unchanged?: true;
}

class Refused extends Error {}

export async function postCommitStatuses(o: CommitStatusOptions, facts: UpCommits): Promise<Posted[]> {
  const c = o.config;
  if (!c) return [];
  const token = (o.env ?? process.env)[c.tokenFromEnv] ?? "";
  const warn = (m: string) => o.warn(`warning: stack ${o.stack}: commitStatus: ${redactMessage(m, token ? [token] : [])}`);
  try {
    const chosen = c.gitRepos ? o.gitRepos.filter((g) => c.gitRepos!.includes(g.name)) : o.gitRepos;
    const decision = decideCommitStatuses({ host: c.host, apiUrl: c.apiUrl, gitRepos: chosen, ...facts });
    for (const s of decision.skipped) warn(`${s}: no status posted for it`);
    if (!decision.results.length) return [];
    if (!token) {
      warn(`environment variable ${c.tokenFromEnv} is not set; ${decision.results.length} commit status(es) not posted`);
      return [];
    }
    const policy = o.policy ?? COMMIT_STATUS_POLICY;
    const call = caller(c, token, policy, Date.now() + policy.deadlineMs);
    const before = (await o.memory?.read()) ?? {};
    const memory: PostedMemory = {};
    // Who this stack's comments are by (learned from the first one it created): only those are edited.
    const author: CommentAuthor = { known: before[COMMENT_AUTHOR_KEY] };
    const posted: Posted[] = [];
    for (const result of decision.results) {
      const r = redacted(result, token);
      const where = `${r.repository.path}@${r.commit.slice(0, 12)}`;
      const key = `${r.repository.path.toLowerCase()}@${r.commit}`;
      const hash = postedHash({ config: c, stack: o.stack, result: r });
      if (before[key] === hash) {
        memory[key] = hash;
        posted.push({ repository: r.repository.path, commit: r.commit, state: hostState(c.host, r.state), comments: [], unchanged: true });
        continue;
      }
      try {
        posted.push(await postOne(c, o.stack, r, call, policy, author));
        memory[key] = hash;
      } catch (err) {
        warn(`${where}: ${(err as Error).message}`); // not remembered: the next up tries again
      }
    }
    if (author.known) memory[COMMENT_AUTHOR_KEY] = author.known;
    await o.memory?.write(memory);
    return posted;
  } catch (err) {
    warn(`not posted: ${(err as Error).message ?? String(err)}`);
    return [];
  }
}

/** What leaves for the host carries no credential: content's words (an API server quoting a Secret) and the token itself become [secret]. */
function redacted(r: CommitResult, token: string): CommitResult {
  const clean = (t: string) => redactMessage(t, [token]);
  const lines = (xs: CommitResult["failures"]) => xs.map((x) => ({ ...x, reason: clean(x.reason) }));
  return { ...r, description: clean(r.description), failures: lines(r.failures), held: lines(r.held) };
}

type Call = (req: ApiRequest, keepBody?: boolean) => Promise<RequestOutcome>;

function caller(c: CommitStatusConfig, token: string, policy: CommitStatusPolicy, deadline: number): Call {
  const api = HOST_APIS[c.host];
  return (req, keepBody) =>
    requestWithRetries(
      `${c.apiUrl}${req.path}`,
      {
        method: req.method,
        headers: { ...api.auth(token), "user-agent": "pulumi-fleet", ...(req.body ? { "content-type": "application/json" } : {}) },
        ...(req.body ? { body: JSON.stringify(req.body) } : {}),
      },
      policy,
      deadline,
      keepBody ? { keepBody: policy.maxAnswerBytes } : {},
    );
}

const problem = (what: string, r: RequestOutcome) => `${what} (${r.why} after ${r.attempts} attempt(s)${r.body ? `: ${r.body}` : ""})`;

/** The memory's key for the host user this stack's comments are by (a repository@commit key always has an "@"). */
const COMMENT_AUTHOR_KEY = "comment-author";

/** The comments' author: known from an earlier up, or learned from the comment this one creates. */
interface CommentAuthor {
  known?: string;
}

async function postOne(c: CommitStatusConfig, stack: string, r: CommitResult, call: Call, policy: CommitStatusPolicy, author: CommentAuthor): Promise<Posted> {
  const api = HOST_APIS[c.host];
  const context = contextOf(c, stack);
  const state = hostState(c.host, r.state);
  const s = await call(
    api.status(r.repository, r.commit, {
      state,
      description: hostDescription(c.host, r.description),
      context,
      ...(c.targetUrl ? { targetUrl: c.targetUrl } : {}),
    }),
  );
  // GitLab refuses a status equal to the one the commit has ("Cannot transition status"): it is there already.
  const same = c.host === "gitlab" && s.status === 400 && /cannot transition status/i.test(s.body ?? "");
  if (!s.ok && !same) throw new Refused(problem("status not posted", s));
  const comments = c.pullRequestComment ? await commentOnPulls(api, stack, context, r, call, policy, author) : [];
  return { repository: r.repository.path, commit: r.commit, state, comments };
}

async function commentOnPulls(
  api: HostApi,
  stack: string,
  context: string,
  r: CommitResult,
  call: Call,
  policy: CommitStatusPolicy,
  author: CommentAuthor,
): Promise<string[]> {
  const found = await call(api.pulls(r.repository, r.commit), true);
  if (!found.ok && found.status === 404) return []; // Gitea: no pull request merged this commit
  if (!found.ok) throw new Refused(problem("its pull requests not read: no comment", found));
  const pulls = [...new Set(api.pullNumbers(parse(found.text)))].slice(0, policy.maxPulls);
  const body = commentMarkdown(stack, context, r);
  const marker = commentMarker(stack);
  const done: string[] = [];
  for (const pull of pulls) {
    // Until this stack created a comment, none is its own: a comment opening with the marker may be anyone's.
    const existing = author.known === undefined ? undefined : await findComment(api, r, pull, { marker, author: author.known }, call, policy);
    const w = await call(existing === undefined ? api.createComment(r.repository, pull, body) : api.updateComment(r.repository, pull, existing, body), true);
    if (!w.ok) throw new Refused(problem(`comment on pull request ${pull} not ${existing === undefined ? "created" : "updated"}`, w));
    if (existing === undefined) author.known = api.authorOf(parse(w.text)) ?? author.known;
    done.push(`${pull}:${existing === undefined ? "created" : "updated"}`);
  }
  return done;
}

/** This stack's comment on the pull request (its marker at the start of the body, by its author), read page by page within the bound. */
async function findComment(
  api: HostApi,
  r: CommitResult,
  pull: number,
  mine: { marker: string; author: string },
  call: Call,
  policy: CommitStatusPolicy,
): Promise<number | undefined> {
  for (let page = 1; page <= policy.maxCommentPages; page++) {
    const a = await call(api.comments(r.repository, pull, page), true);
    if (!a.ok) throw new Refused(problem(`comments of pull request ${pull} not read`, a));
    const list = api.commentsOf(parse(a.text));
    const found = list.find((x) => x.body.startsWith(mine.marker) && x.author === mine.author);
    if (found) return found.id;
    if (!api.commentPage || list.length < api.commentPage) return undefined;
  }
  return undefined;
}

function parse(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? "");
  } catch {
    throw new Refused("the API's answer is not JSON");
  }
}
