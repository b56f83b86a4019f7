/**
 * `npm run preview|up|destroy|refresh|status|cancel -- --stack NAME [options]`, and `npm start` (= up of
 * the local stack): the operations of automation/operations.ts on one environment's stack, with the
 * engine's live output, a final summary, deploy events after up/destroy, and a non-zero exit on failure.
 * `--help` lists the options; an option that does not apply to the operation is an error.
 */
import * as fs from "node:fs";
import { DeployEvent, formatDeployEvent } from "../automation/reports/deploy-events";
import { rolloutLines } from "../automation/reports/rollout-report";
import * as ops from "../automation/operations";
import { Progress } from "../automation/reports/progress";
import { guarded } from "../automation/engine/process-guard";
import { formatStatusTable } from "../automation/reports/status";
import { renderPreviewPage, renderStatusPage } from "../automation/reports/status-page";
import { stopOnSignals } from "../core/stop-signal";
import { FailureContext, userText } from "../automation/reports/error-report";
import { CommandSpec, parseCommand, required, runMain, UsageError } from "./cli";
import { decideAlone, runAllShards, shardLayoutOf, shardStack, writeResult } from "./fleet-shards";

const OPERATIONS = ["preview", "up", "destroy", "refresh", "status", "cancel"] as const;
type Operation = (typeof OPERATIONS)[number];

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
    quiet: { type: "boolean", help: "do not stream the engine's output or show progress" },
    verbose: { type: "boolean", help: "also show the toolchain's details (what the build scripts reused, and where); PULUMI_FLEET_VERBOSE=1 does the same" },
    "skip-checkpoints": { type: "boolean", help: "write the state once at the end (the default on file and PostgreSQL backends, where the crash journal is kept)" },
    checkpoints: { type: "boolean", help: "write the state after every step, as the engine does by default (slower: it grows with the square of the stack)" },
    "wait-lock": { type: "boolean", help: "wait for another update of the stack to finish instead of failing at once" },
    "force-unlock": { type: "boolean", help: "remove the stack's lock even if its holder is alive or on another host (you checked it is gone)" },
    shard: { type: "string", value: "NAME", help: "a sharded environment: run this one shard only (default: every shard)" },
    parallel: { type: "string", value: "N", help: "a sharded environment: how many shards run at a time (default 2)" },
    "all-shards": { type: "boolean", help: "a sharded environment's up or preview: run every shard, also those whose inputs are unchanged since their last successful up" },
    "result-json": { type: "string", value: "FILE", help: "write the result as JSON to FILE (how a sharded run collects its shards' results)" },
    inputs: { type: "string", value: "FINGERPRINT", help: "up: record this fingerprint of the inputs as the stack output `inputs` (set by a sharded run)" },
    partition: { type: "string", value: "NAME", help: "up, preview: deploy each rollout's partitions up to and including NAME, hold the later ones (an approval step between partitions)" },
    commits: { type: "string", value: "JSON", help: "up: deploy these commits ({\"<gitRepo>\": \"<sha>\"}) instead of resolving branches again (set by a sharded run)" },
  },
} satisfies CommandSpec<Record<string, { type: "string" | "boolean"; help: string; value?: string }>>;

