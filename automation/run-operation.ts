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
  /** A shard of a sharded run: its deploy events are printed once, merged, by the run (shards/run.ts). */
  merged?: boolean;
  /** Receives the outcome once, also when the operation fails (then before the error is thrown). */
  outcome?: (o: OperationOutcome) => void;
}

function writeEvents(events: DeployEvent[], file?: string): void {
  for (const e of events) console.log(formatDeployEvent(e));
  if (file) fs.writeFileSync(file, events.map((e) => JSON.stringify({ time: new Date().toISOString(), ...e })).join("\n") + (events.length ? "\n" : ""));
}

/** A failure whose outcome was already handed over whole. */
class OutcomeGiven extends Error {}

/** Runs the operation and prints it; throws what failed (worded by automation/reports/error-report.ts where it is caught). */
export async function runOperation(req: OperationRequest, running: FailureContext = {}): Promise<void> {
  const { op, stack, flags: f } = req;
  const give = (o: OperationOutcome) => req.outcome?.(o);
  // Per-cluster progress on stderr once a run is long: redrawn in place on a terminal, a line now and then elsewhere.
  const progress = op === "cancel" || f.quiet ? undefined : new Progress(op, process.stderr);
  const track = async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } finally {
      progress?.finish();
    }
  };
  const options: ops.OperationOptions = {
    stack,
    expectNoChanges: f.expectNoChanges,
    refresh: f.refresh,
    skipCheckpoints: f.skipCheckpoints,
    waitLock: f.waitLock,
    forceUnlock: f.forceUnlock,
    onOutput: f.quiet || (op === "status" && f.json) ? undefined : (s) => (progress ? progress.output(s) : process.stdout.write(s)),
    onEvent: progress?.onEvent,
    deploy: { ...req.deploy },
  };
  const page = (file: string | undefined, html: () => string) => {
    if (!file) return;
    fs.writeFileSync(file, html());
    console.error(`wrote the ${op} page to ${file}`);
  };
  const done = (r: ops.OperationResult) =>
    console.log(`\n${op} of stack ${stack} succeeded in ${(r.durationMs / 1000).toFixed(1)} s: ${JSON.stringify(r.changes)}`);
  try {
    switch (op) {
      case "preview": {
        const r = await track(ops.preview(options));
        if (f.summaryMd) fs.writeFileSync(f.summaryMd, r.summaryMarkdown);
        // A broken bundle fails the preview (a pull request's check), after everything else was shown.
        const failed = r.failures.length ? `preview of stack ${stack}: ${ops.failuresNote(r.failures)}` : undefined;
        give({ ok: !failed, ...(failed ? { error: failed } : {}), changes: r.changes, summaryMarkdown: r.summaryMarkdown, prunes: r.prunes });
        page(f.html, () => renderPreviewPage(r));
        for (const p of r.prunes) console.log(`Will prune bundle ${p.bundle} from ${p.cluster} (${p.objects} objects): ${p.reason.replaceAll("`", "")}`);
        for (const line of rolloutLines(r.state)) console.log(line.replace(/^bundle/, "Bundle"));
        if (r.held.length) console.log(`This update: ${ops.heldNote(r.held)}`);
        if (failed) throw new OutcomeGiven(failed);
        done(r);
        break;
      }
      case "up":
      case "destroy": {
        const r = await track(op === "up" ? ops.up(options) : ops.destroy(options));
        console.log("");
        if (!req.merged) writeEvents(r.events, f.eventsJson);
        give({ ok: true, changes: r.changes, events: r.events });
        if (r.held.length) console.log(ops.heldNote(r.held));
        done(r);
        break;
      }
      case "refresh": {
        const r = await track(ops.refresh(options));
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
        page(f.html, () => renderStatusPage(r));
        give({ ok: true, status: r });
        process.stdout.write(f.json ? JSON.stringify(r, null, 2) + "\n" : "\n" + formatStatusTable(r));
        break;
      }
    }
  } catch (err) {
    if (err instanceof OutcomeGiven) throw err;
    const events = err instanceof ops.OperationError ? err.events : [];
    if (!req.merged && err instanceof ops.OperationError) writeEvents(events, f.eventsJson);
    give({ ok: false, error: userText(err, running).replace(/^error: /, ""), events });
    throw err;
  }
}
