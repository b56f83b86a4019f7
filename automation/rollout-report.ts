/**
 * How a bundle's rolloutStrategy reads to people (core/targeting/rollout.ts): the partitions in order
 * for a preview and a pull request, and where a rollout stopped for a failed `up` and for `status`.
 */
import { BundleRollout, FleetState } from "../core/pipeline";
import { BundleId } from "../core/desired/keys";

/** "canary (live-1), then rest (live-2, live-3)": each partition with its clusters, and which ones wait. */
export function describeRollout(r: BundleRollout): string {
  const steps = r.waves.map((w, i) => `${i === 0 ? "" : w.afterPrevious ? " → once ready, " : " and at once "}${w.partition || "(unnamed)"} (${w.clusters.join(", ")})`);
  return steps.join("");
}

/** One line per bundle with a rolloutStrategy, for the preview's notes and the PR summary. */
export function rolloutLines(state: FleetState): string[] {
  return [...(state.rollouts ?? [])].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, r]) => `bundle ${r.bundle} (GitRepo ${r.gitRepo}) rolls out: ${describeRollout(r)}`);
}

/**
 * Where a rollout stops: the first wave with a cluster that `stopping` names, those clusters, and the
 * clusters held behind it (from the first later wave that waits on; waves before that ran beside it).
 */
export function heldBehind(r: BundleRollout, stopping: (cluster: string) => boolean): { partition: string; notReady: string[]; held: string[] } | undefined {
  const at = r.waves.findIndex((w) => w.clusters.some(stopping));
  if (at < 0) return undefined;
  const next = r.waves.findIndex((w, i) => i > at && w.afterPrevious);
  return { partition: r.waves[at].partition || "(unnamed)", notReady: r.waves[at].clusters.filter(stopping), held: next < 0 ? [] : r.waves.slice(next).flatMap((w) => w.clusters) };
}

/** Where each bundle's rollout stopped, given the clusters whose deployment of it failed. */
export function rolloutStops(state: FleetState | undefined, failedClustersOf: (bundle: BundleId) => string[]): string[] {
  const out: string[] = [];
  for (const [, r] of state?.rollouts ?? []) {
    const bundle = r.bundle;
    const failed = new Set(failedClustersOf(r));
    const stop = heldBehind(r, (c) => failed.has(c));
    if (!stop) continue;
    out.push(`rollout of bundle ${bundle} stopped at partition ${stop.partition}: not ready on ${stop.notReady.join(", ")}` +
      (stop.held.length ? `; ${stop.held.join(", ")} keep what they had until it is (the next \`up\` goes on from there)` : ""));
  }
  return out;
}
