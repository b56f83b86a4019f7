/**
 * One operation on a sharded environment, as `npm run <op> -- --stack ENV` and the benchmark run it:
 * refuse out-of-date shard files, decide which shards have anything to do (automation/shards/inputs.ts;
 * up and preview without --refresh or --all-shards), run those (automation/shards/runner.ts) with the
 * inputs and commits each `up` records and deploys, and give back every shard's outcome in the
 * definition's order, left-out ones included.
 */
import { assertShardsCurrent } from "./moves";
import { decideShards, ShardDecision } from "./inputs";
import { RunShardsOptions, runShards, ShardRun } from "./runner";
import { forgetParsedStackFiles, normalizeShardFiles, ShardLayout } from "../../core/config/shard-files";
import { leftOutMetrics } from "./left-out";

export interface ShardedRunOptions {
  op: RunShardsOptions["op"];
  layout: ShardLayout;
  /** Directory of the stack files. */
  dir: string;
  parallel: number;
  /** The settings every shard runs with (refresh also decides whether shards may be left out). */
  flags: RunShardsOptions["flags"];
  allShards?: boolean;
  /** Progress lines (the left-out shards, the count). */
  note: (line: string) => void;
  line: (text: string, stream: "stdout" | "stderr") => void;
}

export async function runSharded(o: ShardedRunOptions): Promise<ShardRun[]> {
  try {
    return await runShardedOnce(o);
  } finally {
    forgetParsedStackFiles(); // what this run parsed is no later run's (core/config/shard-files.ts)
  }
}

async function runShardedOnce(o: ShardedRunOptions): Promise<ShardRun[]> {
  assertShardsCurrent(o.dir, o.layout);
  const started = Date.now();
  const all = o.layout.shards.map((s) => ({ shard: s.name, stack: s.stack }));
  const mayLeaveOut = (o.op === "up" || o.op === "preview") && !o.flags.refresh && !o.allShards;
  // An up also records each shard's inputs and deploys the commits they were computed from, the same for every shard.
  const decisions: ShardDecision[] =
    mayLeaveOut || o.op === "up" ? await decideShards(o.dir, all, mayLeaveOut) : all.map((s) => ({ ...s, fingerprint: "", commits: {} }));
  const toRun = decisions.filter((d) => !d.skip);
  const leftOut = decisions.filter((d) => d.skip);
  for (const d of leftOut) o.note(`[${d.shard}] ${d.stack} left out: ${d.skip} (--all-shards runs it anyway)`);
  // Beside the shards that run: a Pushgateway that does not answer delays no shard.
  const leftOutReported = Promise.all(
    leftOut.map((d) => leftOutMetrics(o.dir, o.op as "up" | "preview", d.stack, (m) => o.line(`[${d.shard}] ${m}`, "stderr"))),
  );
  o.note(`${o.op} of environment ${o.layout.environment}: ${toRun.length} of ${all.length} shards, ${o.parallel} at a time`);
  const ran = await runShards({
    op: o.op,
    parallel: o.parallel,
    flags: o.flags,
    line: o.line,
    // Decided here: an up records these inputs and deploys these commits; a preview does not decide again.
    shards: toRun.map((d) => ({ shard: d.shard, stack: d.stack, ...(o.op === "up" ? { deploy: { inputs: d.fingerprint, commits: d.commits } } : {}) })),
  });
  await leftOutReported;
  // A shard stack created by this run has its file rewritten by the CLI: put back in the generated form, read without a parse next time.
  for (const problem of normalizeShardFiles(o.dir, o.layout)) o.note(`warning: ${problem}`);
  return decisions.map(
    (d) =>
      ran.find((r) => r.stack === d.stack) ?? {
        shard: d.shard,
        stack: d.stack,
        exitCode: 0,
        durationMs: 0,
        finishedAt: started,
        skipped: d.skip,
        result: { ok: true, changes: {} },
      },
  );
}
