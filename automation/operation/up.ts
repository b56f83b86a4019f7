/**
 * up: the earlier update's leftovers resolved, the correctDrift bundles refreshed, then the engine's
 * update; one deploy event per real deploy, and each pair that failed named (alone).
 */
import { deploymentKey } from "../../core/model/keys";
import { withoutStackTraces } from "../engine/stack-traces";
import { resolveBackend } from "../engine/backend";
import { phase } from "../engine/timings";
import { migrateState } from "../engine/migrate-state";
import { StackLockedError } from "../engine/locks";
import { PROJECT_NAME, upWithoutReadBack } from "../engine/stack";
import { OutputMap } from "@pulumi/pulumi/automation";
import { notifyAfterUp } from "../notify/notify";
import { postCommitStatuses } from "../commit-status/post";
import { postedStore } from "../commit-status/posted-store";
import { RunFacts, withMetrics } from "../metrics/report";
import { clusterMetrics, pairsAfterUp } from "../metrics/pairs";
import { ClustersUnreachableError } from "../reports/exit-codes";
import { BundlesFailedError, OperationOptions, OperationResult, UpResult } from "./results";
import { open, programTimings, Session, unreachableNote, warnerOf, watched } from "./session";
import { failedUps, failure } from "./failure";
import { resolvePendingOperations } from "./pending";
import { correctDrift, withRefreshContents } from "./correct-drift";
import { UpOutcome, upOutcome } from "./up-outcome";
import { ofRun } from "../reports/deploy-events";
import { newRunId, RunRef } from "../runs/runs";
import { recordRun } from "../runs/record";
import { upWhilePinned } from "../runs/pinned-up";
import { recordStalled, retryStalled } from "./stalled";

/** The state's migration from an earlier version's layout, decided again on the state as it is under the lock (migrate-state.ts). */
async function migrateUnderLock(s: Session): Promise<void> {
  const configured = new Set((await s.config()).clusters.map((c) => c.name));
  const migration = await s.locked(() => migrateState(s.stack, configured));
  s.moving = new Set(migration.moving);
  s.renames = migration.renames;
}

export async function up(given: OperationOptions): Promise<UpResult> {
  // A plain up on a stack a rollback pinned deploys the current commits only once one moved on (pinned-up.ts).
  const options = await upWhilePinned(given, warnerOf(given));
  return withMetrics("up", options, (m) => upOnce(options, m));
}

async function upOnce(options: OperationOptions, m: RunFacts): Promise<UpResult> {
  const at = new Date();
  const run: RunRef = options.run ?? { id: newRunId(at), kind: "up" };
  // Before the desired state is computed (open starts it): the pairs --retry names are not Stalled in it.
  await retryStalled(options);
  const s = watched(m, await open(options, "up", true));
  try {
    await resolvePendingOperations(s, options);
    if (s.migration?.changed) await migrateUnderLock(s);
    await correctDrift(s, options);
    const engineUp = (targets: () => string[] | undefined) =>
      withoutStackTraces(() =>
        s.locked(() => {
          const target = targets();
          return withRefreshContents(s, options.refresh, () =>
            upWithoutReadBack(s.stack, { ...s.changeRun, ...(target ? { target } : {}), continueOnError: options.continueOnError ?? false }),
          );
        }),
      );
    // Only removals: the engine targets them (prune-only.ts), if the stack's history is still the one they were decided on when
    // the engine starts; should it move after that, the program refuses and the update runs again in full.
    const prune = await s.pruneOnly();
    const outputs = await engineUp(() => s.pruneOnlyTargets()).catch((err) => {
      if (!prune || !s.pruneOnlyAbandoned()) throw err;
      s.recorder.forget();
      return engineUp(() => undefined);
    });
    phase("engine finished");
    options.onProgramTimings?.(programTimings(s));
    await s.settleJournal();
    // The engine's steps grouped once: the outcome's events and the result read the same groups.
    const r = s.result(s.recorder.changes);
    const pruned = prune && s.pruneOnlyTaken() ? { pruneOnly: { pairs: prune.removed.length, setups: prune.setups.length } } : {};
    const o = upOutcome({ plan: s.planned(), groups: r.groups, before: s.before, outputsBefore: s.outputsBefore, outputs, stack: options.stack });
    return { ...(await reportUp(options, s, { o: { ...o, events: ofRun(o.events, run) }, r, outputs, run, at: at.toISOString() }, m)), ...pruned };
  } catch (err) {
    if (err instanceof StackLockedError) throw err; // nothing ran: no deployment failed
    if (err instanceof BundlesFailedError) throw err; // the engine succeeded; the failed bundles are recorded above
    const e = failure("up", options, s, err as Error);
    const onFailedCluster = (s.planned()?.plan.entries ?? []).filter((x) => e.groups.failedClusters.includes(x.cluster)).map(deploymentKey);
    const failed = [...new Set([...[...e.groups.deployments.values()].filter((d) => d.failed).map((d) => d.key), ...onFailedCluster])].sort();
    await failedUps(options).write({ failed, message: e.message });
    throw e;
  }
}