/** Options that only make sense for some operations; the rest apply to all. */
const ONLY_FOR: Partial<Record<keyof typeof SPEC.options, Operation[]>> = {
  "expect-no-changes": ["preview", "up", "refresh"],
  refresh: ["preview", "up"],
  "summary-md": ["preview"],
  "events-json": ["up", "destroy"],
  json: ["status"],
  html: ["preview", "status"],
  "skip-checkpoints": ["up", "destroy", "refresh"],
  checkpoints: ["up", "destroy", "refresh"],
  "wait-lock": ["up", "destroy", "refresh"],
  "force-unlock": ["up", "destroy", "refresh", "cancel"],
  "all-shards": ["up", "preview"],
  inputs: ["up"],
  commits: ["up"],
  partition: ["up", "preview"],
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

function report(events: DeployEvent[], file?: string): void {
  for (const e of events) console.log(formatDeployEvent(e));
  if (file) fs.writeFileSync(file, events.map((e) => JSON.stringify({ time: new Date().toISOString(), ...e })).join("\n") + (events.length ? "\n" : ""));
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
  if (!layout && (v.shard || v.parallel)) throw new UsageError(`--shard and --parallel apply to a sharded environment; stacks/Pulumi.${parsed.stack}.yaml has no shards: rule`);
  if (layout && !v.shard && v.partition !== undefined) throw new UsageError("--partition applies to one stack: in a sharded environment, run it per shard with --shard NAME");
  if (layout && !v.shard) return runAllShards(op, layout, v);
  const stack = layout ? shardStack(layout, v.shard!) : parsed.stack;
  running.stack = stack;
  const decided = await decideAlone(op, stack, v, (m) => console.error(m));
  if (decided === "left out") return;
  const args = { op, stack, eventsJson: v["events-json"], summaryMd: v["summary-md"], json: v.json ?? false, html: v.html };
  // Per-cluster progress on stderr once a run is long: redrawn in place on a terminal, a line now and then elsewhere.
  const progress = op === "cancel" || v.quiet ? undefined : new Progress(op, process.stderr);
  const track = async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } finally {
      progress?.finish();
    }
  };
  const options: ops.OperationOptions = {
    stack, expectNoChanges: v["expect-no-changes"], refresh: v.refresh, skipCheckpoints: v.checkpoints ? false : v["skip-checkpoints"],
    waitLock: v["wait-lock"], forceUnlock: v["force-unlock"],
    onOutput: v.quiet || (op === "status" && v.json) ? undefined : (s) => (progress ? progress.output(s) : process.stdout.write(s)),
    onEvent: progress?.onEvent,
    deploy: { ...(v.inputs ? { inputs: v.inputs } : {}), ...(v.commits ? { commits: parseCommits(v.commits) } : {}), ...(v.partition !== undefined ? { partition: v.partition } : {}), ...decided },
  };
  const page = (file: string | undefined, html: () => string) => {
    if (!file) return;
    fs.writeFileSync(file, html());
    console.error(`wrote the ${op} page to ${file}`);
  };
  const done = (r: ops.OperationResult) =>
    console.log(`\n${args.op} of stack ${args.stack} succeeded in ${(r.durationMs / 1000).toFixed(1)} s: ${JSON.stringify(r.changes)}`);
  try {
    switch (args.op) {
      case "preview": {
        const r = await track(ops.preview(options));
        if (args.summaryMd) fs.writeFileSync(args.summaryMd, r.summaryMarkdown);
        // A broken bundle fails the preview (a pull request's check), after everything else was shown.
        const failed = r.failures.length ? `preview of stack ${args.stack}: ${ops.failuresNote(r.failures)}` : undefined;
        writeResult(v["result-json"], { ok: !failed, ...(failed ? { error: failed } : {}), changes: r.changes, summaryMarkdown: r.summaryMarkdown, prunes: r.prunes });
        page(args.html, () => renderPreviewPage(r));
        for (const p of r.prunes) console.log(`Will prune bundle ${p.bundle} from ${p.cluster} (${p.objects} objects): ${p.reason.replaceAll("`", "")}`);
        for (const line of rolloutLines(r.state)) console.log(line.replace(/^bundle/, "Bundle"));
        if (r.held.length) console.log(`This update: ${ops.heldNote(r.held)}`);
        if (failed) throw new ResultWritten(failed);
        done(r);
        break;
      }
      case "up":
      case "destroy": {
        const r = await track(args.op === "up" ? ops.up(options) : ops.destroy(options));
        console.log("");
        // A sharded run reports every shard's events once, merged (runAllShards).
        if (!v["result-json"]) report(r.events, args.eventsJson);
        writeResult(v["result-json"], { ok: true, changes: r.changes, events: r.events });
        if (r.held.length) console.log(ops.heldNote(r.held));
        done(r);
        break;
      }
      case "refresh": {
        const r = await track(ops.refresh(options));
        writeResult(v["result-json"], { ok: true, changes: r.changes });
        done(r);
        break;
      }
      case "cancel": {
        const removed = await ops.cancel(options);
        console.log(removed.length ? removed.map((h) => `removed the lock of stack ${stack} held by ${h}`).join("\n") : `stack ${stack} is not locked`);
        writeResult(v["result-json"], { ok: true });
        break;
      }
      case "status": {
        const r = await track(ops.status(options));
        page(args.html, () => renderStatusPage(r));
        writeResult(v["result-json"], { ok: true, status: r });
        process.stdout.write(args.json ? JSON.stringify(r, null, 2) + "\n" : "\n" + formatStatusTable(r));
        break;
      }
    }
  } catch (err) {
    if (err instanceof ResultWritten) throw err;
    if (err instanceof ops.OperationError) report(err.events, args.eventsJson);
    writeResult(v["result-json"], { ok: false, error: userText(err, running).replace(/^error: /, ""), events: err instanceof ops.OperationError ? err.events : [] });
    throw err;
  }
}

/** A failure whose result (--result-json) was already written whole. */
class ResultWritten extends Error {}

function parseCommits(text: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--commits: not JSON: ${text}`);
  }
  if (!parsed || typeof parsed !== "object" || Object.values(parsed).some((c) => typeof c !== "string")) throw new UsageError("--commits: must map GitRepo names to commits");
  return parsed as Record<string, string>;
}

runMain(SPEC, main, () => running);
