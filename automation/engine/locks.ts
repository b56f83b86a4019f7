/**
 * The stack lock of Pulumi's DIY backends (file://, postgres://, s3://, ...): one lock object per
 * running update, `{pid, username, hostname, timestamp}`, taken by up, refresh, destroy and import (not
 * by preview). The CLI never waits for a lock and never removes one left by a dead process; a team's
 * next `up` after a crash would stay blocked. Here:
 *  - a lock whose process is dead on this same host is removed, with a warning that says so;
 *  - a lock held by a live process, or taken on another host, is never removed unless the user says
 *    --force-unlock: the update fails at once naming the stack and the holder, or waits (--wait-lock).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import { Stack } from "@pulumi/pulumi/automation";
import { processAlive } from "./engine-tmp";
import { throwIfStopped } from "../../core/stop-signal";

export interface LockHolder {
  /** The lock object's address as the CLI prints it (credentials masked). */
  where: string;
  user: string;
  host: string;
  pid: number;
  since: string;
}

// The CLI's words (pkg/backend/diy/lock.go at v3.259.0): a header, then one line per lock.
const LOCKED = /the stack is currently locked by (\d+) lock\(s\)/;
const HOLDER = /^\s*(\S+): created by (.*)@(\S+) \(pid (\d+)\) at (\S+)\s*$/gm;

/** The holders named in a CLI error, or undefined when the error is not a lock error. */
export function lockHolders(errorText: string): LockHolder[] | undefined {
  if (!LOCKED.test(errorText)) return undefined;
  return [...errorText.matchAll(HOLDER)].map((m) => ({ where: m[1], user: m[2], host: m[3], pid: Number(m[4]), since: m[5] }));
}

/**
 * A holder is known to be gone only when it ran on this host and its pid is dead, or the pid now
 * belongs to a process started after the lock was taken (pid reuse). Anything else may be running.
 */
export function isStale(h: LockHolder, hostname = os.hostname()): boolean {
  if (h.host !== hostname || !Number.isInteger(h.pid) || h.pid <= 0) return false;
  if (!processAlive(h.pid)) return true;
  const taken = Date.parse(h.since);
  const started = processStartMs(h.pid);
  // Lock timestamps have one-second precision: allow for it before calling the pid reused.
  return started !== undefined && Number.isFinite(taken) && started > taken + 2000;
}

function processStartMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    const uptime = Number(fs.readFileSync("/proc/uptime", "utf8").split(" ")[0]);
    return Date.now() - (uptime - ticks / 100) * 1000; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

export function describeHolder(h: LockHolder): string {
  return `${h.user}@${h.host} (pid ${h.pid}) since ${h.since}`;
}

/** The stack is locked by someone who may still be running. */
export class StackLockedError extends Error {
  constructor(
    readonly stack: string,
    readonly holders: LockHolder[],
  ) {
    super(
      `stack ${stack} is locked by ${holders.map(describeHolder).join("; ") || "an unknown holder"}: another update of this stack is running ` +
        "(or ran on another host and died there). Wait for it (--wait-lock), or if you know it is gone, remove the lock with " +
        `\`npm run cancel -- --stack ${stack} --force-unlock\` (or --force-unlock on this command).`,
    );
  }
}

/**
 * Removes the given locks: a file backend's lock files one by one (so a lock taken meanwhile by a new
 * update survives); for other backends the CLI's `cancel`, which removes every lock of the stack, run
 * only right after every lock was seen to be removable.
 */
export async function removeLocks(stack: Stack, holders: LockHolder[]): Promise<void> {
  const files = holders.map((h) => (h.where.startsWith("file://") ? h.where.slice("file://".length).split("?")[0] : undefined));
  if (files.length && files.every((f) => f !== undefined)) {
    for (const f of files) fs.rmSync(f!, { force: true });
    return;
  }
  await stack.cancel();
}

export interface LockPolicy {
  stack: string;
  waitLock?: boolean;
  forceUnlock?: boolean;
  /** How long --wait-lock waits at most (default 30 minutes). */
  waitLimitMs?: number;
  /** Poll interval while waiting (default 2 s). */
  pollMs?: number;
  warn: (message: string) => void;
}

/**
 * Runs an engine command that takes the stack lock. A lock error is handled by the policy above and
 * the command is retried; any other error is the command's own.
 */
export async function withStackLock<T>(stack: Stack, policy: LockPolicy, run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + (policy.waitLimitMs ?? 30 * 60_000);
  let waiting = false;
  let removals = 0;
  for (;;) {
    throwIfStopped(); // a stopped operation starts no engine command, and stops waiting (--wait-lock)
    try {
      return await run();
    } catch (err) {
      const holders = lockHolders((err as Error).message ?? "");
      if (!holders) throw err;
      const stale = holders.length > 0 && holders.every((h) => isStale(h));
      // Bounded: a holder that keeps coming back is a live update, not a leftover.
      if ((stale || policy.forceUnlock) && removals++ < 3) {
        const why = stale ? "its process is no longer running on this host" : "--force-unlock";
        for (const h of holders) policy.warn(`warning: removing the lock on stack ${policy.stack} left by ${describeHolder(h)}: ${why}`);
        await removeLocks(stack, holders);
        continue;
      }
      if (!policy.waitLock) throw new StackLockedError(policy.stack, holders);
      if (Date.now() > deadline) throw new StackLockedError(policy.stack, holders);
      if (!waiting) policy.warn(`stack ${policy.stack} is locked by ${holders.map(describeHolder).join("; ")}; waiting for it (--wait-lock)`);
      waiting = true;
      await new Promise((r) => setTimeout(r, policy.pollMs ?? 2000));
    }
  }
}
