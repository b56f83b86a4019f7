/**
 * `node scripts/run-ts.js bench/history.ts [clusters=200] [ups=20] [bundles=10] [objects=10]`: what a
 * stack's file backend keeps besides its state after a first `up` and `ups` no-op ups of a synthetic
 * render-mode fleet (bench/support.ts): the bytes and files under .pulumi/history, .pulumi/backups and
 * .pulumi/stacks, and each no-op up's wall time. The history and backups grow by a full copy of the
 * state per update unless they are pruned (automation/engine/state-retention.ts). Prints a table and
 * writes bench/results/history.json.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as ops from "../automation/operations";
import { toolchain } from "../automation/engine/toolchain";
import { printTable, seconds, syntheticClusters, syntheticConfig, syntheticRepo, writeResult } from "./support";

/** Bytes and files under a directory (0 when it does not exist). */
function usage(dir: string): { bytes: number; files: number } {
  if (!fs.existsSync(dir)) return { bytes: 0, files: 0 };
  let bytes = 0;
  let files = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    bytes += fs.statSync(path.join(e.parentPath, e.name)).size;
    files++;
  }
  return { bytes, files };
}

export async function historyBench(clusters: number, ups: number, bundles: number, objects: number): Promise<void> {
  toolchain();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-history-"));
  const repo = syntheticRepo(bundles, objects);
  const state = path.join(work, "state");
  const options: ops.OperationOptions = {
    stack: "bench",
    stateDir: state,
    stackConfigDir: work,
    config: syntheticConfig(repo, syntheticClusters(clusters), { renderDir: path.join(work, "render") }),
    deploy: { cacheRoot: path.join(work, "git") },
    env: { PULUMI_CONFIG_PASSPHRASE: "bench" },
  };
  try {
    await ops.up(options);
    const times: number[] = [];
    for (let i = 0; i < ups; i++) {
      const t = performance.now();
      await ops.up({ ...options, expectNoChanges: true });
      times.push(performance.now() - t);
    }
    const kept = Object.fromEntries(["history", "backups", "stacks"].map((k) => [k, usage(path.join(state, ".pulumi", k))]));
    const mib = (b: number) => +(b / 1024 / 1024).toFixed(2);
    const row = {
      clusters,
      bundles,
      objects,
      updates: ups + 1,
      "history MiB": mib(kept.history.bytes),
      "history files": kept.history.files,
      "backups MiB": mib(kept.backups.bytes),
      "backups files": kept.backups.files,
      "state MiB": mib(kept.stacks.bytes),
      "no-op up s (median)": seconds([...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? 0),
    };
    printTable([row]);
    console.log(`written ${writeResult("history", { row, kept, noopUpMs: times.map(Math.round) })}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(repo, { recursive: true, force: true });
  }
}

// Run directly (scripts/run-ts.js puts the entry point in argv[1]).
if (path.resolve(process.argv[1] ?? "") === __filename) {
  const [clusters = 200, ups = 20, bundles = 10, objects = 10] = process.argv.slice(2).map(Number);
  historyBench(clusters, ups, bundles, objects).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
