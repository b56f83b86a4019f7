/**
 * `npm run bench -- decision [--clusters 1000,5000,10000] [--per-shard 50]`: the shard decision of a
 * sharded environment alone (automation/shards/inputs.ts decideShards, as `npm run up -- --stack ENV`
 * runs it first), at fleet sizes the engine benchmarks cannot reach on this machine. Render mode, 10
 * bundles x 10 ConfigMaps, `clustersPerShard`; no state, so every shard is planned and fingerprinted.
 * Each measurement is a fresh process. Two forms of the same shard files, one after the other: as
 * generated (`npm run shards -- --apply`, read back by parts, core/config/shard-files.ts), and as the
 * Pulumi CLI leaves a file when it creates the stack (reformatted, its header gone: each one parsed).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { readShardLayout, shardFileText, stackFilePath } from "../core/config/shard-files";
import { decideShards } from "../automation/shards/inputs";
import { arg, printTable, seconds, syntheticRepo, writeResult, writeStackFile } from "./support";

const CHILD = "--decision-child";

export async function decisionBench(): Promise<void> {
  const sizes = (arg("clusters") ?? "1000,5000,10000").split(",").map(Number);
  const perShard = Number(arg("per-shard") ?? 50);
  const repo = syntheticRepo(10, 10);
  const rows: Record<string, string | number>[] = [];
  for (const clusters of sizes) {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-decision-"));
    const stacks = path.join(work, "stacks");
    writeStackFile(stacks, "big", {
      renderDir: path.join(work, "render"),
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com" },
      clustersPerShard: perShard,
      clusters: Array.from({ length: clusters }, (_, i) => ({ name: `c-${String(i).padStart(5, "0")}`, labels: { env: "bench", idx: String(i) } })),
      gitRepos: [{ name: "bench", repo, paths: ["b*"], targets: [{ name: "all", clusterSelector: { matchLabels: { env: "bench" } } }] }],
    });
    const layout = readShardLayout(stacks, "big")!;
    for (const s of layout.shards) fs.writeFileSync(stackFilePath(stacks, s.stack), shardFileText(stacks, "big", s.name));
    const generated = decideInChild(stacks);
    // As the CLI rewrites a stack's file when it creates the stack: the same document, its own formatting.
    for (const s of layout.shards) {
      const file = stackFilePath(stacks, s.stack);
      fs.writeFileSync(file, YAML.stringify({ encryptionsalt: "v1:bench", ...YAML.parse(fs.readFileSync(file, "utf8")) }));
    }
    const parsed = decideInChild(stacks);
    rows.push({
      clusters,
      shards: layout.shards.length,
      "definition KiB": Math.round(fs.statSync(stackFilePath(stacks, "big")).size / 1024),
      "decision, files as generated (s)": seconds(generated),
      "decision, files as the CLI rewrote them (s)": seconds(parsed),
      ratio: +(parsed / generated).toFixed(1),
    });
    fs.rmSync(work, { recursive: true, force: true });
  }
  fs.rmSync(repo, { recursive: true, force: true });
  printTable(rows);
  console.log(`wrote ${writeResult("decision", { perShard, rows })}`);
}

/** The decision's own time in a fresh process (module loading excluded), milliseconds. */
function decideInChild(stacks: string): number {
  const r = spawnSync(process.execPath, [path.join(__dirname, "..", "scripts", "run-ts.js"), __filename, CHILD, stacks], { encoding: "utf8" });
  const m = /decided in (\d+) ms/.exec(r.stdout);
  if (r.status !== 0 || !m) throw new Error(`the decision failed: ${r.stderr || r.stdout}`);
  return Number(m[1]);
}

if (process.argv[2] === CHILD) {
  const stacks = process.argv[3];
  process.env.PULUMI_FLEET_STACKS_DIR = stacks;
  void (async () => {
    const started = Date.now();
    const layout = readShardLayout(stacks, "big")!;
    await decideShards(
      stacks,
      layout.shards.map((s) => ({ shard: s.name, stack: s.stack })),
      true,
    );
    console.log(`decided in ${Date.now() - started} ms`);
  })();
}
