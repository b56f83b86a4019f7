/**
 * Pairs held back without failing: by a maintenance window (stack `schedules`), by `up --partition`
 * and by their cluster paused (stack `clusters[].paused`).
 * A held pair keeps what it has, as a failed one does (held.ts registers the state's objects and
 * deploymentID unchanged); a new pair is not deployed. Only pairs that would change are held: one whose
 * deploymentID is unchanged has nothing to hold. Pure decisions of the plan, the last records and the windows.
 */
import { FleetError } from "../base/errors";
import { ClusterConfig, ClusterPause } from "../config/stack";
import { BundleRollout } from "../plan/pipeline";
import { OutsideWindow, outsideWindowMessage } from "../targeting/schedule-windows";
import { PlanEntry } from "../targeting/plan";
import { bundleRef, deploymentKey } from "../model/keys";
import { PreviousDeployment } from "./previous";
import { DeploymentRecord, FleetSummary } from "./records";

type Pair = { gitRepo: string; bundle: string; cluster: string };

/**
 * Fleet's off-schedule BundleDeployment (v0.16.0: `spec.offSchedule`): its agent neither deploys nor
 * updates it. So on a cluster outside its windows a new or changed pair is held (`changing`: the pairs
 * still deploying, deploymentIDs final).
 */
export function windowHolds(
  changing: readonly PlanEntry[],
  outside: ReadonlyMap<string, OutsideWindow>,
  previous: PreviousDeployment | undefined,
): [Pair, FleetError][] {
  if (!outside.size) return [];
  return changing
    .filter((e) => outside.has(e.cluster) && previous?.deploymentIds?.[deploymentKey(e)] !== e.deploymentId)
    .map((e) => [e, windowError(outside.get(e.cluster)!)]);
}

/**
 * Fleet's bundle controller does not delete an off-schedule BundleDeployment when its bundle stops
 * targeting the cluster (a deleted bundle's are deleted, off schedule or not). So on a cluster outside
 * its windows a pair whose bundle was read now but no longer targets the cluster is kept, not pruned.
 * Decided after the rollouts: a pair leaving is in no partition. `planned`: every pair of the plan.
 */
export function keptOutsideWindows(
  planned: readonly PlanEntry[],
  outside: ReadonlyMap<string, OutsideWindow>,
  previous: PreviousDeployment | undefined,
  readNow: ReadonlySet<string>,
): [Pair, FleetError][] {
  if (!outside.size) return [];
  return leaving(planned, previous)
    .filter((r) => outside.has(r.cluster) && readNow.has(bundleRef(r)))
    .map((r) => [r, windowError(outside.get(r.cluster)!)]);
}

/** The pairs the last update deployed that this plan no longer has: pruned, unless a hold keeps them. */
function leaving(planned: readonly PlanEntry[], previous: PreviousDeployment | undefined): DeploymentRecord[] {
  const targeted = new Set(planned.map(deploymentKey));
  return Object.entries(previous?.records ?? {})
    .filter(([key]) => !targeted.has(key))
    .map(([, r]) => r);
}

const windowError = (o: OutsideWindow) => new FleetError(outsideWindowMessage(o), { field: "schedules" });

/** The one phrasing of a paused cluster. */
export function pausedMessage(cluster: string, p: ClusterPause): string {
  const who = [p.by ? `by ${p.by}` : "", p.since ? `since ${p.since}` : ""].filter(Boolean).join(" ");
  return `held: cluster ${cluster} is paused${who ? ` ${who}` : ""}: ${p.reason} (clusters[].paused; it keeps exactly what it has until resumed)`;
}

/**
 * Fleet's paused Cluster (`spec.paused`): its BundleDeployments are not updated. Here, for an incident,
 * stricter: every pair planned on a paused cluster is held (registered as the state holds it, paused, so
 * the provider neither applies, retries nor prunes; one new to the cluster is not deployed).
 */
export function pausedHolds(alive: readonly PlanEntry[], paused: ReadonlyMap<string, ClusterPause>): [Pair, FleetError][] {
  if (!paused.size) return [];
  return alive.filter((e) => paused.has(e.cluster)).map((e) => [e, pausedError(e.cluster, paused.get(e.cluster)!)]);
}

