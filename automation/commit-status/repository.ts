/**
 * Which repository on the configured host a GitRepo's commit belongs to, read from its `repo` URL
 * (https, ssh:// or scp-like git@host:path). The host must be the configured API's own: a GitRepo on
 * another host is skipped (the caller warns), never sent to the configured host under a guessed name,
 * and the token never goes to a host the operator did not name. Pure.
 */
import type { CommitStatusHost } from "../../core/config/commit-status";

export interface Repository {
  /** GitHub and Gitea: owner/name. GitLab: the project's full path (group/subgroup/project). */
  path: string;
}

/** The git host's name as the repo URL spells it, for the API at `apiUrl` (api.github.com serves github.com). */
export function gitHostOf(apiUrl: string): string {
  const host = new URL(apiUrl).hostname.toLowerCase();
  return host === "api.github.com" ? "github.com" : host;
}

/** The host and path of a git URL, or undefined when it is not a remote URL (a local path, file://). */
export function splitGitUrl(repo: string): { host: string; path: string } | undefined {
  const scp = /^[\w.-]+@([\w.-]+):(?!\/\/)(.+)$/.exec(repo);
  if (scp) return { host: scp[1].toLowerCase(), path: scp[2] };
  let url: URL;
  try {
    url = new URL(repo);
  } catch {
    return undefined;
  }
  if (!["https:", "http:", "ssh:", "git:"].includes(url.protocol)) return undefined;
  return { host: url.hostname.toLowerCase(), path: decodeURIComponent(url.pathname) };
}

const SEGMENT = /^[A-Za-z0-9_.-]+$/;

/**
 * The repository of `repo` on `host` at `apiUrl`, or why there is none. A self-hosted GitLab or Gitea
 * under a sub-path (https://example.com/gitlab/api/v4) serves repositories under the same sub-path.
 */
export function repositoryOf(repo: string, host: CommitStatusHost, apiUrl: string): Repository | { skip: string } {
  const parts = splitGitUrl(repo);
  if (!parts) return { skip: "its repo is not a remote URL" };
  const expected = gitHostOf(apiUrl);
  if (parts.host !== expected) return { skip: `its repo is on ${parts.host}, not on ${expected} (commitStatus.apiUrl)` };
  let p = parts.path
    .replace(/^\/+/, "")
    .replace(/\/+$/, "")
    .replace(/\.git$/, "");
  const base = new URL(apiUrl).pathname.replace(/\/api\/v\d+\/?$/, "").replace(/^\/+|\/+$/g, "");
  if (host !== "github" && base && p.startsWith(`${base}/`)) p = p.slice(base.length + 1);
  const segments = p.split("/");
  if (segments.some((s) => !SEGMENT.test(s) || s === "." || s === "..")) return { skip: `its repo's path ${JSON.stringify(p)} is not a repository path` };
  if (host === "gitlab" ? segments.length < 2 : segments.length !== 2)
    return { skip: `its repo's path ${JSON.stringify(p)} is not ${host === "gitlab" ? "group/project" : "owner/name"}` };
  return { path: p };
}
