/**
 * The stack lock of Pulumi's DIY backends (file://, postgres://, s3://, ...): one lock object per
 * running update, `{pid, username, hostname, timestamp}`, taken by up, refresh, destroy and import (not
 * by preview). The CLI never waits for a lock and never removes one left by a dead process; a team's
 * next `up` after a crash would stay blocked. Here every such command holds pulumi-fleet's own lease on
 * the stack (stack-lease.ts) around the CLI's lock, and:
 *  - a lock taken while a pulumi-fleet lease that is now over (released, or expired: its holder stopped
 *    renewing) was held on the lock's host is that command's leftover: removed, with a warning that says so;
 *  - any other lock (a live command's, a plain `pulumi` command's, an earlier version's) is never
 *    removed unless the user says --force-unlock: the update fails at once naming the stack and the
 *    holder, or waits (--wait-lock). Hostnames and pids alone prove nothing: two containers share them.
 */
import * as fs from "node:fs";
import { Stack } from "@pulumi/pulumi/automation";
import { stopSignal, throwIfStopped } from "../../core/base/stop-signal";
import { processAlive } from "./engine-tmp";
import { seesProcessesOf } from "../../core/base/process-identity";
import { HeldLease, LeaseBook, LeaseOptions, LeaseStore, LeaseWindow, leftoverOf, takeLease } from "./stack-lease";
import { ownLeftovers, StackLockStore } from "./own-locks";

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
  const all = [...errorText.matchAll(HOLDER)].map((m) => ({ where: m[1], user: m[2], host: m[3], pid: Number(m[4]), since: m[5] }));
  // The Automation API's error holds the CLI's stderr twice (as its own and in the command's error): one holder per lock.
  return all.filter((h, i) => all.findIndex((x) => x.where === h.where) === i);
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
      `stack ${stack} is locked by ${holders.map(describeHolder).join("; ") || "an unknown holder"}: another update of this stack is running, ` +
        "or a lock no pulumi-fleet lease accounts for (a plain `pulumi` command's, or an earlier version's) was left: such a lock is never removed " +
        "without --force-unlock. Wait for it (--wait-lock), or if you know it is gone, remove the lock with " +
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
  /** Where pulumi-fleet's leases on the stack are (stack-lease.ts); without it no lock is ever proven left over. */
  leases?: LeaseStore;
  lease?: Omit<LeaseOptions, "warn">;
  /** The stack's lock objects (own-locks.ts): where a stopped command's CLI left its lock, it is removed at the stop. */
  locks?: StackLockStore;
}

/** A lease's holder, in the words of a CLI lock's. */
export function leaseHolder(w: LeaseWindow, where: string): LockHolder {
  return { where, user: "pulumi-fleet", host: w.host, pid: w.pid, since: new Date(w.startedAt).toISOString() };
}

/**
 * The lease that proves a CLI lock left over (stack-lease.ts leftoverOf), the one rule `up` and `cancel`
 * share. A veto, never a proof: where the lease's command ran in this pid namespace, a live process of
 * the lock's pid may be its CLI still finishing (a stopped command's lease is left to expire), or
 * another holder that took the lock just after the lease ended.
 */
export function leftoverProof(h: LockHolder, book: LeaseBook | undefined, now: number, own?: string): LeaseWindow | undefined {
  const w = leftoverOf(h, book, now, own);
  return w && seesProcessesOf(w.proc) && processAlive(h.pid) ? undefined : w;
}

/** Why a lease accounts for a lock as a leftover, for the warning. */
function leftoverWhy(w: LeaseWindow): string {
  if (w.diedAt !== undefined && w.endedAt === undefined)
    return `the pulumi-fleet command that held the stack when it was taken (pid ${w.pid} on ${w.host}, lease ${w.id}) is no longer running on this host`;
  const gone =
    w.endedAt !== undefined
      ? `ended at ${new Date(w.endedAt).toISOString()}`
      : `stopped renewing its lease, which expired at ${new Date(w.expiresAt).toISOString()}`;
  return `it was taken while pulumi-fleet's command on ${w.host} (pid ${w.pid}, lease ${w.id}) held the stack, and that command ${gone}`;
}

/** Takes the stack's lease, waiting (--wait-lock) for a live holder or failing naming it; --force-unlock takes it over. */
async function leaseFor(leases: LeaseStore, policy: LockPolicy, deadline: number): Promise<HeldLease> {
  let waiting = false;
  for (;;) {
    throwIfStopped();
    const got = await takeLease(leases, { ...policy.lease, warn: policy.warn, force: policy.forceUnlock });
    if (!("heldBy" in got)) return got;
    const holder = leaseHolder(got.heldBy, leases.where);
    if (!policy.waitLock || Date.now() > deadline) throw new StackLockedError(policy.stack, [holder]);
    if (!waiting) policy.warn(`stack ${policy.stack} is held by ${describeHolder(holder)}; waiting for it (--wait-lock)`);
    waiting = true;
    await new Promise((r) => setTimeout(r, policy.pollMs ?? 2000));
  }
}

/**
 * Runs an engine command that takes the stack lock, holding pulumi-fleet's lease on the stack. A lock
 * error is handled by the policy above and the command is retried; any other error is the command's own.
 */
export async function withStackLock<T>(stack: Stack, policy: LockPolicy, run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + (policy.waitLimitMs ?? 30 * 60_000);
  const lease = policy.leases ? await leaseFor(policy.leases, policy, deadline) : undefined;
  let waiting = false;
  let removals = 0;
  try {
    for (;;) {
      throwIfStopped(); // a stopped operation starts no engine command, and stops waiting (--wait-lock)
      try {
        return await run();
      } catch (err) {
        const holders = lockHolders((err as Error).message ?? "");
        if (!holders) throw err;
        const book = await policy.leases?.read();
        const now = (policy.lease?.now ?? Date.now)();
        const proofs = holders.map((h) => leftoverProof(h, book, now, lease?.window.id));
        const stale = holders.length > 0 && proofs.every((p) => p !== undefined);
        // Bounded: a holder that keeps coming back is a live update, not a leftover.
        if ((stale || policy.forceUnlock) && removals++ < 3) {
          holders.forEach((h, i) =>
            policy.warn(
              `warning: removing the lock on stack ${policy.stack} left by ${describeHolder(h)}: ${proofs[i] ? leftoverWhy(proofs[i]!) : "--force-unlock"}`,
            ),
          );
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
  } finally {
    if (stopSignal.aborted && lease) await afterStop(lease, policy);
    else await lease?.release();
  }
}

/**
 * A stopped command: its CLI has exited (the Automation API awaits it), but may have left its lock
 * (own-locks.ts); that lock is removed and the lease ended. Where a lock of this lease's time is still
 * held by a live process (its CLI still finishing), the lease is left to expire by itself instead.
 */
export async function afterStop(lease: HeldLease, policy: Pick<LockPolicy, "stack" | "warn" | "locks" | "lease">): Promise<void> {
  try {
    const now = (policy.lease?.now ?? Date.now)();
    const mine = ownLeftovers((await policy.locks?.list()) ?? [], lease.window, now, () => false);
    const left = mine.filter((l) => !processAlive(l.pid));
    if (left.length) await policy.locks!.remove(left.map((l) => l.key));
    if (policy.locks && left.length === mine.length) return await lease.release();
  } catch (err) {
    policy.warn(`warning: the lock the stopped command's CLI may have left on stack ${policy.stack} was not checked: ${(err as Error).message}`);
  }
  lease.abandon();
}
