/** preview: what an `up` would do, with the pull-request summary and the prunes it would make. */
import { prunesOf } from "../reports/preview-report";
import { renderSummaryMarkdown } from "../reports/pr-summary";
import { withoutStackTraces } from "../engine/stack-traces";
import { resolveBackend } from "../engine/backend";
import { journalStore } from "../engine/journal-store";
import { PROJECT_NAME } from "../engine/stack";
import { isRenderMode } from "../engine/stack";
import { reportFacts } from "../../core/desired/report-facts";
import { throwIfStopped } from "../../core/base/stop-signal";
import { RunFacts, withMetrics } from "../metrics/report";
import { pairOutcomes } from "../engine/pair-outcomes";
import { OperationOptions, PreviewResult } from "./results";
import { movingNote, open, programTimings, warnerOf, watched } from "./session";
import { readFailure } from "./failure";
import { pinNotice } from "../runs/pinned-up";
import { withRefreshContents } from "./correct-drift";

export async function preview(options: OperationOptions): Promise<PreviewResult> {
  return withMetrics("preview", options, (m) => previewOnce(options, m));
}

async function previewOnce(options: OperationOptions, m: RunFacts): Promise<PreviewResult> {
  const s = watched(m, await open(options, "read", true));
  throwIfStopped();
  const result = await withoutStackTraces(() => withRefreshContents(s, options.refresh, () => s.stack.preview({ ...s.changeRun, diff: true }))).catch((err) => {
    throw readFailure("preview", options, s, err);
  });
  options.onProgramTimings?.(programTimings(s));
  const state = s.planned();
  if (!state) throw new Error(`preview of stack ${options.stack} ran no plan`);
  const r = s.result(result.changeSummary);
  const deploymentWarnings = (s.desired()?.deployments ?? []).flatMap((d) =>
    d.entry && d.warnings.length ? [{ gitRepo: d.gitRepo, bundle: d.entry.bundle, cluster: d.cluster, warnings: d.warnings }] : [],
  );
  const report = {
    stack: options.stack,
    groups: r.groups,
    before: s.before,
    state,
    unreachable: s.unreachable,
    facts: reportFacts(state, s.before),
    deploymentWarnings,
  };
  const notices = [await journalNotice(options), movingNote(s), await pinNotice(options)].filter((n): n is string => !!n);
  for (const n of notices) warnerOf(options)(`warning: stack ${options.stack}: ${n}`);
  const summaryMarkdown = notices.map((n) => `> **Warning:** ${n}\n\n`).join("") + renderSummaryMarkdown(report);
  return {
    ...r,
    state,
    facts: report.facts,
    prunes: prunesOf(report),
    summaryMarkdown,
    unreachable: s.unreachable,
    takenAt: new Date().toISOString(),
    failures: state.failures.list().filter((f) => !f.held),
    held: state.failures.list().filter((f) => f.held),
    outcomes: pairOutcomes({
      entries: state.plan.entries,
      failures: state.failures.list().filter((f) => !f.held),
      held: state.failures.list().filter((f) => f.held),
      groups: r.groups,
    }),
  };
}

/**
 * The crash journal's sweep happens in the next `up`, outside the engine's plan, so a preview (a pull
 * request's) says when there is something for it to look at.
 */
async function journalNotice(options: OperationOptions): Promise<string | undefined> {
  if (isRenderMode(options)) return undefined;
  const entries = (await journalStore(resolveBackend(options), PROJECT_NAME, options.stack)?.list()) ?? [];
  if (!entries.length) return undefined;
  const objects = entries.reduce((n, e) => n + e.entry.objects.length, 0);
  return (
    `the crash journal holds ${entries.length} update(s) that did not complete (${entries.map((e) => e.entry.writer).join("; ")}), ` +
    `${objects} object(s) in all: the next \`up\` deletes those that are then neither in the state nor in the plan and still carry their bundle's labels; ` +
    "those deletions are not part of this preview"
  );
}
