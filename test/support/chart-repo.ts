/**
 * A real Helm chart repository and OCI registry on loopback (tools/fleet-render/chart-repo: Helm's SDK
 * packages, indexes and pushes; go-containerregistry's registry serves OCI), started per test suite.
 * A separate process on purpose: the pipeline calls fleet-render synchronously, so a server inside the
 * test's own event loop could never answer it.
 */
import { spawn, ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import { builtToolPath } from "../../core/base/tool-build";
import { tempDir } from "./git-fixtures";

export interface ChartRepo {
  /** http(s)://127.0.0.1:PORT */
  url: string;
  /** The Helm repository: <url>/charts, index.yaml with relative chart URLs. */
  repo: string;
  /** The OCI registry's chart namespace: oci://127.0.0.1:PORT/charts (charts at <oci>/<name>). */
  oci: string;
  /** With tls: the PEM of the server's own CA. */
  ca?: string;
  /** Publishes the charts added to the sources directory since the start (a new release). */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

export interface ChartSpec {
  name: string;
  version: string;
  templates: Record<string, string>;
  values?: string;
}

/** Writes chart source directories for chart-repo to package (into `dir` when given). */
export function chartSources(charts: ChartSpec[], dir = tempDir("pf-charts-")): string {
  charts.forEach((c) => {
    const root = path.join(dir, `${c.name}-${c.version}`);
    fs.mkdirSync(path.join(root, "templates"), { recursive: true });
    fs.writeFileSync(path.join(root, "Chart.yaml"), `apiVersion: v2\nname: ${c.name}\nversion: ${c.version}\n`);
    fs.writeFileSync(path.join(root, "values.yaml"), c.values ?? "{}\n");
    for (const [name, body] of Object.entries(c.templates)) fs.writeFileSync(path.join(root, "templates", name), body);
  });
  return dir;
}

export interface ChartRepoOptions {
  tls?: boolean;
  user?: string;
  password?: string;
  files?: string;
  /** A file that gets one JSON line {method, path, authorization} per request received. */
  log?: string;
  /** index.yaml's chart URLs are absolute, under this URL (another server). */
  chartURLBase?: string;
  /** Path -> URL answered with a 302. */
  redirects?: Record<string, string>;
}

export async function startChartRepo(chartsDir: string, opts: ChartRepoOptions = {}): Promise<ChartRepo> {
  const bin = builtToolPath("build-render.sh", "chart-repo", ["chart-repo"]);
  const args = ["--charts", chartsDir];
  if (opts.tls) args.push("--tls");
  if (opts.files) args.push("--files", opts.files);
  if (opts.user) args.push("--user", opts.user, "--password", opts.password ?? "");
  if (opts.log) args.push("--log", opts.log);
  if (opts.chartURLBase) args.push("--chart-url-base", opts.chartURLBase);
  for (const [from, to] of Object.entries(opts.redirects ?? {})) args.push("--redirect", `${from}=${to}`);
  const child: ChildProcess = spawn(bin, args, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const lines = readline.createInterface({ input: child.stdout! });
  const nextLine = () =>
    new Promise<Record<string, string>>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`chart-repo exited (${code}): ${stderr}`));
      child.once("exit", onExit);
      lines.once("line", (line) => {
        child.off("exit", onExit);
        resolve(JSON.parse(line));
      });
    });
  const ready = await nextLine();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    url: ready.url,
    repo: ready.repo,
    oci: ready.oci,
    ca: ready.caFile ? fs.readFileSync(ready.caFile, "utf8") : undefined,
    async reload() {
      const done = nextLine();
      child.kill("SIGHUP");
      await done;
    },
    async stop() {
      child.stdin!.end();
      await exited;
    },
  };
}
