/**
 * fleet.yaml `rolloutStrategy`: in which order a bundle's clusters update, and which wait for others to
 * be ready. Fleet v0.16.1's rules (internal/cmd/controller/target: rollout.go, partition.go,
 * status.go), as they are in the code:
 * - With `partitions`, each partition holds the clusters its criteria match (Fleet's cluster matcher;
 *   a cluster may be in several); clusters matching none are in no partition. Without, clusters are cut
 *   into chunks of `autoPartitionSize` (default 25%) once there are `autoPartitionThreshold` (default
 *   200) or more, else they form one partition "All".
 * - A partition's maxUnavailable is its own, else the strategy's, else 100% (the code's default; the
 *   docs say 10%). Walking the partitions in order, Fleet updates a cluster only while fewer than the
 *   partition's maxUnavailable and the bundle's `maxUnavailable` (default 100%) are unavailable
 *   (updating counts); a partition with more clusters not up to date and ready than its maxUnavailable
 *   stops the walk (`maxUnavailablePartitions`, default 0, tolerated).
 * Here that becomes waves: each partition's clusters in groups of min(its maxUnavailable, the bundle's),
 * a wave waiting for the one before when Fleet's limits would make it wait (core/desired/state.ts makes
 * the deployments of a waiting wave depend on those before it: the engine applies them only once those
 * are applied and ready, and skips them if one fails). So one `up` walks the partitions in order and
 * stops where Fleet would pause; the next `up` goes on from there.
 */
import { RolloutStrategy } from "../bundles/types";
import { limit } from "../bundles/rollout-limit";

export interface RolloutPartition {
  name: string;
  /** In the plan's order (by cluster name). */
  clusters: string[];
  maxUnavailable: number;
  /** Whether it holds back the partitions after it (maxUnavailable below its size). */
  holds: boolean;
}

/** Clusters that update together; `afterPrevious`: only once every cluster of the waves before it since the last such wave is ready. */
export interface RolloutWave {
  partition: string;
  clusters: string[];
  afterPrevious: boolean;
}

export interface Rollout {
  partitions: RolloutPartition[];
  /** Clusters that match no explicit partition (deployed after them here; see rolloutWarnings). */
  unpartitioned: string[];
  waves: RolloutWave[];
}

const DEFAULT_AUTO_PARTITION_THRESHOLD = 200;

/**
 * The partitions of one bundle's clusters (`names` in the plan's order); `selected`: per explicit
 * partition, the clusters its criteria match (match.ts partitionClusters, decided with every other target).
 */
export function partitionsOf(rollout: RolloutStrategy, names: string[], selected: readonly ReadonlySet<string>[]): Rollout {
  let partitions: Omit<RolloutPartition, "holds">[];
  let unpartitioned: string[] = [];
  if (rollout.partitions.length) {
    partitions = rollout.partitions.map((p, i) => {
      const members = names.filter((c) => selected[i]?.has(c));
      return {
        name: p.name ?? "",
        clusters: members,
        maxUnavailable: limit(members.length, `rolloutStrategy.partitions[${i}].maxUnavailable`, p.maxUnavailable, rollout.maxUnavailable),
      };
    });
    const placed = new Set(partitions.flatMap((p) => p.clusters));
    unpartitioned = names.filter((n) => !placed.has(n));
  } else {
    const threshold = rollout.autoPartitionThreshold ?? DEFAULT_AUTO_PARTITION_THRESHOLD;
    const size = rollout.autoPartitionSize;
    const off = (typeof size === "number" && size <= 0) || threshold <= 0 || names.length < threshold;
    const whole = () => [{ name: "All", clusters: names, maxUnavailable: limit(names.length, "rolloutStrategy.maxUnavailable", rollout.maxUnavailable) }];
    if (off || !names.length) {
      partitions = whole();
    } else {
      const chunk = limit(names.length, "rolloutStrategy.autoPartitionSize", size, "25%");
      partitions = [];
      for (let offset = 0; offset < names.length; offset += chunk) {
        const members = names.slice(offset, offset + chunk);
        partitions.push({
          name: `Partition ${offset} - ${offset + members.length}`,
          clusters: members,
          maxUnavailable: limit(members.length, "rolloutStrategy.maxUnavailable", rollout.maxUnavailable),
        });
      }
    }
  }
  // Partitions may tolerate unavailable ones before the rollout pauses (Fleet counts them while it walks).
  const tolerated = limit(partitions.length, "rolloutStrategy.maxUnavailablePartitions", rollout.maxUnavailablePartitions, 0);
  const pausesAtAll = tolerated < partitions.length;
  const held = partitions.map((p) => ({ ...p, holds: pausesAtAll && p.maxUnavailable < p.clusters.length }));
  return {
    partitions: held,
    unpartitioned,
    waves: wavesOf(held, unpartitioned, limit(names.length, "rolloutStrategy.maxUnavailable", rollout.maxUnavailable)),
  };
}

