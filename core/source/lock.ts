/**
 * A cross-process lock on a directory of the git cache, so two runs at once (two stacks, a preview and
 * an up, two containers sharing the cache) never write the same clone concurrently.
 *
 * Owned, not guessed (issue 53): the lock is a file holding its owner's record, published whole with
 * link(2), which fails if the name exists. There is no moment where the lock exists without its owner
 * (the old mkdir-then-write left one, and a waiter reading the empty owner there removed a live lock).
 * The holder renews a lease while it holds the lock: it touches the file (by its descriptor, so only its
 * own file) every quarter of the lease. A waiter removes a lock only when that lease expired, never by
 * pid or host: pids mean nothing across containers. A holder that crashed or was killed leaves a lock
 * that expires by itself within GIT_LOCK_LEASE_MS, or at once for a waiter that sees its processes and
 * finds it gone (same boot and pid namespace, pid and start time: core/base/process-identity.ts). Removing an
 * expired lock is itself serialised (a `.break` file taken the same way), so two waiters that both saw it expired cannot remove the lock the
 * first of them took next. Clocks of the hosts sharing the cache are assumed within the lease.
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { throwIfStopped } from "../base/stop-signal";
import { ProcessIdentity, processIdentity, provenGone } from "../base/process-identity";

/** How long a lock outlives its holder's last renewal. */
export const GIT_LOCK_LEASE_MS = 60_000;
/** Removing an expired lock takes microseconds: a `.break` file older than this was left by a crash. */
const BREAK_STALE_MS = 10_000;
const POLL_MS = 50;

export interface LockOwner {
  id: string;
  host: string;
  pid: number;
  leaseMs: number;
  /** Proves the holder gone at once to a waiter that sees its processes (core/base/process-identity.ts). */
  proc?: ProcessIdentity;
}

export interface HeldLock {
  owner: LockOwner;
  /** Whether the file at the lock's path is still this holder's (false: its lease expired and it was taken). */
  held(): boolean;
  release(): void;
}

export interface LockOptions {
  leaseMs?: number;
  /** This host's name, as the owner record says it (tests give two holders one name). */
  hostname?: string;
  now?: () => number;
}

/**
 * Publishes `owner` at `file` if nothing is there: the record is written to a temporary file first and
 * linked into place whole. Returns the open descriptor of the published file, or undefined if taken.
 */
function publish(file: string, owner: LockOwner): number | undefined {
  const temp = `${file}.${owner.id}.tmp`;
  const fd = fs.openSync(temp, "wx");
  try {
    fs.writeFileSync(fd, JSON.stringify(owner));
    fs.fsyncSync(fd);
    fs.linkSync(temp, file);
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return undefined;
    throw err;
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** What is at the lock's path: its inode, owner (undefined: unreadable, e.g. an earlier version's directory) and last renewal. */
function inspect(file: string): { ino: number; owner?: LockOwner; renewedMs: number } | undefined {
  try {
    const st = fs.lstatSync(file);
    let owner: LockOwner | undefined;
    try {
      if (st.isFile()) owner = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch {
      owner = undefined;
    }
    return { ino: st.ino, owner, renewedMs: st.mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** Whether the lock at `file` (as inspected) is past its lease: the owner's, else the default. */
export function leaseExpired(at: { owner?: LockOwner; renewedMs: number }, now: number): boolean {
  const lease = Number.isFinite(at.owner?.leaseMs) && at.owner!.leaseMs > 0 ? at.owner!.leaseMs : GIT_LOCK_LEASE_MS;
  return now - at.renewedMs > lease;
}

/** Whether the lock is over: its lease expired, or its holder is proven gone. */
const isOver = (at: { owner?: LockOwner; renewedMs: number }, now: number) => leaseExpired(at, now) || provenGone(at.owner?.proc);

/** Removes the lock at `file` if it is the same expired one, serialised with every other remover. */
function breakExpired(file: string, seen: { ino: number }, o: Required<LockOptions>): void {
  const guard = `${file}.break`;
  const proc = processIdentity();
  const guardOwner: LockOwner = { id: crypto.randomUUID(), host: o.hostname, pid: process.pid, leaseMs: BREAK_STALE_MS, ...(proc ? { proc } : {}) };
  const fd = publish(guard, guardOwner);
  if (fd === undefined) {
    const g = inspect(guard);
    if (g && isOver(g, o.now())) fs.rmSync(guard, { recursive: true, force: true });
    return;
  }
  try {
    // Synchronous from here to the removal: nothing else of this process runs in between.
    const now = inspect(file);
    if (now && now.ino === seen.ino && isOver(now, o.now())) fs.rmSync(file, { recursive: true, force: true });
  } finally {
    if (inspect(guard)?.ino === fs.fstatSync(fd).ino) fs.rmSync(guard, { force: true });
    fs.closeSync(fd);
  }
}

/** Takes the lock at `file` once, or returns undefined when a live holder has it (an expired one is removed first). */
export function tryLock(file: string, options: LockOptions = {}): HeldLock | undefined {
  const o: Required<LockOptions> = { leaseMs: GIT_LOCK_LEASE_MS, hostname: os.hostname(), now: Date.now, ...options };
  const proc = processIdentity();
  const owner: LockOwner = { id: crypto.randomUUID(), host: o.hostname, pid: process.pid, leaseMs: o.leaseMs, ...(proc ? { proc } : {}) };
  let fd: number | undefined;
  for (let attempt = 0; fd === undefined && attempt < 2; attempt++) {
    try {
      fd = publish(file, owner);
    } catch (err) {
      // The directory was removed as unused (git-cache.ts) while we waited: it is ours to create again.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      fs.mkdirSync(path.dirname(file), { recursive: true });
      continue;
    }
    if (fd !== undefined) break;
    const seen = inspect(file);
    if (!seen || !isOver(seen, o.now())) return undefined;
    breakExpired(file, seen, o);
  }
  if (fd === undefined) return undefined;
  const ino = fs.fstatSync(fd).ino;
  const renew = setInterval(() => {
    const t = new Date(o.now());
    try {
      fs.futimesSync(fd!, t, t);
    } catch {
      // A failed renewal only lets the lease run out: the lock then ends as a crashed holder's would.
    }
  }, o.leaseMs / 4);
  renew.unref();
  const held = () => inspect(file)?.ino === ino;
  let released = false;
  return {
    owner,
    held,
    release: () => {
      if (released) return;
      released = true;
      clearInterval(renew);
      // Only its own: a lock it lost after its lease expired is another holder's now.
      if (held()) fs.rmSync(file, { force: true });
      fs.closeSync(fd!);
    },
  };
}

/** Runs `fn` holding the lock at `lockFile`; waits for a live holder at most `timeoutMs`. */
export async function withLock<T>(lockFile: string, fn: () => Promise<T>, timeoutMs = 10 * 60_000, options: LockOptions = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  fs.mkdirSync(path.dirname(lockFile), { recursive: true });
  let lock: HeldLock | undefined;
  while (!(lock = tryLock(lockFile, options))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for lock ${lockFile}`);
    throwIfStopped();
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  try {
    return await fn();
  } finally {
    lock.release();
  }
}
