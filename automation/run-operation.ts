/**
 * One operation on one stack as a person sees it: runs it (operations.ts) with the engine's live output,
 * per-cluster progress, the pages and files asked for, a final line, and hands back its outcome. The
 * CLI (scripts/fleet.ts) calls it for one stack, and each shard of a sharded run calls it in its own
 * process (automation/shards/shard-process.ts), so both print the same lines.
 */
import * as fs from "node:fs";
import * as ops from "./operations";
import { DeployOptions } from "../core/desired/options";
import { DeployEvent, formatDeployEvent } from "./reports/deploy-events";
import { rolloutLines } from "./reports/rollout-report";
import { Progress } from "./reports/progress";
import { formatStatusTable, StatusReport } from "./reports/status";
import { renderPreviewPage, renderStatusPage } from "./reports/status-page";
import { FailureContext, userText } from "./reports/error-report";
import type { Prune } from "./reports/preview-report";
import { bounded, clusterRows, clusterTable, PairOutcome, runHeadline } from "./reports/run-summary";
import { WarningsOnce } from "./reports/engine-warnings";
import { ClustersUnreachableError } from "./reports/exit-codes";
import type { StackConfig } from "../core/config/stack";
import type { RunRef } from "./runs/runs";

export const OPERATIONS = ["preview", "up", "destroy", "refresh", "status", "cancel"] as const;
export type Operation = (typeof OPERATIONS)[number];

/** What a sharded run's merged report needs of one stack's operation: its result, or its error and what changed before it. */
export interface OperationOutcome {
  ok: boolean;
  error?: string;
  changes?: Record<string, number>;
  events?: DeployEvent[];
  summaryMarkdown?: string;
  prunes?: Prune[];
  status?: StatusReport;
}

/** The command line's settings of one operation (scripts/fleet.ts), as plain data a shard's process also receives. */
export interface OperationFlags {
  expectNoChanges?: boolean;
  refresh?: boolean;
  /** true: once at the end; false: after every step; undefined: operations.ts decides. */
  skipCheckpoints?: boolean;
  waitLock?: boolean;
  forceUnlock?: boolean;
  quiet?: boolean;
  /** Stream the engine's own output (every step, the preview's diff); default: our summary only. */
  engineOutput?: boolean;
  /** up: print the stack's outputs (JSON) at the end; with engineOutput, the engine shows them too. */
  outputs?: boolean;
  /** status: JSON on stdout instead of the table. */
  json?: boolean;
  /** preview, status: the HTML page's file. */
  html?: string;
  /** preview: the pull-request summary's file. */
  summaryMd?: string;
  /** up, destroy: the deploy events' file (JSON lines). */
  eventsJson?: string;
}

export interface OperationRequest {
  op: Operation;
  stack: string;
  flags: OperationFlags;
  /** The shard runner's decisions (inputs, commits) and --partition. */
  deploy?: Pick<DeployOptions, "inputs" | "commits" | "partition">;
  /** A rollback's or redeploy's recorded settings to apply instead of the stack file's (automation/runs/rollback.ts). */
  config?: StackConfig;
  /** up: the run it is (automation/runs/runs.ts); default an ordinary up. */
  run?: RunRef;
  /** A shard of a sharded run: its deploy events are printed once, merged, by the run (shards/run.ts). */
  merged?: boolean;
  /** Receives the outcome once, also when the operation fails (then before the error is thrown). */
  outcome?: (o: OperationOutcome) => void;
}

/** How many deploy events or prunes are printed one per line; the rest are counted (the table has every cluster). */
const MAX_LISTED = 20;

function writeEvents(events: DeployEvent[], file?: string): void {
  const more = (n: number) => `… and ${n} more deploy event(s)${file ? ` (all in ${file})` : " (--events-json FILE writes them all)"}`;
  for (const line of bounded(events.map(formatDeployEvent), MAX_LISTED, more)) console.log(line);
  if (file) fs.writeFileSync(file, events.map((e) => JSON.stringify({ time: new Date().toISOString(), ...e })).join("\n") + (events.length ? "\n" : ""));
}

