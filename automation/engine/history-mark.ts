/**
 * The stack's history in a file backend, as a value that changes when an entry is added: a file backend
 * adds one at the end of every update, refresh or import. An operation that computed the desired state
 * from the state it read before taking the stack's lock keeps that computation only while the mark is
 * unchanged (automation/operation/desired.ts); otherwise another update finished meanwhile, or the
 * operation's own refresh ran, and it computes afresh from the state read under the lock.
 */
import * as fs from "node:fs";
import { fileBackendPath } from "./stack";

/** The mark, or undefined where there is none to take (another backend, an unreadable folder). */
export function historyMark(fileDir: string | undefined, stack: string): string | undefined {
  const dir = fileDir && fileBackendPath(fileDir, "history", stack);
  if (!dir) return undefined;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "none";
    return undefined;
  }
  const entries = names.filter((n) => n.endsWith(".history.json") || n.endsWith(".history.json.gz"));
  return `${entries.length}:${entries.sort().pop() ?? ""}`;
}

/** Whether a computation from the state read at `atRead` still holds now: only with a mark, and the same one. */
export function stillHolds(atRead: string | undefined, now: string | undefined): boolean {
  return atRead !== undefined && atRead === now;
}
