/**
 * The sharded side of `npm run <op> -- --stack ENV` (scripts/fleet.ts): a sharded environment's run
 * over its shards with one merged report, and a shard's stack run on its own deciding, as the sharded
 * run does, whether it has anything to do (automation/shards/inputs.ts).
 */
import * as fs from "node:fs";
import { formatDeployEvent } from "../automation/reports/deploy-events";
import { failedShards, onlyUnreachable, shardsError, mergeEvents, mergeStatus, mergeSummaries } from "../automation/shards/reports";
import { decideShards } from "../automation/shards/inputs";
import { runSharded } from "../automation/shards/run";
import { leftOutMetrics } from "../automation/shards/left-out";
import { stacksDir } from "../automation/engine/stack";
import { formatStatusTable } from "../automation/reports/status";
import { renderStatusPage } from "../automation/reports/status-page";
import { readShardLayout, ShardLayout, shardOfFile, stackFilePath } from "../core/config/shard-files";
import { Operation } from "../automation/run-operation";
import { UsageError } from "./cli";

/** The options of fleet.ts these functions read. */
export interface ShardFlags {
  refresh?: boolean;
  "all-shards"?: boolean;
  json?: boolean;
  html?: string;
  parallel?: string;
  "summary-md"?: string;
  "events-json"?: string;
  "expect-no-changes"?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  "skip-checkpoints"?: boolean;
  checkpoints?: boolean;
  "wait-lock"?: boolean;
  "force-unlock"?: boolean;
}

/**
 * A shard's stack run on its own (a CI matrix job, --shard) is left out or recorded as in a sharded run
 * (automation/shards/inputs.ts).
 */
export async function decideAlone(
  op: string,
  stack: string,
  v: ShardFlags,
  warn: (message: string) => void,
): Promise<{ inputs?: string; commits?: Record<string, string> } | "left out"> {
  const of = shardOfFile(stacksDir(), stack);
  if (!of || (op !== "up" && op !== "preview")) return {};
  const [d] = await decideShards(stacksDir(), [{ shard: of.name, stack }], !v.refresh && !v["all-shards"]);
  if (!d.skip) return op === "up" ? { inputs: d.fingerprint, commits: d.commits } : {};
  warn(`${stack} left out: ${d.skip}; nothing to ${op} (--all-shards runs it anyway)`);
  await leftOutMetrics(stacksDir(), op, stack, warn);
  if (op === "preview" && v["summary-md"]) fs.writeFileSync(v["summary-md"], `## pulumi-fleet preview of stack \`${stack}\`\n\nNot previewed: ${d.skip}.\n`);
  if (op === "up" && v["events-json"]) fs.writeFileSync(v["events-json"], "");
  return "left out";
}

/** The command line's settings every operation takes, a shard's run and a single stack's alike. */
export function operationFlagsOf(v: ShardFlags) {
  return {
    expectNoChanges: v["expect-no-changes"],
    refresh: v.refresh,
    skipCheckpoints: v.checkpoints ? false : v["skip-checkpoints"],
    waitLock: v["wait-lock"],
    forceUnlock: v["force-unlock"],
    quiet: v.quiet,
    engineOutput: v.verbose,
  };
}

/** The environment's shard layout when stacks/Pulumi.<stack>.yaml is a sharded definition. */
export function shardLayoutOf(stack: string): ShardLayout | undefined {
  const dir = stacksDir();
  if (!fs.existsSync(stackFilePath(dir, stack)) || shardOfFile(dir, stack)) return undefined;
  return readShardLayout(dir, stack);
}

export function shardStack(layout: ShardLayout, name: string): string {
  const s = layout.shards.find((x) => x.name === name);
  if (!s) throw new UsageError(`--shard ${name}: environment ${layout.environment} has the shards ${layout.shards.map((x) => x.name).join(", ")}`);
  return s.stack;
}

export async function runAllShards(op: Operation, layout: ShardLayout, v: ShardFlags): Promise<void> {
  if (v.html && op === "preview") throw new UsageError("--html of a sharded environment's preview is not available yet; use it with --shard NAME");
  const parallel = v.parallel === undefined ? 2 : Number(v.parallel);
  if (!Number.isInteger(parallel) || parallel < 1) throw new UsageError(`--parallel must be a whole number of at least 1 (got ${v.parallel})`);
  const started = Date.now();
  const runs = await runSharded({
    op,
    layout,
    dir: stacksDir(),
    parallel,
    allShards: v["all-shards"],
    flags: operationFlagsOf(v),
    // With --json, stdout carries the merged JSON only: the shards' own output goes to stderr.
    note: (l) => console.error(l),
    line: (text, stream) => (stream === "stdout" && !v.json ? process.stdout : process.stderr).write(text + "\n"),
  });
  const failed = failedShards(runs);
  if (op === "preview" && v["summary-md"]) fs.writeFileSync(v["summary-md"], mergeSummaries(layout.environment, runs));
  if (op === "up" || op === "destroy") {
    const events = mergeEvents(runs);
    console.log("");
    for (const e of events) console.log(`[${e.shard}] ${formatDeployEvent(e)}`);
    if (v["events-json"])
      fs.writeFileSync(v["events-json"], events.map((e) => JSON.stringify({ time: new Date().toISOString(), ...e })).join("\n") + (events.length ? "\n" : ""));
  }
  if (op === "status") {
    const merged = mergeStatus(
      layout.environment,
      runs.flatMap((r) => (r.result?.status ? [r.result.status] : [])),
    );
    if (v.html) fs.writeFileSync(v.html, renderStatusPage(merged));
    process.stdout.write(v.json ? JSON.stringify(merged, null, 2) + "\n" : "\n" + formatStatusTable(merged));
  }
  const say = v.json ? (l: string) => console.error(l) : (l: string) => console.log(l);
  say("");
  for (const r of runs)
    say(
      `${r.stack}: ${failed.includes(r) ? (onlyUnreachable(r) ? "a cluster could not be read" : "FAILED") : r.skipped ? `left out (${r.skipped})` : "ok"} in ${(r.durationMs / 1000).toFixed(1)} s${r.result?.changes ? ` ${JSON.stringify(r.result.changes)}` : ""}`,
    );
  say(
    `${op} of environment ${layout.environment}: ${runs.length - failed.length}/${runs.length} shards succeeded in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  const error = shardsError(op, layout.environment, failed);
  if (error) throw error;
}
