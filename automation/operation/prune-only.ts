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
import { PROVIDER_ENCRYPTED, PruneOnly, pruneOnly } from "../../core/desired/prune-only";
import { REGISTRATIONS_OUTPUT, registrationsFromOutput, registrationsOf } from "../../core/desired/registrations";
import { DesiredState, stackProviderName } from "../../core/desired/types";
import { Adoptions } from "../../core/migrate/adoptions";
import { providerConfigIn, StackState } from "../engine/deployed-objects";
import { newestHistoryEntry } from "../engine/history-mark";

/** Why an `up` is out of the prune-only update's scope before anything is compared, if it is. */
export function pruneOnlyScope(u: {
  up: boolean;
  early: boolean;
  refresh: boolean;
  leftOut: number;
  migration: boolean;
  abandoned: boolean;
  off: boolean;
}): string | undefined {
  if (!u.up) return "not an up";
  if (u.off) return "turned off (pruneOnly: false)";
  if (u.abandoned) return "the stack changed after the update read it";
  if (u.refresh) return "--refresh";
  if (u.leftOut) return "a cluster is left out (unreachable or by the caller)";
  if (u.migration) return "the state is migrated, or holds an interrupted update's operations, first";
  if (!u.early) return "the state was not read before the lock (another backend than files, or a refresh runs first)";
  return undefined;
}

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

/**
 * The prune-only update, or the reason the full one runs. The state's provider configuration is a secret
 * when a cluster has a kubeconfig: decrypted (one more read of the state) only once everything else holds.
 */
export async function decidePruneOnly(i: PruneOnlyInputs, decrypted: () => Promise<unknown>): Promise<PruneOnly | { why: string }> {
  const first = decideWith(i, providerConfigIn(i.state.resources, stackProviderName(i.stack)));
  return "why" in first && first.why === PROVIDER_ENCRYPTED ? decideWith(i, await decrypted()) : first;
}

/**
 * Why the state and its history alone rule the prune-only update out, if they do: no successful update
 * last (or a history not read here), or no registrations recorded by it. Checked before the desired state
 * is awaited, so an `up` that cannot prune starts its engine while the desired state is computed.
 */
export function unrecordedForPrune(fileDir: string | undefined, stack: string, state: StackState): string | undefined {
  const last = newestHistoryEntry(fileDir, stack);
  if (last === undefined || last === "none" || last.kind !== "update" || last.result !== "succeeded")
    return "the stack's last update did not succeed (or its history is not read here)";
  if (!registrationsFromOutput(state.outputs[REGISTRATIONS_OUTPUT]?.value)) return "the last update recorded no registrations";
  return undefined;
}

function decideWith(i: PruneOnlyInputs, stateAccess: unknown): PruneOnly | { why: string } {
  const unrecorded = unrecordedForPrune(i.fileDir, i.stack, i.state);
  if (unrecorded) return { why: unrecorded };
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
    stateAccess,
    provider: stackProviderName(i.stack),
    extras,
  });
}
