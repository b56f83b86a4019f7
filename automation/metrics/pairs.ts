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
import { PairMetrics } from "./exposition";

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
    const state: DeploymentState = report ? knownState(report.state) : f.unreachable.has(e.cluster) ? "NotReady" : "Pending";
    return { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, state, ...fromRecord(f.records[key]) };
  });
  const failed = f.failures.map((x): PairMetrics => ({
    gitRepo: x.gitRepo,
    bundle: x.bundle,
    cluster: x.cluster,
    state: "ErrApplied",
    ...(x.stalled ? { stalled: true } : {}),
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
    ...(d.stalled ? { stalled: true } : {}),
    ...(d.cluster ? fromRecord(applied[deploymentKey(d)]) : {}),
  }));
}
