/**
 * up: the earlier update's leftovers resolved, the correctDrift bundles refreshed, then the engine's
 * update; one deploy event per real deploy, and each pair that failed named (alone).
 */
import { BUNDLE_DEPLOYMENT_TYPE } from "../../core/desired/types";
import { pairFailures } from "../../core/desired/records";
import { deploymentKey, legacyKey, parseDeploymentKey } from "../../core/model/keys";
import { clustersOutsideWindowsAt } from "../../core/targeting/schedule-windows";
import { deployEvents } from "../reports/deploy-events";
import { withoutStackTraces } from "../engine/stack-traces";
import { resolveBackend } from "../engine/backend";
import { phase } from "../engine/timings";
import { rolloutHoldMessages } from "../../core/targeting/rollout-hold";
import { migrateState } from "../engine/migrate-state";
import { StackLockedError } from "../engine/locks";
import { upWithoutReadBack } from "../engine/stack";
import { stopSignal } from "../../core/base/stop-signal";
import { notifyAfterUp } from "../notify/notify";
import { RunFacts, withMetrics } from "../metrics/report";
import { pairsAfterUp } from "../metrics/pairs";
import { pairOutcomes } from "../engine/pair-outcomes";
import { ClustersUnreachableError } from "../reports/exit-codes";
import { BundlesFailedError, failuresNote, heldNote, OperationOptions, UpResult } from "./results";
import { base, changeRun, open, Session, stackRootUrn, unreachableNote, warnerOf, watched } from "./session";
import { failedUps, failure } from "./failure";
import { deploymentsOutput, setupFailures, statesOutput } from "./outputs";
import { resolvePendingOperations } from "./pending";

/**
 * fleet.yaml correctDrift.enabled, mapped onto the engine: Fleet's agent re-applies a drifted object
 * of such a bundle on its own; here `up` first refreshes the objects of the deployments that have it
 * (as recorded by the last update), so the update that follows diffs them against the cluster and
 * re-applies what was edited by hand. Other bundles' drift is left alone, and reported by `status`,
 * until `up --refresh`. A cluster outside its maintenance window is not refreshed: Fleet's agent
 * clears drift correction off schedule, so a hand edit there stays until the window opens.
 */
async function correctDrift(s: Session, options: OperationOptions): Promise<void> {
  if (options.refresh) return; // everything is refreshed anyway
  const drifting = Object.entries(s.before).filter(([, r]) => r.correctDrift);
  if (!drifting.length) return;
  const outside = await clustersOutsideWindowsAt(await s.config(), options.deploy?.now ?? new Date());
  // A BundleDeployment an earlier version registered is still named by its legacy key until this update renames it.
  const keys = new Set(
    drifting.flatMap(([key]) => {
      const pair = parseDeploymentKey(key);
      return outside.has(pair.cluster) ? [] : [key, legacyKey(pair)];
    }),
  );
  if (!keys.size) return;
  const excluded = new Set(s.excluded);
  const targets = s.state.resources
    .filter((r) => r.type === BUNDLE_DEPLOYMENT_TYPE && keys.has(r.urn.split("::").pop()!) && !excluded.has(r.urn))
    .map((r) => r.urn);
  if (!targets.length) return;
  const root = stackRootUrn(s.state);
  await s.locked(() => s.stack.refresh({ signal: stopSignal, target: root ? [root, ...targets] : targets, onOutput: options.onOutput }));
}

/** The state's migration from an earlier version's layout, decided again on the state as it is under the lock (migrate-state.ts). */
async function migrateUnderLock(s: Session): Promise<void> {
  const configured = new Set((await s.config()).clusters.map((c) => c.name));
  s.moving = new Set((await s.locked(() => migrateState(s.stack, configured))).moving);
}

export async function up(options: OperationOptions): Promise<UpResult> {
  return withMetrics("up", options, (m) => upOnce(options, m));
}

async function upOnce(options: OperationOptions, m: RunFacts): Promise<UpResult> {
  const s = watched(m, await open(options, "up", true));
  try {
    await resolvePendingOperations(s, options);
    if (s.migration?.changed) await migrateUnderLock(s);
    await correctDrift(s, options);
    const outputs = await withoutStackTraces(() =>
      s.locked(() => upWithoutReadBack(s.stack, { ...changeRun(s, options), continueOnError: options.continueOnError ?? false })),
    );
    phase("engine finished");
    m.pairs = pairsAfterUp({
      entries: s.planned()?.plan.entries ?? [],
      failures: s.planned()?.failures.list() ?? [],
      states: statesOutput(outputs),
      records: deploymentsOutput(outputs),
      unreachable: s.unreachable,
    });
    await s.settleJournal();
    const r = base(options, s, s.recorder.changes);
    if (s.unreachable.size)
      throw new ClustersUnreachableError(`${unreachableNote(s)}: it was left out of the update, the other clusters were updated`, s.unreachable);
    const after = deploymentsOutput(outputs);
    const events = deployEvents(r.groups, s.before, after);
    // Broken bundles and refused or unready pairs failed alone: everything else was deployed; the update
    // still fails, naming each.
    const all = s.planned()?.failures.list() ?? [];
    const held = all.filter((f) => f.held);
    const rendered = all.filter((f) => !f.held);
    const failedKeys = new Set(rendered.filter((f) => f.cluster).map(deploymentKey));
    const failed = [...rendered, ...pairFailures(statesOutput(outputs), after).filter((f) => !failedKeys.has(deploymentKey(f)))];
    const setups = setupFailures(outputs);
    const states = statesOutput(outputs);
    const outcomes = pairOutcomes({
      entries: s.planned()?.plan.entries ?? [],
      failures: failed,
      held,
      groups: r.groups,
      ready: (key) => states[key]?.state === "Ready",
    });
    await notifyAfterUp(
      { stack: options.stack, config: s.planned()?.config.notifications, backend: resolveBackend(options), warn: warnerOf(options) },
      { statesBefore: statesOutput(s.state.outputs), statesAfter: statesOutput(outputs), before: s.before, after, failures: rendered, deploys: events },
    );
    if (failed.length || setups.length) {
      const notes = [
        ...(setups.length ? [`${setups.length} cluster setup(s) (namespaces and agent) failed, each alone:\n${setups.map((x) => `  ${x}`).join("\n")}`] : []),
        ...(failed.length ? [failuresNote(failed)] : []),
      ];
      await failedUps(options).write({ failed: failed.filter((f) => f.cluster).map(deploymentKey), message: notes.join("\n") });
      // A rollout stops where a pair failed or is not ready; the clusters after it wait (WaitApplied).
      const stopping = failed.filter((f) => !f.reason.startsWith("WaitApplied"));
      const stops = rolloutHoldMessages(s.planned()?.rollouts?.values() ?? [], (b) =>
        stopping.filter((f) => f.gitRepo === b.gitRepo && f.bundle === b.bundle).map((f) => f.cluster),
      );
      throw new BundlesFailedError(
        `up of stack ${options.stack} deployed everything else, but ${stops.map((x) => `${x}\n`).join("")}${notes.join("\n")}` +
          (held.length ? `\n${heldNote(held)}` : ""),
        events,
        r.groups,
        failed,
        outcomes,
      );
    }
    await failedUps(options).clear();
    return { ...r, events, held, outcomes, outputs: Object.fromEntries(Object.entries(outputs).map(([k, o]) => [k, o.secret ? "[secret]" : o.value])) };
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
