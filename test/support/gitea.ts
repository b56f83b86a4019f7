/**
 * A real Gitea server (tools/build-gitea.sh) in a temporary directory: SQLite, no SSH, an admin user and
 * an API token, on a free port of 127.0.0.1. For the tests that read commit statuses back from a real host.
 */
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { eventually } from "./eventually";
import { tempDir } from "./git-fixtures";

export interface Gitea {
  /** http://127.0.0.1:<port> */
  url: string;
  apiUrl: string;
  user: string;
  token: string;
  /** A call to its API as the admin user: the parsed JSON answer, or a thrown error naming the status. */
  api(method: string, apiPath: string, body?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

export async function startGitea(bin: string): Promise<Gitea> {
  const dir = tempDir("pf-gitea-");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const ini = path.join(dir, "app.ini");
  fs.writeFileSync(
    ini,
    [
      // Gitea refuses to run as root unless told; the test machines run as root.
      ...(process.getuid?.() === 0 ? ["I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true"] : []),
      "RUN_MODE = prod",
      `WORK_PATH = ${dir}`,
      "[server]",
      "HTTP_ADDR = 127.0.0.1",
      `HTTP_PORT = ${port}`,
      `ROOT_URL = ${url}/`,
      // Its locales and templates, kept beside the binary by tools/build-gitea.sh (no bindata).
      `STATIC_ROOT_PATH = ${path.dirname(bin)}`,
      "DISABLE_SSH = true",
      "OFFLINE_MODE = true",
      "[database]",
      "DB_TYPE = sqlite3",
      `PATH = ${path.join(dir, "gitea.db")}`,
      "[security]",
      "INSTALL_LOCK = true",
      "[repository]",
      `ROOT = ${path.join(dir, "repos")}`,
      "DEFAULT_BRANCH = main",
      "[log]",
      "LEVEL = warn",
      `ROOT_PATH = ${path.join(dir, "log")}`,
      "",
    ].join("\n"),
  );
  const run = (...args: string[]) => execFileSync(bin, [...args, "--config", ini], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  run("migrate");
  const user = "fleet";
  run("admin", "user", "create", "--admin", "--username", user, "--password", "Fleet-pass-123", "--email", "fleet@example.com", "--must-change-password=false");
  const token = run("admin", "user", "generate-access-token", "--username", user, "--scopes", "all", "--raw").trim().split("\n").pop()!;
  const child: ChildProcess = spawn(bin, ["web", "--config", ini], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr = (stderr + c).slice(-4000)));
  const api = async (method: string, apiPath: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${url}/api/v1${apiPath}`, {
      method,
      headers: { authorization: `token ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`Gitea ${method} ${apiPath}: HTTP ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
  await eventually(
    `Gitea answering on ${url}`,
    () => {
      if (child.exitCode !== null) throw new Error(`Gitea exited with ${child.exitCode}: ${stderr}`);
      return api("GET", "/version").catch(() => undefined);
    },
    (v) => v !== undefined,
    60_000,
  );
  return {
    url,
    apiUrl: `${url}/api/v1`,
    user,
    token,
    api,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((ok) => child.once("exit", ok));
        child.kill("SIGTERM");
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
