/**
 * The words of the fleet's states, one home for every report: `status` (its table and `--json`), the
 * status and preview pages, the metrics, the notifications and the PR summary. Fleet's words where
 * Fleet has one (docs/behaviour.md "The words of the states" lists them; test/unit/vocabulary.test.ts
 * holds every report to them).
 *  - A pair's **state** is one of Fleet's seven BundleDeployment states (STATE_RANK).
 *  - A **condition** says why, beside the state and never instead of it:
 *    - `Stalled`: it failed `stalledAfter` times in a row with the same inputs and is not applied again
 *      until they change or `--retry` (kstatus's and Fleet's condition word); state ErrApplied.
 *    - `Offline`: its cluster's API server did not answer now (Fleet: the Cluster's agent `lastSeen`
 *      grows old); state NotReady, never Ready.
 *    - `Paused`: its cluster is paused in the stack file, or its bundle by fleet.yaml `paused` (Fleet's
 *      Cluster and BundleDeployment `spec.paused`); state OutOfSync, or Pending when never deployed.
 *    - `OffSchedule`: a maintenance window holds it (Fleet's BundleDeployment `status.offSchedule`).
 *    - `Held`: `up --partition` leaves it for a later partition of its rollout.
 *  - A **cluster's state** is the worst of its pairs' (Fleet's Cluster display state), or `Offline`.
 *  - A **run** is an `up`, a `rollback` or a `redeploy`.
 */
import type { DeploymentFailure, HoldKind } from "../../core/plan/failures";

/** Fleet's BundleDeployment states and their rank: a roll-up takes the worst (fleet-semantics.md §4). */
export const STATE_RANK = { ErrApplied: 7, WaitApplied: 6, Modified: 5, OutOfSync: 4, Pending: 3, NotReady: 2, Ready: 1 } as const;
export type DeploymentState = keyof typeof STATE_RANK;

export const PAIR_CONDITIONS = ["Stalled", "Offline", "Paused", "OffSchedule", "Held"] as const;
export type PairCondition = (typeof PAIR_CONDITIONS)[number];

/** The condition of a pair a hold keeps (core/plan/failures.ts HoldKind). */
export const HOLD_CONDITION: Record<HoldKind, PairCondition> = { paused: "Paused", schedule: "OffSchedule", partition: "Held" };

/** The state of a pair the desired state failed or held before the engine, in every report alike. */
export function failureState(f: Pick<DeploymentFailure, "held" | "kept" | "field">): DeploymentState {
  if (f.held) return f.kept ? "OutOfSync" : "Pending";
  // Waiting behind its rollout's earlier partitions (core/desired/rollout-gates.ts): not applied, not failed.
  if (f.field === "rolloutStrategy") return "WaitApplied";
  return "ErrApplied";
}

/** The condition of a pair the desired state failed or held before the engine: its hold's, or Stalled. */
export function failureCondition(f: Pick<DeploymentFailure, "held" | "stalled">): PairCondition | undefined {
  return f.held ? HOLD_CONDITION[f.held] : f.stalled ? "Stalled" : undefined;
}
