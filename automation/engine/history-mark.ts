/**
 * The stack's history in a file backend, as a value that changes when an entry is added: a file backend
 * adds one at the end of every update, refresh or import. An operation that computed the desired state
 * from the state it read before taking the stack's lock keeps that computation only while the mark is
 * unchanged (automation/operation/desired.ts); otherwise another update finished meanwhile, or the
 * operation's own refresh ran, and it computes afresh from the state read under the lock.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { gunzipSync } from "node:zlib";
import { fileBackendPath, projectLayout } from "./stack";

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

/**
 * A file backend's newest history entry (what `pulumi stack history` lists first): "none" when the stack
 * has no history, undefined where this code does not read it (another backend, a backend from before
 * project folders, zstd compression, an unreadable entry): the CLI's to answer.
 */
export function newestHistoryEntry(fileDir: string | undefined, stack: string): { kind?: string; result?: string } | "none" | undefined {
  const historyDir = fileDir && fileBackendPath(fileDir, "history", stack);
  if (!fileDir || !historyDir || !projectLayout(fileDir)) return undefined;
  let names: string[];
  try {
    names = fs.readdirSync(historyDir);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? "none" : undefined;
  }
  if (names.some((n) => n.endsWith(".zst"))) return undefined;
  // <stack>-<unix ns>.history.json[.gz]: names of one length until 2286, so the last in order is the newest.
  const newest = names
    .filter((n) => /\.history\.json(\.gz)?$/.test(n))
    .sort()
    .pop();
  if (!newest) return "none";
  return readJson(path.join(historyDir, newest)) as { kind?: string; result?: string } | undefined;
}

/** A JSON file, gzipped or not; undefined when it cannot be read. */
export function readJson(file: string): unknown {
  try {
    const bytes = fs.readFileSync(file);
    return JSON.parse((file.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8"));
  } catch {
    return undefined;
  }
}
