/** cancel: the stack's lock removed by hand, only where a lease proves its holder gone (or --force-unlock). */
import { resolveBackend } from "../engine/backend";
import { PROJECT_NAME } from "../engine/stack";
import { describeHolder, leaseHolder, leftoverProof, lockHolders, removeLocks, StackLockedError } from "../engine/locks";
import { liveLease, stackLeaseStore } from "../engine/stack-lease";
import { provenGone } from "../../core/base/process-identity";
import { OperationOptions } from "./results";
import { open, stackRootUrn } from "./session";

/**
 * `npm run cancel`: removes the stack's lock by hand. Only a lock a pulumi-fleet lease that is over
 * accounts for (engine/stack-lease.ts) is removed without forceUnlock, and none while a command holds
 * the stack's lease. Returns what was removed.
 */
export async function cancel(options: OperationOptions): Promise<string[]> {
  const s = await open(options);
  // Only a command that takes the lock reveals its holders: an empty refresh of the stack's root.
  const root = stackRootUrn(s.state);
  try {
    await s.stack.refresh({ target: root ? [root] : undefined, exclude: s.excluded });
    return [];
  } catch (err) {
    const holders = lockHolders((err as Error).message ?? "");
    if (!holders) throw err;
    const leases = stackLeaseStore(resolveBackend(options), PROJECT_NAME, options.stack);
    const book = await leases.read();
    const now = Date.now();
    const current = liveLease(book, now);
    const running = current && !provenGone(current.proc) ? current : undefined;
    // A holder proven gone here is over, as the next up would find it (engine/stack-lease.ts takeLease).
    const seen = current && !running ? { ...book!, current: { ...current, diedAt: now } } : book;
    const live = running ? [leaseHolder(running, leases.where), ...holders] : holders.filter((h) => !leftoverProof(h, seen, now));
    if (live.length && !options.forceUnlock) throw new StackLockedError(options.stack, live);
    await removeLocks(s.stack, holders);
    return holders.map(describeHolder);
  }
}
