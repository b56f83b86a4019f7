/**
 * Each bundle deployment's metrics from what an operation already holds: after `up`, the provider's
 * reported states and the records the update wrote; after `status`, its report and the records of what
 * is applied. Pure: the operations hand the facts in.
 */
import { deploymentKey } from "../../core/model/keys";
import { DeploymentRecord } from "../../core/desired/records";
import { DeploymentFailure } from "../../core/plan/failures";
import { PairReport } from "../../core/model/pair";
import { PlanEntry } from "../../core/targeting/plan";
import { DeploymentState, DeploymentStatus, STATE_RANK } from "../reports/status";
import { ClusterMetrics, PairMetrics } from "./exposition";
import { failureCondition, failureState } from "../reports/vocabulary";
import { SeenRecord } from "../clusters/observed";
import { ClusterConfig } from "../../core/config/stack";

export interface UpFacts {
  /** The plan as it deployed (the failed deployments left out). */
  entries: PlanEntry[];
  /** Deployments that failed alone before the engine (core/plan/failures.ts): ErrApplied, keeping what they had. */
  failures: DeploymentFailure[];
  /** The `deploymentStates` output the update wrote. */
  states: Record<string, PairReport>;
  /** The `deployments` output the update wrote. */
  records: Record<string, DeploymentRecord>;
  /** Clusters left out of the update. */
  unreachable: ReadonlyMap<string, string>;
}

const fromRecord = (r: DeploymentRecord | undefined) => (r ? { objects: r.objectCount, ...(r.deployedAt ? { deployedAt: r.deployedAt } : {}) } : {});

/** A state the provider reported, as one of Fleet's (anything else it might say is taken as not ready). */
const knownState = (s: string): DeploymentState => (s in STATE_RANK ? (s as DeploymentState) : "NotReady");

export function pairsAfterUp(f: UpFacts): PairMetrics[] {
  const planned = f.entries.map((e): PairMetrics => {
    const key = deploymentKey(e);
    const report = f.states[key];
    // Not observed now: whatever its left-over report says (an excluded pair keeps its last output), NotReady.
    const offline = f.unreachable.has(e.cluster);
    const state: DeploymentState = offline ? "NotReady" : report ? knownState(report.state) : "Pending";
    return {
      gitRepo: e.gitRepo,
      bundle: e.bundle,
      cluster: e.cluster,
      state,
      ...(offline ? { condition: "Offline" as const } : {}),
      ...fromRecord(f.records[key]),
    };
  });
  const failed = f.failures.map((x): PairMetrics => ({
    gitRepo: x.gitRepo,
    bundle: x.bundle,
    cluster: x.cluster,
    state: failureState(x),
    ...(failureCondition(x) ? { condition: failureCondition(x) } : {}),
    ...(x.cluster ? fromRecord(f.records[deploymentKey(x)]) : {}),
  }));
  return [...planned, ...failed];
}

/** `applied`: the records of what the last update deployed (status reads them before anything changes). */
export function pairsOfStatus(deployments: DeploymentStatus[], applied: Record<string, DeploymentRecord>): PairMetrics[] {
  return deployments.map((d) => ({
    gitRepo: d.gitRepo,
    bundle: d.bundle,
    cluster: d.cluster,
    state: d.state,
    ...(d.condition ? { condition: d.condition } : {}),
    ...(d.cluster ? fromRecord(applied[deploymentKey(d)]) : {}),
  }));
}

/**
 * Each cluster of the stack file: paused or not, and, where the operation probed them, Offline now or
 * not and when it last answered (the stack's record of it).
 */
export function clusterMetrics(clusters: readonly ClusterConfig[], seen: SeenRecord | undefined, unreachable: ReadonlyMap<string, string>): ClusterMetrics[] {
  return clusters.map((c) => {
    const lastSeen = seen?.clusters[c.name]?.lastSeen;
    return { cluster: c.name, paused: !!c.paused, ...(seen ? { offline: unreachable.has(c.name) } : {}), ...(lastSeen ? { lastSeen } : {}) };
  });
}
