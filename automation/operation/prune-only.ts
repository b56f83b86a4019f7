/**
 * An `up` that only removes pairs, told before the engine starts (core/desired/prune-only.ts decides;
 * this gathers its facts): then the engine targets the pairs removed, the contents no pair names any
 * more and the setups of the clusters they leave, and the program registers only those setups, so the
 * update costs what it changes rather than a pass over every pair (BENCHMARKS.md section 23). Taken only
 * from the state an `up` read before the lock, where the stack's history tells whether it still holds
 * (history-mark.ts), and after a successful update that recorded its registrations.
 */
import { clusterAccess } from "../../core/desired/providers";
import { CLUSTER_SETUP_STATES_OUTPUT, DEPLOYMENT_STATES_OUTPUT } from "../../core/desired/previous";
import { PruneOnly, pruneOnly } from "../../core/desired/prune-only";
import { REGISTRATIONS_OUTPUT, registrationsFromOutput, registrationsOf } from "../../core/desired/registrations";
import { DesiredState, stackProviderName } from "../../core/desired/types";
import { Adoptions } from "../../core/migrate/adoptions";
import { StackState } from "../engine/deployed-objects";
import { newestHistoryEntry } from "../engine/history-mark";

export interface PruneOnlyInputs {
  stack: string;
  fileDir?: string;
  /** The code's digest (automation/engine/program-code.ts). */
  code: string;
  /** The state the desired state was computed from, and that desired state. */
  state: StackState;
  desired: DesiredState;
  namesInState?: Record<string, string>;
  adoptions: Adoptions;
}

/** The prune-only update, or the reason the full one runs. */
export function decidePruneOnly(i: PruneOnlyInputs): PruneOnly | { why: string } {
  const last = newestHistoryEntry(i.fileDir, i.stack);
  if (last === undefined || last === "none" || last.kind !== "update" || last.result !== "succeeded")
    return { why: "the stack's last update did not succeed (or its history is not read here)" };
  const outputs = i.state.outputs;
  const extras =
    Object.keys(i.namesInState ?? {}).length > 0 ||
    Object.keys(i.adoptions.pairs).length > 0 ||
    Object.keys(i.adoptions.setups).length > 0 ||
    i.adoptions.retiring.length > 0;
  return pruneOnly({
    previous: registrationsFromOutput(outputs[REGISTRATIONS_OUTPUT]?.value),
    next: registrationsOf(i.desired, i.code),
    desired: i.desired,
    resources: i.state.resources,
    states: outputs[DEPLOYMENT_STATES_OUTPUT]?.value,
    setupStates: outputs[CLUSTER_SETUP_STATES_OUTPUT]?.value,
    // As components/fleet.ts configures the provider: the state's access carried, the configured clusters' over it.
    access: { ...i.state.access, ...clusterAccess(i.desired.clusters) },
    provider: stackProviderName(i.stack),
    extras,
  });
}
