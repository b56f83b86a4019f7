/**
 * Shared by the benchmark scripts: synthetic fleets (a plain-directory repository of raw YAML
 * bundles, clusters that all match), result files, and tables. Benchmarks print figures; they never
 * assert timings (tests do not time things).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { ClusterConfig, parseStackConfig, StackConfig } from "../core/config/stack";
import { PROJECT_DIR } from "../core/base/project-dir";
import { stackFilePath } from "../core/config/shard-files";

export const RESULTS_DIR = path.join(__dirname, "results");

/** A directory with `bundles` bundle folders of `objects` ConfigMaps each (a GitRepo reads it in place). */
export function syntheticRepo(bundles: number, objects: number, namespacePrefix = "bench"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-repo-"));
  for (let b = 0; b < bundles; b++) {
    const bdir = path.join(dir, `b${String(b).padStart(3, "0")}`);
    fs.mkdirSync(bdir);
    fs.writeFileSync(path.join(bdir, "fleet.yaml"), `defaultNamespace: ${namespacePrefix}-${b}\n`);
    const docs = Array.from(
      { length: objects },
      (_, o) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${o}\ndata:\n  bundle: "b${b}"\n  object: "${o}"\n`,
    );
    fs.writeFileSync(path.join(bdir, "objects.yaml"), docs.join("---\n"));
  }
  return dir;
}

/** `n` clusters named c-000..., labelled env=bench, each with optional extra fields. */
export function syntheticClusters(n: number, extra: (i: number) => Partial<ClusterConfig> = () => ({})): ClusterConfig[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `c-${String(i).padStart(3, "0")}`,
    labels: { env: "bench", shard: String(i % 10) },
    annotations: {},
    templateValues: {},
    deleteUnreachable: false,
    ...extra(i),
  }));
}

/** The synthetic fleet's settings as a stack file writes them (its `pulumi-fleet:` keys without the prefix). */
export function syntheticRaw(repo: string, clusters: ClusterConfig[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    clusters: clusters.map(({ name, labels, kubeconfig }) => ({ name, labels, ...(kubeconfig ? { kubeconfig } : {}) })),
    gitRepos: [{ name: "bench", repo, paths: ["b*"], targets: [{ name: "all", clusterSelector: { matchLabels: { env: "bench" } } }] }],
    ...extra,
  };
}

/** One GitRepo (the synthetic repository, every bundle) targeting every cluster, through the real config parser. */
export function syntheticConfig(repo: string, clusters: ClusterConfig[], extra: Record<string, unknown> = {}): StackConfig {
  return parseStackConfig(syntheticRaw(repo, clusters, extra), "bench (synthetic)", PROJECT_DIR);
}

/** Writes `raw` as stacks/Pulumi.<name>.yaml in `dir`, as an operator would. */
export function writeStackFile(dir: string, name: string, raw: Record<string, unknown>): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(stackFilePath(dir, name), YAML.stringify({ config: Object.fromEntries(Object.entries(raw).map(([k, v]) => [`pulumi-fleet:${k}`, v])) }));
}

export function writeResult(name: string, data: unknown): string {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ node: process.version, cpus: os.cpus().length, at: new Date().toISOString(), ...(data as object) }, null, 2));
  return file;
}

export function printTable(rows: Record<string, string | number>[]): void {
  if (!rows.length) return;
  // Every row's columns, in the order they first appear (a row may lack some: shown empty).
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = [cols, ...rows.map((r) => cols.map((c) => (c in r ? String(r[c]) : "")))];
  const widths = cols.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  for (const [i, r] of cells.entries()) {
    console.log(r.map((c, j) => c.padEnd(widths[j])).join(" | "));
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  }
}

let options: Record<string, string | boolean | undefined> = {};
/** Set once by bench/run.ts from its strictly parsed command line. */
export function setBenchOptions(values: Record<string, string | boolean | undefined>): void {
  options = values;
}
export function arg(name: string): string | undefined {
  const v = options[name];
  return typeof v === "string" ? v : undefined;
}
export const flag = (name: string): boolean => options[name] === true;

export const seconds = (ms: number) => +(ms / 1000).toFixed(2);

/** `--engine-env K=V,K=V`: extra engine environment for an experiment (printed with the results). */
export function engineEnvArg(): Record<string, string> {
  const text = arg("engine-env");
  if (!text) return {};
  return Object.fromEntries(
    text.split(",").map((kv) => {
      const i = kv.indexOf("=");
      if (i <= 0) throw new Error(`--engine-env: '${kv}' is not K=V`);
      return [kv.slice(0, i), kv.slice(i + 1)];
    }),
  );
}

export function bytesUnder(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .reduce((n, e) => (e.isFile() ? n + fs.statSync(path.join(e.parentPath, e.name)).size : n), 0);
}

export const mib = (bytes: number) => +(bytes / 2 ** 20).toFixed(2);

/** The stack's current checkpoint (stacks/<project>/<stack>.json), and everything else the file backend keeps (its .bak, history, backups). */
export function stateSizes(stateDir: string, stack: string): { checkpoint: number; historyAndBackups: number } {
  const dir = path.join(stateDir, ".pulumi");
  const current = fs
    .readdirSync(path.join(dir, "stacks"), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /^[^.]+\.json(\.gz)?$/.test(e.name) && e.name.startsWith(`${stack}.`));
  const checkpoint = current.reduce((n, e) => n + fs.statSync(path.join(e.parentPath, e.name)).size, 0);
  return { checkpoint, historyAndBackups: bytesUnder(dir) - checkpoint };
}
