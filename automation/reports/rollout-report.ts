/**
 * How a bundle's rolloutStrategy reads to people (core/targeting/rollout.ts): the partitions in order
 * for a preview and a pull request (where one is held is core's: core/targeting/rollout-hold.ts).
 */
import type { BundleRollout, FleetState } from "../../core/plan/pipeline";

/** "canary (live-1), then rest (live-2, live-3)": each partition with its clusters, and which ones wait. */
export function describeRollout(r: BundleRollout): string {
  const steps = r.waves.map(
    (w, i) => `${i === 0 ? "" : w.afterPrevious ? " → once ready, " : " and at once "}${w.partition || "(unnamed)"} (${w.clusters.join(", ")})`,
  );
  return steps.join("");
}

/** One line per bundle with a rolloutStrategy, for the preview's notes and the PR summary. */
export function rolloutLines(state: FleetState): string[] {
  return [...(state.rollouts ?? [])]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([, r]) => `bundle ${r.bundle} (GitRepo ${r.gitRepo}) rolls out: ${describeRollout(r)}`);
}
