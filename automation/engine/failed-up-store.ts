/**
 * The record of a stack's last failed `up` (its deployments show ErrApplied in `status` until an `up`
 * succeeds), kept where the state is so that `status` on every machine agrees, as the crash journal is
 * (journal-store.ts): last-failed-up.<stack>.json beside a file backend's state, table
 * pulumi_fleet_failed_up of a PostgreSQL backend, else this machine's directory (stack-record-store.ts).
 */
import { Backend } from "./backend";
import { StackRecordStore, stackRecordStore } from "./stack-record-store";

export interface FailedUp {
  /** The deployment keys (core/model/keys.ts) whose last `up` failed. */
  failed: string[];
  /** What the failed `up` said, shortened. */
  message: string;
}

export type FailedUpStore = StackRecordStore<FailedUp>;

const MAX_MESSAGE = 2000;

export function failedUpStore(backend: Backend, project: string, stack: string): FailedUpStore {
  // An earlier version wrote it in this machine's directory: still read until the shared record replaces it.
  const store = stackRecordStore<FailedUp>(backend, project, stack, {
    file: "last-failed-up",
    table: "pulumi_fleet_failed_up",
    column: "record",
    readsLocalBefore: true,
  });
  return { ...store, write: (r) => store.write({ ...r, message: r.message.slice(0, MAX_MESSAGE) }) };
}