/** The update's reports, each read from its outcome: commit statuses, metrics, notifications, the run's record, the failed-up record, then its result or its error. */
async function reportUp(
  options: OperationOptions,
  s: Session,
  done: { o: UpOutcome; r: OperationResult; outputs: OutputMap; run: RunRef; at: string },
  m: RunFacts,
): Promise<UpResult> {
  const { o, r, outputs, run } = done;
  // Before an unreachable cluster ends the up: the commits deployed elsewhere are said, that cluster's pairs as Offline.
  await postOnCommits(options, s, o);
  m.pairs = pairsAfterUp({
    entries: s.planned()?.plan.entries ?? [],
    failures: s.planned()?.failures.list() ?? [],
    states: o.statesAfter,
    records: o.after,
    unreachable: s.unreachable,
  });
  m.clusters = clusterMetrics(s.planned()?.config.clusters ?? [], s.seen, s.unreachable);
  await recordStalled(options, s.planned(), o.failed, new Set([...s.unreachable.keys(), ...(options.deploy?.leftOut ?? [])]));
  await notifyAfterUp(
    { stack: options.stack, config: s.planned()?.config.notifications, backend: resolveBackend(options), warn: warnerOf(options) },
    {
      statesBefore: o.statesBefore,
      statesAfter: o.statesAfter,
      before: o.before,
      after: o.after,
      failures: o.planFailed,
      deploys: o.events,
      offline: { entries: s.planned()?.plan.entries ?? [], unreachable: s.unreachable },
      run,
    },
  );
  // The engine finished: the run is recorded, also with a cluster left out (the latest release is what the others run
  // now), but a rollback's target only if every pair of every cluster deployed.
  const settings = await s.config();
  const ok = !o.failure && !s.unreachable.size;
  const { unpinned, pinned } = await recordRun(options, { run, at: done.at, ok, commits: o.commits, settings }, warnerOf(options));
  m.pinned = pinned;
  if (s.unreachable.size)
    throw new ClustersUnreachableError(`${unreachableNote(s)}: it was left out of the update, the other clusters were updated`, s.unreachable);
  if (o.failure) {
    await failedUps(options).write({ failed: o.failed.filter((f) => f.cluster).map(deploymentKey), message: o.failure.record });
    throw new BundlesFailedError(o.failure.text, o.events, r.groups, o.failed, o.outcomes);
  }
  await failedUps(options).clear();
  const shown = Object.fromEntries(Object.entries(outputs).map(([k, x]) => [k, x.secret ? "[secret]" : x.value]));
  return { ...r, events: o.events, held: o.held, outcomes: o.outcomes, commits: o.commits, outputs: shown, run, ...(unpinned ? { unpinned } : {}) };
}

/** The result on each deployed commit (automation/commit-status/): warnings only, never the up's failure. */
async function postOnCommits(options: OperationOptions, s: Session, o: UpOutcome): Promise<void> {
  const config = s.planned()?.config;
  await postCommitStatuses(
    {
      stack: options.stack,
      config: config?.commitStatus,
      // A HelmOp's "commit" is a chart version: there is no commit to post on.
      gitRepos: (config?.gitRepos ?? []).filter((g) => !g.helmOp),
      warn: warnerOf(options),
      memory: postedStore(resolveBackend(options), PROJECT_NAME, options.stack),
    },
    {
      commits: o.commits,
      entries: s.planned()?.plan.entries ?? [],
      failed: o.failed,
      held: o.held,
      ready: (key) => o.statesAfter[key]?.state === "Ready",
      offline: new Set(s.unreachable.keys()),
    },
  );
}
