/**
 * `npm run bench -- shards [--clusters 200] [--shards 4] [--parallel 2]`: one fleet as one stack and as
 * shards run `parallel` at a time, both through the same runner (automation/shard-runner.ts: one
 * fleet.ts process per stack), in render mode: 10 bundles x 10 ConfigMaps per cluster. Per layout: the
 * first up, a preview and a no-op up, and a target edit that prunes every bundle from 5 clusters of the
 * first shard: when that prune has landed (its stack finished) and when the whole run finished.
 * Writes bench/results/shards.json.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { runShards, ShardRun } from "../automation/shard-runner";
import { shardFileText, stackFilePath } from "../core/config/shard-files";
import { toolchain } from "../automation/toolchain";
import { arg, printTable, seconds, syntheticRepo, writeResult } from "./support";

function stackFile(dir: string, name: string, config: Record<string, unknown>): void {
  fs.writeFileSync(stackFilePath(dir, name), YAML.stringify({ config: Object.fromEntries(Object.entries(config).map(([k, v]) => [`pulumi-fleet:${k}`, v])) }));
}

export async function shardsBench(): Promise<void> {
  toolchain();
  const clusters = Number(arg("clusters") ?? 200);
  const shards = Number(arg("shards") ?? 4);
  const parallel = Number(arg("parallel") ?? 2);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-shards-"));
  const repo = syntheticRepo(10, 10);
  const stacks = path.join(work, "stacks");
  fs.mkdirSync(stacks);
  Object.assign(process.env, { PULUMI_FLEET_STACKS_DIR: stacks, PULUMI_FLEET_STATE_DIR: path.join(work, "state"), PULUMI_CONFIG_PASSPHRASE: "bench" });
  // The edit prunes every bundle from clusters 0, 4, 8, 12, 16: all in shard q0 (cluster i is in q<i mod shards>).
  const pruned = Array.from({ length: 5 }, (_, i) => String(i * shards));
  const config = (excluded: string[]) => ({
    renderDir: path.join(work, "render"), fleetVersion: "0.13.1", agent: { apiServerURL: "https://fleet.example.com" },
    clusters: Array.from({ length: clusters }, (_, i) => ({ name: `c-${String(i).padStart(3, "0")}`, labels: { env: "bench", idx: String(i), quarter: `q${i % shards}` } })),
    gitRepos: [{ name: "bench", repo, paths: ["b*"], targets: [{ name: "all", clusterSelector: { matchExpressions: [{ key: "idx", operator: "NotIn", values: excluded.length ? excluded : ["none"] }] } }] }],
  });
  const shardRule = Array.from({ length: shards }, (_, i) => ({ name: `q${i}`, clusterSelector: { matchLabels: { quarter: `q${i}` } } }));
  const write = (excluded: string[]) => {
    stackFile(stacks, "one", config(excluded));
    stackFile(stacks, "big", { ...config(excluded), shards: shardRule });
    for (const s of shardRule) fs.writeFileSync(stackFilePath(stacks, `big.${s.name}`), shardFileText(stacks, "big", s.name));
  };
  const layouts = [
    { name: "one stack", parallel: 1, stacks: [{ shard: "one", stack: "one" }] },
    { name: `${shards} shards, ${parallel} at a time`, parallel, stacks: shardRule.map((s) => ({ shard: s.name, stack: `big.${s.name}` })) },
  ];
  const rows = [];
  for (const layout of layouts) {
    write([]);
    const run = async (op: string, args: string[] = []) => {
      const started = Date.now();
      const runs = await runShards({ op, shards: layout.stacks, args: ["--quiet", ...args], parallel: layout.parallel, line: () => {} });
      const failed = runs.filter((r: ShardRun) => r.exitCode !== 0);
      if (failed.length) throw new Error(`${layout.name} ${op} failed on ${failed.map((r) => `${r.stack}: ${r.result?.error ?? r.exitCode}`).join("; ")}`);
      return { wallMs: Date.now() - started, firstLandedMs: runs[0].finishedAt - started, runs };
    };
    console.log(`${layout.name}: ${clusters} clusters x 10 bundles x 10 objects...`);
    const first = await run("up");
    const preview = await run("preview", ["--expect-no-changes"]);
    const noop = await run("up", ["--expect-no-changes"]);
    write(pruned);
    const edit = await run("up");
    const deleted = edit.runs.reduce((n, r) => n + (r.result?.changes?.delete ?? 0), 0);
    rows.push({
      layout: layout.name, firstUpS: seconds(first.wallMs), previewS: seconds(preview.wallMs), noopUpS: seconds(noop.wallMs),
      editLandedS: seconds(edit.firstLandedMs), editAllDoneS: seconds(edit.wallMs), objectsPruned: deleted,
      perStackS: edit.runs.map((r) => seconds(r.durationMs)).join(" "),
    });
  }
  const one = rows[0];
  const sharded = rows[1];
  const ratios = {
    preview: +(sharded.previewS / one.previewS).toFixed(2), noopUp: +(sharded.noopUpS / one.noopUpS).toFixed(2),
    editLanded: +(sharded.editLandedS / one.editLandedS).toFixed(2), editAllDone: +(sharded.editAllDoneS / one.editAllDoneS).toFixed(2),
  };
  printTable(rows);
  console.log(`sharded / one stack: preview ${ratios.preview}, no-op up ${ratios.noopUp}, target edit landed ${ratios.editLanded} (goal < 0.25), all shards done ${ratios.editAllDone}`);
  console.log(`wrote ${writeResult("shards", { clusters, shards, parallel, rows, ratios })}`);
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(repo, { recursive: true, force: true });
}
