/**
 * Why a (bundle, cluster) pair the last update deployed is not in this plan, as a value: decided here
 * once from the stack's configuration, the bundles read and the plan; the preview, the PR summary, the
 * preview page and `status` print it. A pair that failed and keeps what it deployed has not left.
 */
import type { FleetState } from "../plan/pipeline";
import type { DeploymentRecord } from "./records";
import { deploymentKey } from "../model/keys";

export type DepartureCode =
  "clusterRemoved" | "movedToShard" | "gitRepoRemoved" | "bundleGone" | "doNotDeploy" | "targetRemoved" | "noLongerMatching" | "noTargetMatches";

export interface Departure {
  code: DepartureCode;
  gitRepo: string;
  bundle: string;
  cluster: string;
  /** The target that selected the cluster when it was deployed (targetRemoved, noLongerMatching), or that says doNotDeploy. */
  target?: string;
  /** bundleGone: the GitRepo's commit now. */
  commit?: string;
}

/** What the rule reads of an update's plan. */
export type DepartureFacts = Pick<FleetState, "config" | "bundles" | "sources" | "plan">;

/** Why the record's pair is not planned (the caller knows it is not). */
export function departureOf(r: DeploymentRecord, state: DepartureFacts): Departure {
  const pair = { gitRepo: r.gitRepo, bundle: r.bundle, cluster: r.cluster };
  // A shard's stack holds only its clusters: one of another shard was moved there, not removed.
  if (state.config.shard?.elsewhere.includes(r.cluster)) return { code: "movedToShard", ...pair };
  if (!state.config.clusters.some((c) => c.name === r.cluster)) return { code: "clusterRemoved", ...pair };
  const repo = state.config.gitRepos.find((g) => g.name === r.gitRepo);
  if (!repo) return { code: "gitRepoRemoved", ...pair };
  if (!state.bundles.some((b) => b.gitRepo === r.gitRepo && b.name === r.bundle)) {
    const commit = state.sources.get(r.gitRepo)?.commit;
    return { code: "bundleGone", ...pair, ...(commit ? { commit } : {}) };
  }
  const skipped = state.plan.skipped.find((s) => s.gitRepo === r.gitRepo && s.bundle === r.bundle && s.cluster === r.cluster);
  if (skipped) return { code: "doNotDeploy", ...pair, target: skipped.target };
  if (r.target && !repo.targets.some((t) => t.name === r.target)) return { code: "targetRemoved", ...pair, target: r.target };
  if (r.target) return { code: "noLongerMatching", ...pair, target: r.target };
  return { code: "noTargetMatches", ...pair };
}

/**
 * Every pair the records hold that this update no longer deploys, by deployment key, with why: neither
 * planned nor kept by a failure (failed pairs keep what they deployed, core/desired/held.ts).
 */
export function departures(records: Record<string, DeploymentRecord>, state: DepartureFacts & Pick<FleetState, "failures">): Map<string, Departure> {
  const planned = new Set(state.plan.entries.map(deploymentKey));
  const out = new Map<string, Departure>();
  for (const [key, r] of Object.entries(records).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (planned.has(key) || state.failures?.has(r)) continue;
    out.set(key, departureOf(r, state));
  }
  return out;
}

/** What reports say of a pruned pair no record explains (a name no earlier update recorded). */
export const UNRECORDED_DEPARTURE = "not in the plan any more";

/** The one phrasing of a departure (Markdown code spans; plain reports drop the backticks). */
export function departureText(d: Departure | undefined): string {
  if (!d) return UNRECORDED_DEPARTURE;
  const { gitRepo, bundle, cluster, target } = d;
  switch (d.code) {
    case "movedToShard":
      return `cluster \`${cluster}\` moved to another shard of the environment`;
    case "clusterRemoved":
      return `cluster \`${cluster}\` was removed from the stack`;
    case "gitRepoRemoved":
      return `GitRepo \`${gitRepo}\` was removed from the stack`;
    case "bundleGone":
      return `bundle \`${bundle}\` is no longer in GitRepo \`${gitRepo}\` at ${d.commit?.slice(0, 12) ?? "its commit"}`;
    case "doNotDeploy":
      return `target \`${target}\` sets doNotDeploy for cluster \`${cluster}\``;
    case "targetRemoved":
      return `target \`${target}\` was removed from GitRepo \`${gitRepo}\``;
    case "noLongerMatching":
      return `target \`${target}\` no longer matches cluster \`${cluster}\``;
    case "noTargetMatches":
      return `no target of GitRepo \`${gitRepo}\` matches cluster \`${cluster}\` any more`;
  }
}