/**
 * A pair leaving a paused cluster (a target edit, a bundle or GitRepo gone) is kept as it is: nothing on
 * the cluster changes until the pause is removed. Decided after the rollouts: a pair leaving is in no
 * partition. `planned`: every pair of the plan.
 */
export function keptWhilePaused(
  planned: readonly PlanEntry[],
  paused: ReadonlyMap<string, ClusterPause>,
  previous: PreviousDeployment | undefined,
): [Pair, FleetError][] {
  if (!paused.size) return [];
  return leaving(planned, previous)
    .filter((r) => paused.has(r.cluster))
    .map((r) => [r, pausedError(r.cluster, paused.get(r.cluster)!)]);
}

/** The stack's paused clusters (clusters[].paused), by name: read by the desired state and by up's drift refresh. */
export function pausedClusters(clusters: readonly ClusterConfig[]): Map<string, ClusterPause> {
  return new Map(clusters.flatMap((c) => (c.paused ? [[c.name, c.paused] as const] : [])));
}

/** The agents the summary records: a paused cluster's is the one it still runs (the last update's), not the one configured. */
export function agentsWhilePaused(
  agents: FleetSummary["agents"],
  paused: ReadonlyMap<string, ClusterPause>,
  previous: PreviousDeployment | undefined,
): FleetSummary["agents"] {
  if (!paused.size) return agents;
  const out = { ...agents };
  for (const cluster of paused.keys()) {
    const last = previous?.agents?.[cluster];
    if (last) out[cluster] = last;
    else delete out[cluster];
  }
  return out;
}

const pausedError = (cluster: string, p: ClusterPause) => new FleetError(pausedMessage(cluster, p), { cluster, field: "paused" });

/** Every partition name of this update's rollouts, in rollout order (first seen first). */
export function knownPartitions(rollouts: Iterable<BundleRollout>): string[] {
  const names: string[] = [];
  for (const r of rollouts) for (const w of r.waves) if (w.partition && !names.includes(w.partition)) names.push(w.partition);
  return names;
}

/**
 * `up --partition NAME`: each bundle with a rolloutStrategy deploys its partitions up to and including
 * NAME, in its rollout order, and holds the clusters of the waves after it; a bundle whose rollout has no
 * partition NAME is held whole (a CI pipeline approves partition by partition, and ends with a plain
 * `up`). Bundles without a rolloutStrategy are not staged and deploy as usual. Unchanged pairs are not
 * held. An unknown NAME is an error listing the known ones.
 */
export function partitionHolds(
  rollouts: ReadonlyMap<string, BundleRollout>,
  entries: readonly PlanEntry[],
  unchanged: ReadonlySet<PlanEntry>,
  partition: string,
): [PlanEntry, FleetError][] {
  const known = knownPartitions(rollouts.values());
  if (!known.includes(partition)) {
    throw new FleetError(
      `--partition ${JSON.stringify(partition)} is no partition of this update's rollouts; ` +
        (known.length ? `they are: ${known.join(", ")}` : "no bundle has a rolloutStrategy (fleet.yaml), so there is nothing to stage"),
      { field: "--partition" },
    );
  }
  const out: [PlanEntry, FleetError][] = [];
  for (const e of entries) {
    const r = rollouts.get(bundleRef(e));
    if (!r || unchanged.has(e)) continue;
    const last = r.waves.map((w) => w.partition).lastIndexOf(partition);
    const at = r.waves.findIndex((w) => w.clusters.includes(e.cluster));
    if (last >= 0 && at <= last) continue;
    const own = [...new Set(r.waves.map((w) => w.partition || "(unnamed)"))].join(", ");
    out.push([
      e,
      new FleetError(
        last < 0
          ? `held by --partition ${partition}: the rollout of bundle ${e.bundle} has no partition ${partition} (its partitions: ${own}); a plain \`up\` deploys it`
          : `held by --partition ${partition}: cluster ${e.cluster} is in partition ${r.waves[at]?.partition || "(unnamed)"}, after ${partition} in the rollout of bundle ${e.bundle}`,
        { field: "rolloutStrategy" },
      ),
    ]);
  }
  return out;
}