/** The partitions as waves of at most min(maxUnavailable, the bundle's), each cluster in its first partition only. */
function wavesOf(partitions: RolloutPartition[], unpartitioned: string[], bundleMax: number): RolloutWave[] {
  const waves: RolloutWave[] = [];
  const placed = new Set<string>();
  const total = new Set([...partitions.flatMap((p) => p.clusters), ...unpartitioned]).size;
  let previousHolds = false;
  const all: RolloutPartition[] = [
    ...partitions,
    ...(unpartitioned.length ? [{ name: "(no partition)", clusters: unpartitioned, maxUnavailable: unpartitioned.length, holds: false }] : []),
  ];
  for (const p of all) {
    const members = p.clusters.filter((c) => !placed.has(c));
    members.forEach((c) => placed.add(c));
    if (!members.length) continue;
    // A partition with maxUnavailable 0 is taken as "none may be unavailable": one cluster at a time (see rolloutWarnings).
    const size = Math.max(1, Math.min(p.maxUnavailable, bundleMax));
    for (let i = 0; i < members.length; i += size) {
      const afterPrevious = waves.length > 0 && (i > 0 || previousHolds || bundleMax < total);
      waves.push({ partition: p.name, clusters: members.slice(i, i + size), afterPrevious });
    }
    previousHolds = p.holds;
  }
  return waves;
}

/**
 * Where this differs from Fleet's code, said once per bundle: a partition with maxUnavailable 0 (Fleet's
 * code freezes it); unavailable partitions tolerated (maxUnavailablePartitions); maxNew (pacing only);
 * clusters in no explicit partition (never updated by Fleet).
 */
export function rolloutWarnings(rollout: RolloutStrategy, r: Rollout): string[] {
  const out: string[] = [];
  for (const p of r.partitions) {
    if (p.maxUnavailable === 0 && p.clusters.length) {
      out.push(
        `rolloutStrategy: partition ${p.name || "(unnamed)"} has maxUnavailable 0: Fleet v0.16.1's code then never updates a cluster of it that is available, and ` +
          "the rollout stops there; here its clusters update one at a time and hold back the partitions after it until each is ready (the documented meaning)",
      );
    }
  }
  const tolerated = limit(r.partitions.length, "rolloutStrategy.maxUnavailablePartitions", rollout.maxUnavailablePartitions, 0);
  if (tolerated > 0 && tolerated < r.partitions.length) {
    out.push(
      `rolloutStrategy.maxUnavailablePartitions: ${JSON.stringify(rollout.maxUnavailablePartitions)} is not honoured: the rollout stops at the first partition that does not become ready`,
    );
  }
  if (rollout.maxNew !== undefined) {
    out.push(
      `rolloutStrategy.maxNew: ${rollout.maxNew} is not honoured: new clusters are deployed with the others in the same \`up\` (Fleet creates at most maxNew per reconcile; the end state is the same)`,
    );
  }
  if (r.unpartitioned.length) {
    out.push(
      `rolloutStrategy: cluster(s) ${r.unpartitioned.join(", ")} match no partition; Fleet v0.16.1 never updates such clusters, here they are updated after every partition`,
    );
  }
  return out;
}
