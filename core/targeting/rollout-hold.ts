/**
 * Where a bundle's rollout (rollout.ts) is held, and the one sentence that says so: the desired state's
 * failures of the clusters it holds back, the message of a failed `up` and `status` all print this.
 */
import { Rollout } from "./rollout";

export interface RolloutHold {
  bundle: string;
  /** The first wave's partition with a cluster that stops the rollout. */
  partition: string;
  /** Those clusters of that wave. */
  notReady: string[];
  /** The clusters held behind it: from the first later wave that waits on (waves before that ran beside it). */
  held: string[];
}

/** Where the rollout of `r` is held, given which clusters stop it (failed, not ready), or undefined. */
export function rolloutHold(r: Rollout & { bundle: string }, stopping: (cluster: string) => boolean): RolloutHold | undefined {
  const at = r.waves.findIndex((w) => w.clusters.some(stopping));
  if (at < 0) return undefined;
  const next = r.waves.findIndex((w, i) => i > at && w.afterPrevious);
  return {
    bundle: r.bundle,
    partition: r.waves[at].partition || "(unnamed)",
    notReady: r.waves[at].clusters.filter(stopping),
    held: next < 0 ? [] : r.waves.slice(next).flatMap((w) => w.clusters),
  };
}

/** The one phrasing of a hold. */
export function holdMessage(h: RolloutHold): string {
  return (
    `rollout paused at partition ${h.partition} of bundle ${h.bundle}: not ready on ${h.notReady.join(", ")}` +
    (h.held.length ? `; ${h.held.join(", ")} keep what they had until it is (rolloutStrategy; the next \`up\` goes on from there)` : "")
  );
}

/** Each rollout's hold message, given the clusters whose deployment of its bundle stopped it. */
export function rolloutHoldMessages(
  rollouts: Iterable<Rollout & { gitRepo: string; bundle: string }>,
  stoppedOn: (bundle: { gitRepo: string; bundle: string }) => string[],
): string[] {
  const out: string[] = [];
  for (const r of rollouts) {
    const stopped = new Set(stoppedOn(r));
    const hold = rolloutHold(r, (c) => stopped.has(c));
    if (hold) out.push(holdMessage(hold));
  }
  return out;
}
