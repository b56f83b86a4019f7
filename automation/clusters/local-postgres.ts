/**
 * A throwaway PostgreSQL server for the shared-state tests: Debian's server binaries, a new data
 * directory in a temporary folder, listening on 127.0.0.1 only, password authentication, run as an
 * unprivileged user (the `postgres` account when we are root, since the server refuses to run as
 * root). A missing server binary is an error (scripts/test.sh installs it), never a skip.
 */
import { execFileSync, spawn, SpawnOptions } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

export interface LocalPostgres {
  /** postgres://fleet:<password>@127.0.0.1:<port>/fleet?sslmode=disable */
  url: string;
  port: number;
  dir: string;
  pid: number;
  /** Runs SQL with psql as the server's superuser; returns the rows as text (tab-separated). */
  query(sql: string): string;
  stop(): Promise<void>;
}

/** The directory of Debian's server binaries (initdb, postgres, pg_isready), newest version first. */
export function postgresBinDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, "bin", "postgres"))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (!versions.length) throw new Error(`no PostgreSQL server under ${root} (scripts/ensure-postgres.sh installs Debian's postgresql package)`);
  return path.join(root, versions[0], "bin");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net
      .createServer()
      .listen(0, "127.0.0.1", () => {
        const port = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(port));
      })
      .on("error", reject);
  });
}

/** uid/gid to run the server as: ourselves, or the `postgres` account when we are root. */
function serverUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

export async function startLocalPostgres(): Promise<LocalPostgres> {
  const bin = postgresBinDir();
  const user = serverUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-postgres-"));
  const data = path.join(dir, "data");
  const password = `pw-${process.pid}-${Date.now()}`;
  fs.writeFileSync(path.join(dir, "pwfile"), password + "\n");
  if (user.uid !== undefined) execFileSync("chown", ["-R", `${user.uid}:${user.gid}`, dir]);
  const as: SpawnOptions = { ...user, cwd: dir };
  execFileSync(
    path.join(bin, "initdb"),
    ["-D", data, "-U", "fleet", "--pwfile", path.join(dir, "pwfile"), "--auth", "scram-sha-256", "-E", "UTF8", "--no-sync"],
    { ...as, stdio: "pipe" } as never,
  );
  const port = await freePort();
  const log = fs.openSync(path.join(dir, "server.log"), "a");
  const server = spawn(path.join(bin, "postgres"), ["-D", data, "-h", "127.0.0.1", "-p", String(port), "-k", dir, "-c", "fsync=off"], {
    ...as,
    stdio: ["ignore", log, log],
    detached: true,
  });
  // However the test run ends, the server must not outlive it.
  const kill = () => {
    try {
      process.kill(server.pid!, "SIGKILL");
    } catch {
      /* gone */
    }
  };
  process.once("exit", kill);
  const env = { ...process.env, PGPASSWORD: password };
  const psql = (db: string, sql: string) =>
    execFileSync(path.join(bin, "psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "fleet", "-d", db, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql], {
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 512 * 2 ** 20,
    });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`PostgreSQL exited at start:\n${fs.readFileSync(path.join(dir, "server.log"), "utf8")}`);
    try {
      psql("postgres", "select 1");
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not answer on 127.0.0.1:${port} within 60 s (log: ${path.join(dir, "server.log")})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  psql("postgres", "create database fleet");
  return {
    url: `postgres://fleet:${password}@127.0.0.1:${port}/fleet?sslmode=disable`,
    port,
    dir,
    pid: server.pid!,
    query: (sql) => psql("fleet", sql),
    stop: async () => {
      if (server.exitCode === null) {
        const exited = new Promise((r) => server.once("exit", r));
        server.kill("SIGINT"); // fast shutdown
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        kill();
      }
      process.removeListener("exit", kill);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
