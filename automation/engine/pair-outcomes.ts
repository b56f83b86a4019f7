/**
 * Each pair of an `up` or a `preview` once, with what happened to it (changed, failed, ready), from the
 * plan, the failures and the engine's steps: what automation/reports/run-summary.ts tabulates. Pure.
 */
import { deploymentKey } from "../../core/model/keys";
import type { DeploymentFailure } from "../../core/plan/failures";
import type { PairOutcome } from "../reports/run-summary";
import { GroupedSteps, hasChanges } from "./steps";

export interface RunFacts {
  /** The pairs the run planned (without those that failed or were held before the engine). */
  entries: { cluster: string; gitRepo: string; bundle: string }[];
  /** Pairs that failed, before the engine or in it (a bundle that failed before its clusters were known has cluster ""). */
  failures: DeploymentFailure[];
  /** Pairs held (a maintenance window, --partition): they keep what they have. */
  held: DeploymentFailure[];
  /** The engine's steps per pair. */
  groups: GroupedSteps;
  /** up: whether the pair with this deployment key is Ready after it (the provider's report). */
  ready?: (key: string) => boolean;
}

/** Each pair of the run once, with what happened to it. */
export function pairOutcomes(f: RunFacts): PairOutcome[] {
  const failed = new Set(f.failures.filter((x) => x.cluster).map(deploymentKey));
  const pairs = new Map<string, string>(); // key -> cluster
  for (const p of [...f.entries, ...f.failures, ...f.held]) if (p.cluster) pairs.set(deploymentKey(p), p.cluster);
  const outcomes: PairOutcome[] = [...pairs].map(([key, cluster]) => {
    const steps = f.groups.deployments.get(key);
    return {
      cluster,
      ...(f.ready ? { ready: f.ready(key) } : {}),
      changed: !failed.has(key) && !!steps && hasChanges(steps) && !steps.pruned,
      failed: failed.has(key),
    };
  });
  for (const d of f.groups.deployments.values()) {
    if (d.pruned && !pairs.has(d.key)) outcomes.push({ cluster: d.cluster, changed: true, failed: d.failed, pruned: true });
  }
  return outcomes;
}
