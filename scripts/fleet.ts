/**
 * `npm run preview|up|destroy|refresh|status|cancel -- --stack NAME [options]`, and `npm start` (= up of
 * the local stack): the operations of automation/operations.ts on one environment's stack, with
 * per-cluster progress, a final summary (a table of the clusters with something to say), deploy events
 * after up/destroy, and a non-zero exit on failure (automation/reports/exit-codes.ts).
 * `--help` lists the options; an option that does not apply to the operation is an error.
 */
import { guarded } from "../automation/engine/process-guard";
import { stopOnSignals } from "../core/base/stop-signal";
import { FailureContext } from "../automation/reports/error-report";
import { Operation, OPERATIONS, runOperation } from "../automation/run-operation";
import { RetrySelector, retrySelector } from "../core/plan/stalled";
import { CommandSpec, parseCommand, required, runMain, UsageError } from "./cli";
import { decideAlone, operationFlagsOf, runAllShards, shardLayoutOf, shardStack } from "./fleet-shards";

const SPEC = {
  usage: `npm run <${OPERATIONS.join("|")}> -- --stack NAME [options]`,
  summary: "Runs one operation on one environment's stack (stacks/Pulumi.NAME.yaml) with the engine built in tools/.",
  positionals: ["OPERATION"],
  options: {
    stack: { type: "string", value: "NAME", help: "the environment: stacks/Pulumi.NAME.yaml (required)" },
    "expect-no-changes": { type: "boolean", help: "preview, up, refresh: fail if anything would change (a CI drift gate)" },
    refresh: { type: "boolean", help: "preview, up: refresh from the clusters first" },
    "summary-md": { type: "string", value: "FILE", help: "preview: write the pull-request summary (Markdown) to FILE" },
    "events-json": { type: "string", value: "FILE", help: "up, destroy: also write the deploy events as JSON lines to FILE" },
    json: { type: "boolean", help: "status: print JSON instead of the table" },
    html: { type: "string", value: "FILE", help: "preview, status: also write the fleet as one self-contained HTML page (clusters x bundles) to FILE" },
    quiet: { type: "boolean", help: "show no progress (warnings, the summary and errors are still printed)" },
    verbose: {
      type: "boolean",
      help: "also stream the engine's own output (every step, the preview's diff) and the toolchain's details (what the build scripts reused, and where); PULUMI_FLEET_VERBOSE=1 shows the toolchain's",
    },
    outputs: { type: "boolean", help: "up: also print the stack's outputs (JSON), which the summary leaves out" },
    "skip-checkpoints": {
      type: "boolean",
      help: "write the state once at the end (the default on file and PostgreSQL backends, where the crash journal is kept)",
    },
    checkpoints: { type: "boolean", help: "write the state after every step, as the engine does by default (slower: it grows with the square of the stack)" },
    "wait-lock": { type: "boolean", help: "wait for another update of the stack to finish instead of failing at once" },
    "force-unlock": { type: "boolean", help: "remove the stack's lock even if its holder is alive or on another host (you checked it is gone)" },
    shard: { type: "string", value: "NAME", help: "a sharded environment: run this one shard only (default: every shard)" },
    parallel: { type: "string", value: "N", help: "a sharded environment: how many shards run at a time (default 2)" },
    "all-shards": {
      type: "boolean",
      help: "a sharded environment's up or preview: run every shard, also those whose inputs are unchanged since their last successful up",
    },
    retry: { type: "boolean", help: "up: apply every Stalled bundle deployment again (each gets stalledAfter fresh tries)" },
    "retry-pair": {
      type: "string",
      multiple: true as const,
      value: "CLUSTER/GITREPO/BUNDLE",
      help: "up: apply this Stalled bundle deployment again (repeatable)",
    },
    partition: {
      type: "string",
      value: "NAME",
      help: "up, preview: deploy each rollout's partitions up to and including NAME, hold the later ones (an approval step between partitions)",
    },
  },
} satisfies CommandSpec<Record<string, { type: "string" | "boolean"; help: string; value?: string; multiple?: boolean }>>;

