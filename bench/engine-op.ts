/**
 * One operation of `npm run bench -- engine`, in a process of its own as `npm run up` runs one: the
 * parent (bench/engine.ts) starts it per phase and reads its peak memory and that of the CLI and the
 * provider it starts. argv[2]: the phase as JSON (EngineOp). Prints one JSON line: the wall time, the
 * program's timings and the engine's changes.
 */
import * as path from "node:path";
import * as ops from "../automation/operations";
import { decideShards } from "../automation/shards/inputs";
import { syntheticClusters, syntheticRaw, writeStackFile } from "./support";
import { renderStatusPage } from "../automation/reports/status-page";
import { syntheticReport } from "./page";

export interface EngineOp {
  /**
   * "noop": an up with nothing to change that runs the engine and records the stack's inputs, as a shard's up
   * does; "noop-decided": the same up as a sharded run decides it, left out when those inputs are unchanged.
   */
  op: "up" | "preview" | "noop" | "noop-decided";
  work: string;
  repo: string;
  clusters: number;
  /** Bundles per cluster in `repo` (the status page's size). */
  bundles: number;
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
  // The stack file, as an operator writes it and the command line reads it.
  const stacks = path.join(p.work, "stacks");
  writeStackFile(
    stacks,
    "bench",
    syntheticRaw(p.repo, clusters, {
      renderDir: path.join(p.work, "render"),
      gitRepos: [{ name: "bench", repo: p.repo, paths: ["b*"], targets: [{ name: "all", clusterSelector: selector }] }],
    }),
  );
  // What the shard runner's decision reads (automation/shards/inputs.ts): this stack file, this state.
  const stateDir = path.join(p.work, "state");
  Object.assign(process.env, { PULUMI_FLEET_STACKS_DIR: stacks, PULUMI_FLEET_STATE_DIR: stateDir, PULUMI_CONFIG_PASSPHRASE: "bench" });
  let program = { planMs: 0, registerMs: 0 };
  const options: ops.OperationOptions = {
    stack: "bench",
    stateDir,
    stackConfigDir: stacks,
    deploy: { cacheRoot: path.join(p.work, "git") },
    onProgramTimings: (t) => (program = t),
    env: { PULUMI_CONFIG_PASSPHRASE: "bench", ...p.env },
    skipCheckpoints: p.skipCheckpoints,
  };
  const started = performance.now();
  let leftOut = false;
  let result: { changes: Record<string, number> };
  if (p.op === "preview") result = await ops.preview({ ...options, expectNoChanges: true });
  else if (p.op === "up") result = await ops.up(options);
  else {
    // As a sharded run decides for each shard (automation/shards/run.ts), this stack a shard of one.
    const [d] = await decideShards(stacks, [{ shard: "bench", stack: "bench" }], p.op === "noop-decided");
    leftOut = d.skip !== undefined;
    result = leftOut
      ? { changes: {} }
      : await ops.up({ ...options, expectNoChanges: true, deploy: { ...options.deploy, inputs: d.fingerprint, commits: d.commits } });
  }
  const ms = performance.now() - started;
  const cpu = process.cpuUsage();
  // After the operation, outside its figures: a status page of as many pairs (its report built first, the
  // benchmark's own data). This process's whole CPU (totalCpuMs) lets the parent tell the CLI's from its reaped time.
  let statusPageMs: number | undefined;
  if (p.op === "preview") {
    const status = syntheticReport(p.clusters, p.bundles);
    const t = performance.now();
    renderStatusPage(status);
    statusPageMs = Math.round(performance.now() - t);
  }
  const total = process.cpuUsage();
  process.stdout.write(
    JSON.stringify({
      ms,
      program,
      changes: result.changes,
      leftOut,
      statusPageMs,
      programCpuMs: Math.round((cpu.user + cpu.system) / 1000),
      totalCpuMs: Math.round((total.user + total.system) / 1000),
    }) + "\n",
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
