/**
 * What was last said about each pair (events.ts Memory), kept where the state is, as the last failed
 * `up` is, so that a `status` run by a schedule on another machine does not repeat a drift event a first
 * one sent: notified.<stack>.json beside a file backend's state, table pulumi_fleet_notified of a
 * PostgreSQL backend, else this machine's directory (engine/stack-record-store.ts).
 */
import { Backend } from "../engine/backend";
import { StackRecordStore, stackRecordStore } from "../engine/stack-record-store";
import { Memory } from "./events";

/** read() is undefined when nothing was ever kept (notifications just turned on). */
export type MemoryStore = Pick<StackRecordStore<Memory>, "read" | "write">;

export function memoryStore(backend: Backend, project: string, stack: string): MemoryStore {
  return stackRecordStore<Memory>(backend, project, stack, { file: "notified", table: "pulumi_fleet_notified", column: "memory" });
}
