/**
 * pulumi-fleet's own lease on a stack, beside the CLI's lock (issue 53: locks are owned, not guessed).
 * The CLI's lock of a DIY backend says only `{pid, username, hostname, timestamp}`, and two containers
 * can share a hostname and a pid: a lock cannot be judged stale from them. So every command of
 * pulumi-fleet that takes the CLI's lock holds a lease first, kept where the state is (stack-lease.<stack>.json
 * beside a file backend's state, table pulumi_fleet_stack_lease of a PostgreSQL backend, else this
 * machine's directory: stack-record-store.ts). The lease is exclusive (a second pulumi-fleet command of
 * the stack waits for it or fails naming its holder) and renewed by its command every quarter of
 * STACK_LEASE_MS; a holder that crashes or is killed stops renewing, and its lease expires by itself.
 *
 * A CLI lock is then proven left over when a pulumi-fleet lease that is over (ended, or expired) was
 * held on the lock's host when the lock was taken: that command's CLI took it, and that command is
 * gone. A command that sees the holder's processes (same boot and pid namespace) and finds it gone
 * (core/base/process-identity.ts) need not wait for the lease to expire. A lock no lease accounts for (a plain `pulumi` command, an earlier version, a backend this
 * machine does not share) is never removed without --force-unlock.
 */
import * as crypto from "node:crypto";
import * as os from "node:os";
import { Backend } from "./backend";
import { StackRecordStore, stackRecordStore } from "./stack-record-store";
import { ProcessIdentity, processIdentity, provenGone } from "../../core/base/process-identity";

/** How long a lease outlives its holder's last renewal (renewed every quarter of it). */
export const STACK_LEASE_MS = 60_000;
/** Leases kept after they are over, to account for locks their commands left. */
const KEPT = 16;
/** The CLI's lock timestamps have one-second precision. */
export const SLACK_MS = 2000;

export interface LeaseWindow {
  id: string;
  host: string;
  pid: number;
  startedAt: number;
  /** Last renewal plus the lease. */
  expiresAt: number;
  /** Released by its holder. */
  endedAt?: number;
  /** When a command that sees its processes found its holder gone (core/base/process-identity.ts). */
  diedAt?: number;
  proc?: ProcessIdentity;
}

export interface LeaseBook {
  current?: LeaseWindow;
  past: LeaseWindow[];
}

export type LeaseStore = StackRecordStore<LeaseBook>;

export function stackLeaseStore(backend: Backend, project: string, stack: string): LeaseStore {
  return stackRecordStore<LeaseBook>(backend, project, stack, { file: "stack-lease", table: "pulumi_fleet_stack_lease", column: "book" });
}

const isOver = (w: LeaseWindow, now: number) => w.endedAt !== undefined || w.diedAt !== undefined || w.expiresAt <= now;
const overAt = (w: LeaseWindow) => w.endedAt ?? Math.min(w.diedAt ?? Infinity, w.expiresAt);

/** The lease held now, if any. */
export function liveLease(book: LeaseBook | undefined, now: number): LeaseWindow | undefined {
  return book?.current && !isOver(book.current, now) ? book.current : undefined;
}

/**
 * The lease that accounts for a CLI lock (taken on `host` at `since`) as a leftover: over, held on that
 * host when the lock was taken, and not `own`. Undefined: nothing proves the lock stale.
 */
export function leftoverOf(lock: { host: string; since: string }, book: LeaseBook | undefined, now: number, own?: string): LeaseWindow | undefined {
  const taken = Date.parse(lock.since);
  if (!book || !Number.isFinite(taken)) return undefined;
  return [...(book.current ? [book.current] : []), ...book.past].find(
    (w) => w.id !== own && w.host === lock.host && isOver(w, now) && w.startedAt - SLACK_MS <= taken && taken <= overAt(w) + SLACK_MS,
  );
}

export interface LeaseOptions {
  leaseMs?: number;
  /** This host's name, as the CLI's lock says it (tests give two holders one name). */
  hostname?: string;
  now?: () => number;
  /** A renewal that failed, or found the lease taken by another after it expired. */
  warn?: (message: string) => void;
  /** --force-unlock: take the lease over even from a live holder. */
  force?: boolean;
}

export interface HeldLease {
  window: LeaseWindow;
  release(): Promise<void>;
  /** Stops renewing without ending it: the lease expires by itself (a command whose CLI may still be finishing). */
  abandon(): void;
}

/** Takes the stack's lease, or returns the live lease of another holder. */
export async function takeLease(store: LeaseStore, options: LeaseOptions = {}): Promise<HeldLease | { heldBy: LeaseWindow }> {
  const leaseMs = options.leaseMs ?? STACK_LEASE_MS;
  const now = options.now ?? Date.now;
  const proc = processIdentity();
  const mine: LeaseWindow = {
    id: crypto.randomUUID(),
    host: options.hostname ?? os.hostname(),
    pid: process.pid,
    startedAt: now(),
    expiresAt: now() + leaseMs,
    ...(proc ? { proc } : {}),
  };
  const book = await store.update((b) => {
    let previous = b?.current;
    if (previous && liveLease(b, now())) {
      // Its holder proven gone (it ran where this process sees its processes): no need to wait for its lease.
      if (provenGone(previous.proc, proc)) previous = { ...previous, diedAt: now() };
      else if (!options.force) return b!;
    }
    return {
      current: { ...mine, startedAt: now(), expiresAt: now() + leaseMs },
      past: [...(previous ? [previous] : []), ...(b?.past ?? [])].slice(0, KEPT),
    };
  });
  if (book.current?.id !== mine.id) return { heldBy: book.current! };
  const window = book.current;
  const ours = (b: LeaseBook | undefined) => b?.current?.id === mine.id;
  let renewing: Promise<unknown> = Promise.resolve();
  const renew = setInterval(() => {
    renewing = store
      .update((b) => (ours(b) ? { ...b!, current: { ...b!.current!, expiresAt: now() + leaseMs } } : (b ?? { past: [] })))
      .then((b) => {
        if (!ours(b)) options.warn?.(`warning: the lease of this command on the stack (${store.where}) expired and was taken by another command`);
      })
      .catch((err) => options.warn?.(`warning: renewing this command's lease on the stack (${store.where}) failed: ${(err as Error).message}`));
  }, leaseMs / 4);
  renew.unref();
  return {
    window,
    abandon: () => clearInterval(renew),
    release: async () => {
      clearInterval(renew);
      await renewing;
      await store.update((b) => (ours(b) ? { ...b!, current: { ...b!.current!, endedAt: now() } } : (b ?? { past: [] })));
    },
  };
}
