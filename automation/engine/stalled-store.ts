/**
 * Each pair's run of failures with the same inputs (core/plan/stalled.ts), kept where the state is so
 * that every machine running `up`, the watcher and `status` agree on which pairs are Stalled:
 * stalled-pairs.<stack>.json beside a file backend's state, table pulumi_fleet_stalled_pairs of a
 * PostgreSQL backend, else this machine's directory (stack-record-store.ts).
 */
import { StalledRecord } from "../../core/plan/stalled";
import { redactMessage } from "../notify/redact";
import { Backend } from "./backend";
import { StackRecordStore, stackRecordStore } from "./stack-record-store";

export type StalledStore = StackRecordStore<StalledRecord>;

/** The longest reason kept per pair: it is said in every report of the pair, and the record grows with the fleet. */
export const MAX_REASON_CHARS = 500;

export function stalledStore(backend: Backend, project: string, stack: string): StalledStore {
  const store = stackRecordStore<StalledRecord>(backend, project, stack, { file: "stalled-pairs", table: "pulumi_fleet_stalled_pairs", column: "record" });
  // A provider's words can quote what the API server refused: redacted as notifications are, and cut.
  const bounded = (r: StalledRecord): StalledRecord => ({
    pairs: Object.fromEntries(Object.entries(r.pairs).map(([k, run]) => [k, { ...run, reason: shorten(redactMessage(run.reason)) }])),
  });
  return { ...store, write: (r) => store.write(bounded(r)), update: (change) => store.update((r) => bounded(change(r))) };
}

function shorten(text: string): string {
  return text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS)}…` : text;
}
