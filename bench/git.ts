/**
 * `npm run bench:git`: warm resolution of an unchanged remote (ls-remote, no fetch, tree reused),
 * over a file:// remote and over smart HTTP served by `git http-backend` on 127.0.0.1 (so a real
 * network round trip is included). Prints median/p90/max of 20 runs and writes bench/results/git.json.
 */
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { resolveSource } from "../core/source/git";
import { gitRepoEntry } from "../core/config/git-repo";
import { parseCommand, runMain } from "../scripts/cli";

const RUNS = 20;

function makeRepo(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-repo-"));
  const git = (...a: string[]) => execFileSync("git", a, { cwd: dir });
  git("init", "-q", "-b", "master");
  for (let i = 0; i < 200; i++) {
    fs.mkdirSync(path.join(dir, `app${i % 20}`), { recursive: true });
    fs.writeFileSync(path.join(dir, `app${i % 20}`, `cm${i}.yaml`), `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm${i}}\ndata: {i: "${i}"}\n`);
  }
  git("add", "-A");
  git("-c", "user.email=b@example.com", "-c", "user.name=b", "commit", "-q", "-m", "init");
  return dir;
}

/** Serves the repository with git's own smart-HTTP CGI on loopback. */
function serve(dir: string): Promise<{ url: string; close: () => void }> {
  const backend = execFileSync("git", ["--exec-path"], { encoding: "utf8" }).trim() + "/git-http-backend";
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, "http://x");
    const cgi = spawn(backend, [], {
      env: {
        GIT_PROJECT_ROOT: path.dirname(dir),
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method!,
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
      },
    });
    req.pipe(cgi.stdin);
    let buf = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      headersDone = true;
      for (const line of buf.subarray(0, end).toString().split("\r\n")) {
        const [k, ...v] = line.split(":");
        if (k.toLowerCase() === "status") res.statusCode = parseInt(v.join(":"), 10);
        else res.setHeader(k, v.join(":").trim());
      }
      res.write(buf.subarray(end + 4));
    });
    cgi.on("close", () => res.end());
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      resolve({ url: `http://127.0.0.1:${port}/${path.basename(dir)}`, close: () => server.close() });
    }),
  );
}

async function measure(label: string, repo: string) {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-cache-"));
  const cfg = gitRepoEntry("bench", repo);
  let t = Date.now();
  const cold = await resolveSource(cfg, cache);
  const coldMs = Date.now() - t;
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    t = performance.now();
    const warm = await resolveSource(cfg, cache);
    times.push(performance.now() - t);
    if (warm.fetched || warm.commit !== cold.commit) throw new Error("warm run fetched: the cache is not reused");
  }
  times.sort((a, b) => a - b);
  const r = {
    remote: label,
    coldMs,
    warmMedianMs: Math.round(times[RUNS / 2]),
    warmP90Ms: Math.round(times[Math.floor(RUNS * 0.9)]),
    warmMaxMs: Math.round(times[RUNS - 1]),
  };
  fs.rmSync(cache, { recursive: true, force: true });
  return r;
}

async function main() {
  const dir = makeRepo();
  const server = await serve(dir);
  try {
    const results = [await measure("file://", `file://${dir}`), await measure("http://127.0.0.1 (git http-backend)", server.url)];
    console.log("remote | cold ms | warm median ms | warm p90 ms | warm max ms");
    for (const r of results) console.log(`${r.remote} | ${r.coldMs} | ${r.warmMedianMs} | ${r.warmP90Ms} | ${r.warmMaxMs}`);
    console.log(`goal: warm resolution of an unchanged remote under 300 ms`);
    fs.mkdirSync(path.join(__dirname, "results"), { recursive: true });
    fs.writeFileSync(path.join(__dirname, "results", "git.json"), JSON.stringify({ runs: RUNS, results }, null, 2));
  } finally {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const SPEC = { usage: "npm run bench:git", summary: "Warm resolution of an unchanged git remote, over file:// and smart HTTP on loopback.", options: {} };
runMain(SPEC, async () => {
  parseCommand(process.argv.slice(2), SPEC);
  await main();
});
