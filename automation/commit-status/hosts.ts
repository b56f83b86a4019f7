/**
 * Each git host's commit-status and comment API as its documentation gives it: the request (method,
 * path under the API base, headers, JSON body) and what is read back from its answers. Pure:
 * post.ts sends them.
 *   GitHub: REST v3 (docs.github.com/rest/commits/statuses, /rest/commits/commits#list-pull-requests-associated-with-a-commit,
 *           /rest/issues/comments).
 *   GitLab: REST v4 (docs.gitlab.com/api/commits/#set-the-pipeline-status-of-a-commit, #list-merge-requests-associated-with-a-commit,
 *           /api/notes/#merge-requests).
 *   Gitea:  API v1 (/repos/{owner}/{repo}/statuses/{sha}, /commits/{sha}/pull, /issues/{index}/comments, /issues/comments/{id}).
 */
import type { CommitStatusHost } from "../../core/config/commit-status";
import type { Repository } from "./repository";

export interface ApiRequest {
  method: "GET" | "POST" | "PATCH" | "PUT";
  /** Under the API base, starting with "/". */
  path: string;
  body?: Record<string, string>;
}

export interface StatusBody {
  state: string;
  description: string;
  context: string;
  targetUrl?: string;
}

export interface HostApi {
  /** The headers that carry the token. */
  auth(token: string): Record<string, string>;
  status(r: Repository, commit: string, s: StatusBody): ApiRequest;
  /** The pull requests (merge requests) the commit belongs to. */
  pulls(r: Repository, commit: string): ApiRequest;
  /** Their numbers (iids), from the answer; a 404 means none (Gitea: no merged pull request). */
  pullNumbers(answer: unknown): number[];
  /** A page (from 1) of a pull request's comments. */
  comments(r: Repository, pull: number, page: number): ApiRequest;
  /** Each comment's id, body and author (the host's login or user name: a marker alone is anyone's to write). */
  commentsOf(answer: unknown): { id: number; body: string; author?: string }[];
  /** Who wrote a comment the API answered with (a created comment: the token's own user). */
  authorOf(answer: unknown): string | undefined;
  /** Comments a full page holds (a shorter page is the last); 0: the API answers all of them at once. */
  commentPage: number;
  createComment(r: Repository, pull: number, body: string): ApiRequest;
  updateComment(r: Repository, pull: number, id: number, body: string): ApiRequest;
}

const seg = encodeURIComponent;
/** owner/name as two path segments, each encoded. */
const ownerName = (r: Repository) => r.path.split("/").map(seg).join("/");
/** GitLab's project id: the whole path, URL-encoded as one segment. */
const project = (r: Repository) => seg(r.path);
const optional = (s: StatusBody): Record<string, string> => (s.targetUrl ? { target_url: s.targetUrl } : {});

const list = (answer: unknown): Record<string, unknown>[] =>
  (Array.isArray(answer) ? answer : []).filter((x): x is Record<string, unknown> => !!x && typeof x === "object");
const numbers = (answer: unknown, key: string) =>
  list(answer)
    .map((x) => x[key])
    .filter((n): n is number => Number.isSafeInteger(n));
/** GitHub and Gitea name a comment's author in `user.login`, GitLab in `author.username`. */
const authorIn = (x: unknown, who: "user" | "author", key: "login" | "username"): string | undefined => {
  const u = x && typeof x === "object" ? (x as Record<string, unknown>)[who] : undefined;
  const name = u && typeof u === "object" ? (u as Record<string, unknown>)[key] : undefined;
  return typeof name === "string" && name ? name : undefined;
};
const comments = (answer: unknown, key: string, author: (x: unknown) => string | undefined) =>
  list(answer)
    .filter((x) => Number.isSafeInteger(x.id) && typeof x[key] === "string")
    .map((x) => ({ id: x.id as number, body: x[key] as string, ...(author(x) ? { author: author(x) } : {}) }));
const byLogin = (x: unknown) => authorIn(x, "user", "login");
const byUsername = (x: unknown) => authorIn(x, "author", "username");

const github: HostApi = {
  auth: (token) => ({ authorization: `Bearer ${token}`, accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28" }),
  status: (r, sha, s) => ({
    method: "POST",
    path: `/repos/${ownerName(r)}/statuses/${sha}`,
    body: { state: s.state, description: s.description, context: s.context, ...optional(s) },
  }),
  pulls: (r, sha) => ({ method: "GET", path: `/repos/${ownerName(r)}/commits/${sha}/pulls?per_page=100` }),
  pullNumbers: (a) => numbers(a, "number"),
  comments: (r, n, page) => ({ method: "GET", path: `/repos/${ownerName(r)}/issues/${n}/comments?per_page=100&page=${page}` }),
  commentsOf: (a) => comments(a, "body", byLogin),
  authorOf: byLogin,
  commentPage: 100,
  createComment: (r, n, body) => ({ method: "POST", path: `/repos/${ownerName(r)}/issues/${n}/comments`, body: { body } }),
  updateComment: (r, _n, id, body) => ({ method: "PATCH", path: `/repos/${ownerName(r)}/issues/comments/${id}`, body: { body } }),
};

const gitlab: HostApi = {
  auth: (token) => ({ "private-token": token }),
  status: (r, sha, s) => ({
    method: "POST",
    path: `/projects/${project(r)}/statuses/${sha}`,
    body: { state: s.state, name: s.context, description: s.description, ...optional(s) },
  }),
  pulls: (r, sha) => ({ method: "GET", path: `/projects/${project(r)}/repository/commits/${sha}/merge_requests?per_page=100` }),
  pullNumbers: (a) => numbers(a, "iid"),
  comments: (r, n, page) => ({ method: "GET", path: `/projects/${project(r)}/merge_requests/${n}/notes?per_page=100&page=${page}` }),
  commentsOf: (a) => comments(a, "body", byUsername),
  authorOf: byUsername,
  commentPage: 100,
  createComment: (r, n, body) => ({ method: "POST", path: `/projects/${project(r)}/merge_requests/${n}/notes`, body: { body } }),
  updateComment: (r, n, id, body) => ({ method: "PUT", path: `/projects/${project(r)}/merge_requests/${n}/notes/${id}`, body: { body } }),
};

const gitea: HostApi = {
  auth: (token) => ({ authorization: `token ${token}` }),
  status: (r, sha, s) => ({
    method: "POST",
    path: `/repos/${ownerName(r)}/statuses/${sha}`,
    body: { state: s.state, description: s.description, context: s.context, ...optional(s) },
  }),
  // Gitea answers one pull request, the one the commit was merged by (404: none).
  pulls: (r, sha) => ({ method: "GET", path: `/repos/${ownerName(r)}/commits/${sha}/pull` }),
  pullNumbers: (a) => numbers([a], "number"),
  // Gitea lists an issue's comments whole (since/before only, no pages).
  comments: (r, n) => ({ method: "GET", path: `/repos/${ownerName(r)}/issues/${n}/comments` }),
  commentsOf: (a) => comments(a, "body", byLogin),
  authorOf: byLogin,
  commentPage: 0,
  createComment: (r, n, body) => ({ method: "POST", path: `/repos/${ownerName(r)}/issues/${n}/comments`, body: { body } }),
  updateComment: (r, _n, id, body) => ({ method: "PATCH", path: `/repos/${ownerName(r)}/issues/comments/${id}`, body: { body } }),
};

export const HOST_APIS: Record<CommitStatusHost, HostApi> = { github, gitlab, gitea };
