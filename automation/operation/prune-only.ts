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
  /** The state the desired state is computed from. */
  state: StackState;
  /** That desired state: awaited only once the state and its history allow a prune, so an `up` that cannot prune starts its engine meanwhile. */
  desired: () => Promise<DesiredState | undefined>;
  namesInState?: Record<string, string>;
  adoptions: (desired: DesiredState) => Promise<Adoptions>;
  /** The state's provider configuration from a read that decrypts (a cluster's kubeconfig makes it a secret): asked only once everything else holds. */
  decrypted: () => Promise<unknown>;
}

/** The prune-only update, or the reason the full one runs. */
export async function decidePruneOnly(i: PruneOnlyInputs): Promise<PruneOnly | { why: string }> {
  const last = newestHistoryEntry(i.fileDir, i.stack);
  if (last === undefined || last === "none" || last.kind !== "update" || last.result !== "succeeded")
    return { why: "the stack's last update did not succeed (or its history is not read here)" };
  const outputs = i.state.outputs;
  const previous = registrationsFromOutput(outputs[REGISTRATIONS_OUTPUT]?.value);
  if (!previous) return { why: "the last update recorded no registrations" };
  const desired = await i.desired();
  if (!desired) return { why: "the desired state did not compute (the update reports why)" };
  const adoptions = await i.adoptions(desired);
  const extras =
    Object.keys(i.namesInState ?? {}).length > 0 ||
    Object.keys(adoptions.pairs).length > 0 ||
    Object.keys(adoptions.setups).length > 0 ||
    adoptions.retiring.length > 0;
  const facts = {
    previous,
    next: registrationsOf(desired, i.code),
    desired,
    resources: i.state.resources,
    states: outputs[DEPLOYMENT_STATES_OUTPUT]?.value,
    setupStates: outputs[CLUSTER_SETUP_STATES_OUTPUT]?.value,
    // As components/fleet.ts configures the provider: the state's access carried, the configured clusters' over it.
    access: { ...i.state.access, ...clusterAccess(desired.clusters) },
    provider: stackProviderName(i.stack),
    extras,
  };
  const first = pruneOnly({ ...facts, stateAccess: providerConfigIn(i.state.resources, facts.provider) });
  return "why" in first && first.why === PROVIDER_ENCRYPTED ? pruneOnly({ ...facts, stateAccess: await i.decrypted() }) : first;
}
