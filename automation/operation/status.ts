/** status: Fleet's status of every planned bundle deployment, read from the clusters without changing anything. */
import { withoutStackTraces } from "../engine/stack-traces";
import { resolveBackend } from "../engine/backend";
import { computeStatus, StatusReport } from "../reports/status";
import { nonReadyByDeployment } from "../engine/live-readiness";
import { reportFacts } from "../../core/desired/report-facts";
import { groupSteps } from "../engine/steps";
import { stopSignal, throwIfStopped } from "../../core/base/stop-signal";
import { notifyAfterStatus } from "../notify/notify";
import { RunFacts, withMetrics } from "../metrics/report";
import { clusterMetrics, pairsOfStatus } from "../metrics/pairs";
import { OperationOptions } from "./results";
import { open, warnerOf, watched } from "./session";
import { failedUps, readFailure } from "./failure";
import { statesOutput } from "./outputs";
import { pinText, runsStore, StackRuns } from "../runs/runs";
import { PROJECT_NAME } from "../engine/stack";
import { pausedMessage } from "../../core/desired/holds";
import { withRefreshContents } from "./correct-drift";

/**
 * Fleet's status of every planned bundle deployment: a refresh-preview reads the clusters (readiness,
 * drift) without changing anything; the last failed update (if any) marks its deployments ErrApplied.
 * In render mode there is no cluster to read: the states come from the records and the plan alone.
 */
export async function status(options: OperationOptions): Promise<StatusReport> {
  return withMetrics("status", options, (m) => statusOnce(options, m));
}

async function statusOnce(options: OperationOptions, m: RunFacts): Promise<StatusReport> {
  const s = watched(m, await open(options, "read", true));
  throwIfStopped();
  // The refresh compares each pair with its content: handed over, as a refresh has no program to register it.
  const preview = () =>
    s.stack.preview({ signal: stopSignal, onOutput: options.onOutput, onEvent: s.recorder.onEvent, refresh: !s.renderMode, exclude: s.excluded });
  await withoutStackTraces(() => withRefreshContents(s, !s.renderMode, preview)).catch((err) => {
    throw readFailure("status", options, s, err);
  });
  const state = s.planned();
  if (!state) throw new Error(`status of stack ${options.stack}: the program ran no plan`);
  const failed = new Set<string>((await failedUps(options).read())?.failed ?? []);
  const groups = groupSteps(s.recorder.steps, s.recorder.failedUrns, s.moving);
  const report = computeStatus(options.stack, state, s.before, reportFacts(state, s.before), groups, failed, s.unreachable, {
    agents: s.agentsBefore,
    probed: !s.renderMode,
    takenAt: new Date().toISOString(),
    offline: s.offline,
    pausedWords: pausedMessage,
    lastStates: statesOutput(s.outputsBefore),
    nonReady: s.renderMode ? undefined : await nonReadyByDeployment(groups, state.plan.entries),
  });
  await notifyAfterStatus(
    { stack: options.stack, config: state.config.notifications, backend: resolveBackend(options), warn: warnerOf(options) },
    report.deployments,
    s.before,
    statesOutput(s.outputsBefore),
  );
  let runsRead = true;
  const runs = await runsStore(resolveBackend(options), PROJECT_NAME, options.stack)
    .read()
    .catch((err: Error) => {
      runsRead = false;
      warnerOf(options)(`warning: stack ${options.stack}: its runs could not be read (no last run, no pin shown): ${err.message}`);
      return undefined;
    });
  Object.assign(report, runsOf(runs));
  m.pairs = pairsOfStatus(report.deployments, s.before);
  if (runsRead) m.pinned = report.pinned !== undefined;
  m.clusters = clusterMetrics(state.config.clusters, s.seen, s.unreachable);
  return report;
}

/** What status says of the stack's runs: the last one, and a rollback's pin. */
function runsOf(record: StackRuns | undefined): Pick<StatusReport, "lastRun" | "pinned"> {
  const last = record?.runs.at(-1);
  const pin = record?.pin;
  return {
    ...(last ? { lastRun: { id: last.id, kind: last.kind, at: last.at, ok: last.ok } } : {}),
    ...(pin ? { pinned: { run: pin.run.id, by: pin.by, who: pin.who, at: pin.at, message: pinText(pin) } } : {}),
  };
}
