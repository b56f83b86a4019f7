/**
 * One operation of `npm run bench -- engine`, in a process of its own as `npm run up` runs one: the
 * parent (bench/engine.ts) starts it per phase and reads its peak memory and that of the CLI and the
 * provider it starts. argv[2]: the phase as JSON (EngineOp). Prints one JSON line: the wall time, the
 * program's timings and the engine's changes.
 */
import * as path from "node:path";
import * as ops from "../automation/operations";
import { syntheticClusters, syntheticConfig } from "./support";

export interface EngineOp {
  op: "up" | "preview" | "noop";
  work: string;
  repo: string;
  clusters: number;
  /** The value of the `group` label (0 to 19: 5% of the clusters each) the GitRepo's target leaves out: a target edit. */
  leaveOutGroup?: string;
  skipCheckpoints: boolean;
  env: Record<string, string>;
}

/** The clusters' `group` label: 20 groups, so one group is 5% of the fleet. */
export const GROUPS = 20;

async function main(): Promise<void> {
  const p = JSON.parse(process.argv[2]) as EngineOp;
  const clusters = syntheticClusters(p.clusters, (i) => ({ labels: { env: "bench", shard: String(i % 10), group: String(i % GROUPS) } }));
  const selector = p.leaveOutGroup
    ? { matchLabels: { env: "bench" }, matchExpressions: [{ key: "group", operator: "NotIn", values: [p.leaveOutGroup] }] }
    : { matchLabels: { env: "bench" } };
  const config = syntheticConfig(p.repo, clusters, {
    renderDir: path.join(p.work, "render"),
    gitRepos: [{ name: "bench", repo: p.repo, paths: ["b*"], targets: [{ name: "all", clusterSelector: selector }] }],
  });
  let program = { planMs: 0, registerMs: 0 };
  const options: ops.OperationOptions = {
    stack: "bench",
    stateDir: path.join(p.work, "state"),
    stackConfigDir: p.work,
    config,
    deploy: { cacheRoot: path.join(p.work, "git") },
    onProgramTimings: (t) => (program = t),
    env: { PULUMI_CONFIG_PASSPHRASE: "bench", ...p.env },
    skipCheckpoints: p.skipCheckpoints,
  };
  const started = performance.now();
  const result =
    p.op === "preview"
      ? await ops.preview({ ...options, expectNoChanges: true })
      : await ops.up({ ...options, ...(p.op === "noop" ? { expectNoChanges: true } : {}) });
  const ms = performance.now() - started;
  const cpu = process.cpuUsage();
  process.stdout.write(JSON.stringify({ ms, program, changes: result.changes, programCpuMs: Math.round((cpu.user + cpu.system) / 1000) }) + "\n");
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
