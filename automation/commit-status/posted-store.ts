/**
 * What the last `up`s posted, per repository and commit: a hash of the status and comment sent. An `up`
 * whose result for a commit is the one already posted sends nothing for it, so a watcher running an `up`
 * for every commit of any GitRepo does not spend the host's rate limit (GitHub: 5,000 requests an hour)
 * re-posting every other GitRepo's unchanged result. Only the commits of the last `up` are kept.
 * Kept where the state is (stack-record-store.ts): commit-status.<stack>.json beside a file backend's
 * state, table pulumi_fleet_commit_status of a PostgreSQL backend.
 */
import { createHash } from "node:crypto";
import { Backend } from "../engine/backend";
import { StackRecordStore, stackRecordStore } from "../engine/stack-record-store";

/** "<repository>@<commit>" -> the hash of what was posted. */
export type PostedMemory = Record<string, string>;

export function postedStore(backend: Backend, project: string, stack: string): StackRecordStore<PostedMemory> {
  return stackRecordStore<PostedMemory>(backend, project, stack, { file: "commit-status", table: "pulumi_fleet_commit_status", column: "posted" });
}

/** The hash of everything one commit is sent: a change of any part of it posts again. */
export function postedHash(sent: unknown): string {
  return createHash("sha256").update(JSON.stringify(sent)).digest("hex").slice(0, 32);
}