/** A failure whose outcome was already handed over whole. */
class OutcomeGiven extends Error {}

/** Runs the operation and prints it; throws what failed (worded by automation/reports/error-report.ts where it is caught). */
export async function runOperation(req: OperationRequest, running: FailureContext = {}): Promise<void> {
  const { op, stack, flags: f } = req;
  const give = (o: OperationOutcome) => req.outcome?.(o);
  // Per-cluster progress on stderr once a run is long: redrawn in place on a terminal, a line now and then elsewhere.
  // up and preview end with their own table of the clusters (run-summary.ts), not a line per cluster.
  const progress = op === "cancel" || f.quiet ? undefined : new Progress(op, process.stderr, { perCluster: op !== "up" && op !== "preview" });
  const track = async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } finally {
      progress?.finish();
    }
  };
  // Without the engine's output, the program's warnings are printed here, once each, at the end.
  const warnings = new WarningsOnce();
  const streamed = f.engineOutput && !f.quiet && !(op === "status" && f.json);
  const onEvent = (e: Parameters<NonNullable<ops.OperationOptions["onEvent"]>>[0]) => {
    progress?.onEvent(e);
    if (!streamed) warnings.add(e);
  };
  const warn = (restated: { message: string }[] = []) => {
    for (const line of warnings.lines(restated.map((x) => x.message))) console.error(line);
  };
  const options: ops.OperationOptions = {
    stack,
    expectNoChanges: f.expectNoChanges,
    refresh: f.refresh,
    skipCheckpoints: f.skipCheckpoints,
    waitLock: f.waitLock,
    forceUnlock: f.forceUnlock,
    onOutput: streamed ? (s) => (progress ? progress.output(s) : process.stdout.write(s)) : undefined,
    onEvent,
    onUnreachable: progress?.leftOut,
    showOutputs: f.outputs,
    deploy: { ...req.deploy },
    ...(req.config ? { config: req.config } : {}),
    ...(req.run ? { run: req.run } : {}),
  };
  const page = (file: string | undefined, html: () => string) => {
    if (!file) return;
    fs.writeFileSync(file, html());
    console.error(`wrote the ${op} page to ${file}`);
  };
  const seconds = (r: ops.OperationResult) => `${(r.durationMs / 1000).toFixed(1)} s`;
  const done = (r: ops.OperationResult) =>
    console.log(`${streamed ? "\n" : ""}${op} of stack ${stack} succeeded in ${seconds(r)}: ${JSON.stringify(r.changes)}`);
  /** up and preview: the clusters with something to say, and one line on the whole run. */
  const summary = (kind: "up" | "preview", outcomes: PairOutcome[], unreachable: ReadonlyMap<string, string>, changes?: Record<string, number>) => {
    const rows = clusterRows(outcomes, unreachable);
    for (const line of clusterTable(kind, rows)) console.log(line);
    return runHeadline(kind, rows, changes);
  };
  try {
    switch (op) {
      case "preview": {
        const r = await track(ops.preview(options));
        warn([...r.failures, ...r.held]);
        if (f.summaryMd) fs.writeFileSync(f.summaryMd, r.summaryMarkdown);
        // A broken bundle fails the preview (a pull request's check), after everything else was shown.
        // A cluster that could not be read was not previewed: the preview says so and does not pass (exit-codes.ts).
        const unread = r.unreachable.size
          ? `could not read ${unreachableText(r.unreachable)}: left out of this preview, the other clusters were previewed`
          : undefined;
        const failed = r.failures.length ? `preview of stack ${stack}: ${ops.failuresNote(r.failures)}${unread ? `\nand it ${unread}` : ""}` : undefined;
        const error = failed ?? (unread ? `preview of stack ${stack} ${unread}` : undefined);
        give({ ok: !error, ...(error ? { error } : {}), changes: r.changes, summaryMarkdown: r.summaryMarkdown, prunes: r.prunes });
        page(f.html, () => renderPreviewPage(r));
        const prunes = r.prunes.map((p) => `Will prune bundle ${p.bundle} from ${p.cluster} (${p.objects} objects): ${p.reason.replaceAll("`", "")}`);
        for (const line of bounded(prunes, MAX_LISTED, (n) => `… and ${n} more prune(s) (--summary-md FILE lists them all)`)) console.log(line);
        for (const line of rolloutLines(r.state)) console.log(line.replace(/^bundle/, "Bundle"));
        if (r.held.length) console.log(`This update: ${ops.heldNote(r.held)}`);
        const headline = summary("preview", r.outcomes, r.unreachable, r.changes);
        if (failed) throw new OutcomeGiven(failed);
        if (error) throw new ClustersUnreachableError(error, r.unreachable);
        console.log(`preview of stack ${stack} succeeded in ${seconds(r)}: ${headline}`);
        break;
      }
      case "up":
      case "destroy": {
        const r = await track(op === "up" ? ops.up(options) : ops.destroy(options));
        warn(r.held);
        if (streamed) console.log("");
        if (!req.merged) writeEvents(r.events, f.eventsJson);
        give({ ok: true, changes: r.changes, events: r.events });
        if (r.held.length) console.log(ops.heldNote(r.held));
        if (op === "destroy") {
          done(r);
          break;
        }
        const headline = summary("up", r.outcomes, new Map(), r.changes);
        // With the engine's output streamed, the engine showed them already.
        if (f.outputs && !streamed) console.log(JSON.stringify(r.outputs ?? {}, null, 2));
        console.log(`up of stack ${stack} succeeded in ${seconds(r)}: ${headline}`);
        break;
      }
      case "refresh": {
        const r = await track(ops.refresh(options));
        warn();
        give({ ok: true, changes: r.changes });
        done(r);
        break;
      }
      case "cancel": {
        const removed = await ops.cancel(options);
        console.log(removed.length ? removed.map((h) => `removed the lock of stack ${stack} held by ${h}`).join("\n") : `stack ${stack} is not locked`);
        give({ ok: true });
        break;
      }
      case "status": {
        const r = await track(ops.status(options));
        warn();
        page(f.html, () => renderStatusPage(r));
        const unread = new Map(r.clusters.flatMap((c) => (c.unreachableReason !== undefined ? [[c.cluster, c.unreachableReason] as const] : [])));
        const error = unread.size
          ? `status of stack ${stack} could not read ${unreachableText(unread)}: its pairs are shown NotReady, not observed now`
          : undefined;
        give({ ok: !error, ...(error ? { error } : {}), status: r });
        process.stdout.write(f.json ? JSON.stringify(r, null, 2) + "\n" : "\n" + formatStatusTable(r));
        // As a preview: what could be read is shown, and a cluster that could not be does not pass (exit-codes.ts).
        if (error) throw new ClustersUnreachableError(error, unread);
        break;
      }
    }
  } catch (err) {
    if (err instanceof OutcomeGiven || err instanceof ClustersUnreachableError) throw err;
    warn(err instanceof ops.BundlesFailedError ? err.failures : []);
    const events = err instanceof ops.OperationError ? err.events : [];
    if (!req.merged && err instanceof ops.OperationError) writeEvents(events, f.eventsJson);
    if (err instanceof ops.OperationError && op === "up") summary("up", err.outcomes, unreachableOf(err));
    give({ ok: false, error: userText(err, running).replace(/^error: /, ""), events });
    throw err;
  }
}

/** "cluster c3 (why)", "clusters c3 (why), c4 (why)". */
function unreachableText(clusters: ReadonlyMap<string, string>): string {
  return `cluster${clusters.size > 1 ? "s" : ""} ${[...clusters].map(([c, why]) => `${c} (${why})`).join(", ")}`;
}

/** The clusters an up left out, when that is why it failed. */
function unreachableOf(err: ops.OperationError): ReadonlyMap<string, string> {
  return err.cause instanceof ClustersUnreachableError ? err.cause.clusters : new Map();
}
