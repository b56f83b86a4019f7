/**
 * Stalled pairs (core/plan/stalled.ts), acted on: the record read for the desired state, `--retry`
 * clearing it before an `up`, and each `up` (the watcher's too) writing its outcome into it.
 */
import { DeploymentFailure } from "../../core/plan/failures";
import { FleetState } from "../../core/plan/pipeline";
import { afterUp, retried, StalledRecord, upAttempts } from "../../core/plan/stalled";
import { resolveBackend } from "../engine/backend";
import { PROJECT_NAME } from "../engine/stack";
import { StalledStore, stalledStore } from "../engine/stalled-store";
import { OperationOptions } from "./results";

export function stalledRecords(options: OperationOptions): StalledStore {
  return stalledStore(resolveBackend(options), PROJECT_NAME, options.stack);
}

/** The record the desired state reads (an empty one when none was written). */
export async function readStalled(options: OperationOptions): Promise<StalledRecord> {
  return (await stalledRecords(options).read()) ?? { pairs: {} };
}

/** `--retry`: the pairs it names (or every one) lose their run of failures before the `up` computes what to apply. */
export async function retryStalled(options: OperationOptions): Promise<void> {
  const selector = options.deploy?.retry;
  if (selector) await stalledRecords(options).update((r) => retried(r, selector));
}

/**
 * After an `up` whose engine ran: each planned pair's failure (the plan's, then the provider's) counted,
 * each success ending its run. Without a computed plan nothing is known about any pair: the record stays.
 */
export async function recordStalled(
  options: OperationOptions,
  plan: FleetState | undefined,
  failures: readonly DeploymentFailure[],
  leftOut: ReadonlySet<string>,
): Promise<void> {
  const inputs = plan?.pairInputs;
  if (!inputs) return;
  const attempts = upAttempts(inputs, [...plan.failures.list(), ...failures], leftOut);
  const store = stalledRecords(options);
  try {
    // Nothing to count and nothing counted before: no write (the common case costs one read).
    if (!attempts.some((a) => a.failed !== undefined) && !Object.keys((await store.read())?.pairs ?? {}).length) return;
    const now = new Date().toISOString();
    await store.update((r) => afterUp(r, attempts, now));
  } catch (err) {
    // The count is a memory of the failures, not the update's outcome: an up that deployed is not failed by it.
    (options.onWarning ?? console.error)(
      `warning: stack ${options.stack}: the runs of failures could not be kept in ${store.where} (Stalled counts this up as not seen): ${(err as Error).message}`,
    );
  }
}
