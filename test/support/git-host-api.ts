/**
 * A local HTTP server that answers the commit-status and comment requests of GitHub, GitLab or Gitea
 * in each API's documented shape, keeping statuses and comments in memory so that a second run finds
 * the comment the first one wrote. Every request is recorded (method, path, headers, JSON body) for the
 * tests to compare with the API's documentation. For tests only.
 */
import { spawn } from "node:child_process";
import * as http from "node:http";
import { AddressInfo } from "node:net";

export type Host = "github" | "gitlab" | "gitea";

export interface Recorded {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body?: Record<string, unknown>;
}

export interface FakeHost {
  /** The API base URL (GitHub: the root; GitLab: /api/v4; Gitea: /api/v1). */
  apiUrl: string;
  requests: Recorded[];
  /** Statuses posted, per "<repository>@<sha>". */
  statuses: Map<string, Record<string, unknown>[]>;
  /** Comments per pull request number. */
  comments: Map<number, { id: number; body: string; user?: { login: string }; author?: { username: string } }[]>;
  /** The pull requests each commit belongs to. */
  pulls: Map<string, number[]>;
  /** Answer the next requests matching `path` (a regexp on the path) with this status instead. */
  refuse: { path: RegExp; status: number; body: string } | undefined;
  close(): Promise<void>;
}

/**
 * `gitRoot`: bare repositories served read-only over git's smart HTTP (git http-backend) at
 * /<owner>/<name>.git, so that a GitRepo's `repo` URL is on the same host as the API.
 */
export async function fakeGitHost(host: Host, gitRoot?: string): Promise<FakeHost> {
  const f = { requests: [], statuses: new Map(), comments: new Map(), pulls: new Map(), refuse: undefined } as unknown as FakeHost;
  let nextId = 1000;
  const base = host === "github" ? "" : host === "gitlab" ? "/api/v4" : "/api/v1";
  const server = http.createServer((req, res) => {
    if (gitRoot && /^\/[^/]+\/[^/]+\.git\//.test(req.url ?? "")) return serveGit(gitRoot, req, res);
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      const path = req.url ?? "";
      f.requests.push({ method: req.method ?? "", path, headers: req.headers, ...(body ? { body } : {}) });
      const send = (status: number, json: unknown): void => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
      if (f.refuse && f.refuse.path.test(path)) return void res.writeHead(f.refuse.status).end(f.refuse.body);
      const route = routes(host, base, path.split("?")[0]);
      if (!route) return send(404, { message: "Not Found" });
      const { kind, repo, sha, n, id } = route;
      if (kind === "status" && req.method === "POST") {
        const key = `${repo}@${sha}`;
        f.statuses.set(key, [...(f.statuses.get(key) ?? []), body!]);
        return send(201, { id: nextId++, ...body });
      }
      if (kind === "pulls" && req.method === "GET") {
        const list = f.pulls.get(sha!) ?? [];
        if (host === "gitea") return list.length ? send(200, { number: list[0] }) : send(404, { message: "not found" });
        return send(
          200,
          list.map((x) => (host === "gitlab" ? { iid: x, id: x + 90000 } : { number: x, id: x + 90000 })),
        );
      }
      if (kind === "comments" && req.method === "GET") return send(200, f.comments.get(n!) ?? []);
      if (kind === "comments" && req.method === "POST") {
        // The token's user writes it: GitHub and Gitea say so in user.login, GitLab in author.username.
        const c = { id: nextId++, body: String(body!.body), ...(host === "gitlab" ? { author: { username: "fleet-bot" } } : { user: { login: "fleet-bot" } }) };
        f.comments.set(n!, [...(f.comments.get(n!) ?? []), c]);
        return send(201, c);
      }
      if (kind === "comment" && (req.method === "PATCH" || req.method === "PUT")) {
        for (const list of f.comments.values()) {
          const c = list.find((x) => x.id === id);
          if (c) {
            c.body = String(body!.body);
            return send(200, c);
          }
        }
        return send(404, { message: "no comment" });
      }
      send(405, { message: "method" });
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  f.apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${base}`;
  f.close = () =>
    new Promise((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    });
  return f;
}

type Route = { kind: "status" | "pulls" | "comments" | "comment"; repo?: string; sha?: string; n?: number; id?: number };

/** The documented paths: GitHub REST v3, GitLab v4 (the project's path as one URL-encoded segment), Gitea v1. */
function routes(host: Host, base: string, path: string): Route | undefined {
  if (!path.startsWith(base)) return undefined;
  const p = path.slice(base.length);
  let m: RegExpExecArray | null;
  if (host === "gitlab") {
    if ((m = /^\/projects\/([^/]+)\/statuses\/([0-9a-f]+)$/.exec(p))) return { kind: "status", repo: decodeURIComponent(m[1]), sha: m[2] };
    if ((m = /^\/projects\/([^/]+)\/repository\/commits\/([0-9a-f]+)\/merge_requests$/.exec(p))) return { kind: "pulls", sha: m[2] };
    if ((m = /^\/projects\/([^/]+)\/merge_requests\/(\d+)\/notes$/.exec(p))) return { kind: "comments", n: Number(m[2]) };
    if ((m = /^\/projects\/([^/]+)\/merge_requests\/(\d+)\/notes\/(\d+)$/.exec(p))) return { kind: "comment", id: Number(m[3]) };
    return undefined;
  }
  if ((m = /^\/repos\/([^/]+\/[^/]+)\/statuses\/([0-9a-f]+)$/.exec(p))) return { kind: "status", repo: m[1], sha: m[2] };
  if (host === "github" && (m = /^\/repos\/[^/]+\/[^/]+\/commits\/([0-9a-f]+)\/pulls$/.exec(p))) return { kind: "pulls", sha: m[1] };
  if (host === "gitea" && (m = /^\/repos\/[^/]+\/[^/]+\/commits\/([0-9a-f]+)\/pull$/.exec(p))) return { kind: "pulls", sha: m[1] };
  if ((m = /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/.exec(p))) return { kind: "comments", n: Number(m[1]) };
  if ((m = /^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/.exec(p))) return { kind: "comment", id: Number(m[1]) };
  return undefined;
}

/** One request to git http-backend as CGI: its headers, then its body. */
function serveGit(root: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://localhost");
  const cgi = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      REQUEST_METHOD: req.method,
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
      ...(req.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"]) } : {}),
    },
  });
  req.pipe(cgi.stdin);
  let head = Buffer.alloc(0);
  let started = false;
  cgi.stdout.on("data", (chunk: Buffer) => {
    if (started) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    started = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, end).toString().split("\r\n")) {
      const [k, ...v] = line.split(":");
      if (k.toLowerCase() === "status") status = parseInt(v.join(":"), 10);
      else headers[k] = v.join(":").trim();
    }
    res.writeHead(status, headers);
    res.write(head.subarray(end + 4));
  });
  cgi.on("close", () => res.end());
}