/** Options that only make sense for some operations; the rest apply to all. */
const ONLY_FOR: Partial<Record<keyof typeof SPEC.options, Operation[]>> = {
  "expect-no-changes": ["preview", "up", "refresh"],
  refresh: ["preview", "up"],
  "summary-md": ["preview"],
  "events-json": ["up", "destroy"],
  json: ["status"],
  outputs: ["up"],
  html: ["preview", "status"],
  "skip-checkpoints": ["up", "destroy", "refresh"],
  checkpoints: ["up", "destroy", "refresh"],
  "wait-lock": ["up", "destroy", "refresh"],
  "force-unlock": ["up", "destroy", "refresh", "cancel"],
  "all-shards": ["up", "preview"],
  partition: ["up", "preview"],
  retry: ["up"],
  "retry-pair": ["up"],
};

type Values = ReturnType<typeof parseCommand<typeof SPEC.options>>["values"];

function parse(argv: string[]): { op: Operation; stack: string; v: Values } {
  const { values: v, positionals } = parseCommand(argv, SPEC);
  const op = positionals[0] as Operation;
  if (!OPERATIONS.includes(op)) throw new UsageError(`unknown operation '${op}' (one of ${OPERATIONS.join(", ")})`);
  for (const [name, ops_] of Object.entries(ONLY_FOR)) {
    if (v[name as keyof Values] !== undefined && !ops_!.includes(op)) throw new UsageError(`--${name} does not apply to ${op} (only ${ops_!.join(", ")})`);
  }
  if (v.checkpoints && v["skip-checkpoints"]) throw new UsageError("--checkpoints and --skip-checkpoints contradict each other");
  return { op, stack: required(v.stack, "stack", "there is no default environment: name the one to operate on"), v };
}

/** `--retry` / `--retry-pair` as the deploy options' selector (core/plan/stalled.ts). */
function retryOf(v: Values): { retry?: RetrySelector } {
  const retry = retrySelector(v.retry, v["retry-pair"]);
  return retry ? { retry } : {};
}

/** What is running, for the failure's text and log (runMain). */
const running: FailureContext = {};

async function main(): Promise<void> {
  const parsed = parse(process.argv.slice(2));
  Object.assign(running, { op: parsed.op, stack: parsed.stack });
  // SIGINT/SIGTERM stop the operation at any point; its renderer batches also run under proc-guard (they end if this process dies).
  stopOnSignals({ wrapSpawn: guarded });
  const { op, v } = parsed;
  const layout = shardLayoutOf(parsed.stack);
  if (!layout && (v.shard || v.parallel))
    throw new UsageError(`--shard and --parallel apply to a sharded environment; stacks/Pulumi.${parsed.stack}.yaml has no shards: rule`);
  if (layout && !v.shard && v.partition !== undefined)
    throw new UsageError("--partition applies to one stack: in a sharded environment, run it per shard with --shard NAME");
  if (layout && !v.shard && (v.retry || v["retry-pair"]))
    throw new UsageError("--retry applies to one stack: in a sharded environment, run it per shard with --shard NAME");
  if (layout && !v.shard) return runAllShards(op, layout, v);
  const stack = layout ? shardStack(layout, v.shard!) : parsed.stack;
  running.stack = stack;
  const decided = await decideAlone(op, stack, v, (m) => console.error(m));
  if (decided === "left out") return;
  await runOperation(
    {
      op,
      stack,
      deploy: { ...(v.partition !== undefined ? { partition: v.partition } : {}), ...retryOf(v), ...decided },
      flags: {
        ...operationFlagsOf(v),
        json: v.json,
        outputs: v.outputs,
        html: v.html,
        summaryMd: v["summary-md"],
        eventsJson: v["events-json"],
      },
    },
    running,
  );
}

runMain(SPEC, main, () => running);
