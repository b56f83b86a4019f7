/**
 * Each pair's state as an operation saw it, gathered from what the operation already has: after `up`,
 * the BundleDeployments' reports (the stack's `deploymentStates` output) with the failures found before
 * the engine (a broken bundle, a rollout that holds a cluster back) over them; after `status`, its report.
 */
import { DeploymentFailure } from "../../core/plan/failures";
import { deploymentKey, parseDeploymentKey } from "../../core/model/keys";
import { PairReport } from "../../core/model/pair";
import { DeploymentRecord } from "../../core/desired/records";
import { DeployEvent, formatDeployEvent } from "../reports/deploy-events";
import { DeploymentStatus } from "../reports/status";
import { failureCondition, failureState } from "../reports/vocabulary";
import { Memory, PairObservation } from "./events";

/** A report's words, the one form both the memory and a new observation use (so unchanged words compare equal). */
const wordsOf = (r: PairReport) => (r.messages ?? []).join("; ");

/** What the stack recorded before this run: the memory to start from when nothing was said yet. */
export function recordedStates(states: Record<string, PairReport>): Memory {
  return Object.fromEntries(Object.entries(states).map(([key, r]) => [key, { state: r.state, message: wordsOf(r) }]));
}

/**
 * @param states the `deploymentStates` output after the update
 * @param records the `deployments` output after it (deploymentId, commit)
 * @param failures the failures of the desired state (core/plan/failures.ts), decided before the engine
 */
export function observedAfterUp(
  states: Record<string, PairReport>,
  records: Record<string, DeploymentRecord>,
  failures: DeploymentFailure[],
  offline: OfflinePairs = { entries: [], unreachable: new Map() },
): PairObservation[] {
  const out = new Map<string, PairObservation>();
  for (const [key, r] of Object.entries(states)) {
    const rec = records[key];
    const id = rec ?? parseDeploymentKey(key);
    out.set(key, {
      key,
      gitRepo: id.gitRepo,
      bundle: id.bundle,
      cluster: id.cluster,
      state: r.state,
      message: wordsOf(r),
      deploymentId: rec?.deploymentId ?? r.appliedDeploymentId,
      commit: rec?.commit ?? "",
    });
  }
  // The pair keeps its last objects (so its report may say Ready): the failure is what this update did.
  for (const f of failures) {
    if (!f.cluster) continue;
    const key = deploymentKey(f);
    const rec = records[key];
    out.set(key, {
      key,
      gitRepo: f.gitRepo,
      bundle: f.bundle,
      cluster: f.cluster,
      state: failureState(f),
      ...(failureCondition(f) ? { condition: failureCondition(f) } : {}),
      message: `${f.file ? `${f.file}: ` : ""}${f.reason}`,
      deploymentId: rec?.deploymentId ?? f.kept?.deploymentId ?? "",
      commit: rec?.commit ?? "",
    });
  }
  // Not observed now: whatever the state last said of it, NotReady (Offline), never Ready.
  for (const e of offline.entries) {
    const why = offline.unreachable.get(e.cluster);
    if (why === undefined) continue;
    const key = deploymentKey(e);
    const rec = records[key];
    out.set(key, {
      key,
      gitRepo: e.gitRepo,
      bundle: e.bundle,
      cluster: e.cluster,
      state: "NotReady",
      condition: "Offline",
      message: `not observed now: cluster unreachable: ${why}`,
      deploymentId: rec?.deploymentId ?? e.deploymentId,
      commit: rec?.commit ?? "",
    });
  }
  return [...out.values()];
}

/** The pairs an update left out because their cluster did not answer (cluster -> the words of why). */
export interface OfflinePairs {
  entries: readonly { gitRepo: string; bundle: string; cluster: string; deploymentId: string }[];
  unreachable: ReadonlyMap<string, string>;
}

/** Deploys (this update changed the pair's objects) by key, with their words; and the pairs pruned. */
export function deploysOf(events: DeployEvent[]): { deployed: Map<string, string>; pruned: PairObservation[] } {
  const deployed = new Map<string, string>();
  const pruned: PairObservation[] = [];
  for (const e of events) {
    const key = deploymentKey(e);
    if (e.event === "deployed") deployed.set(key, formatDeployEvent(e));
    else
      pruned.push({
        key,
        gitRepo: e.gitRepo,
        bundle: e.bundle,
        cluster: e.cluster,
        state: "Ready",
        message: formatDeployEvent(e),
        deploymentId: e.deploymentId,
        commit: e.commit,
      });
  }
  return { deployed, pruned };
}

/** `status`'s deployments as observations (its deploymentId is the one the commit calls for). */
export function observedByStatus(deployments: DeploymentStatus[], records: Record<string, DeploymentRecord>): PairObservation[] {
  return deployments
    .filter((d) => d.cluster)
    .map((d) => {
      const key = deploymentKey(d);
      return {
        key,
        gitRepo: d.gitRepo,
        bundle: d.bundle,
        cluster: d.cluster,
        state: d.state,
        ...(d.condition ? { condition: d.condition } : {}),
        message: d.message,
        deploymentId: d.appliedDeploymentId ?? d.deploymentId,
        commit: records[key]?.commit ?? "",
      };
    });
}
