/**
 * Offline as a state that stays true between runs: when each cluster's API server last answered, and
 * since when it has not. Every operation that probes the clusters (up, preview, status, and the
 * watcher's ups) folds what it found into one record per stack (stack-record-store.ts: beside a file
 * backend's state, a table of a PostgreSQL backend), so a later `status`, the page, the metrics and the
 * PR summary say "Offline since T, last seen L" instead of a bare "unreachable" that forgets the past.
 * Fleet keeps the same fact as the Cluster's `status.agent.lastSeen` (its agent checks in); here the
 * runner itself reaches the cluster, so "seen" means its API server answered a probe.
 *
 * The decision (`observe`, `offlineOf`, `offlineWords`) is pure; the operation reads and writes the record.
 */
import { Backend } from "../engine/backend";
import { StackRecordStore, stackRecordStore } from "../engine/stack-record-store";

/** One cluster as the probes left it (ISO 8601 times). */
export interface ClusterSeen {
  /** When its API server last answered a probe; absent: never, since the record began. */
  lastSeen?: string;
  /** When the probes first failed since it last answered; absent while it answers. */
  offlineSince?: string;
}

export interface SeenRecord {
  clusters: Record<string, ClusterSeen>;
}

/** A cluster that did not answer this run: Offline, with since when and when it was last seen. */
export interface Offline {
  since: string;
  /** Absent: this stack's records never saw it answer. */
  lastSeen?: string;
}

/**
 * The record after one probe of `names` at `now`: a cluster that answered is seen now and online; one
 * that did not keeps the first time it failed. Clusters no longer in the stack file drop out.
 */
export function observe(before: SeenRecord | undefined, names: readonly string[], unreachable: ReadonlyMap<string, string>, now: Date): SeenRecord {
  const at = now.toISOString();
  const clusters: Record<string, ClusterSeen> = {};
  for (const name of [...names].sort()) {
    const was = before?.clusters[name] ?? {};
    clusters[name] = unreachable.has(name) ? { ...(was.lastSeen ? { lastSeen: was.lastSeen } : {}), offlineSince: was.offlineSince ?? at } : { lastSeen: at };
  }
  return { clusters };
}

/** The clusters this run found unreachable, as Offline states (since when, last seen) from the record it wrote. */
export function offlineOf(record: SeenRecord, unreachable: ReadonlyMap<string, string>, now: Date): Map<string, Offline> {
  return new Map(
    [...unreachable.keys()].sort().map((name) => {
      const seen = record.clusters[name] ?? {};
      return [name, { since: seen.offlineSince ?? now.toISOString(), ...(seen.lastSeen ? { lastSeen: seen.lastSeen } : {}) }] as const;
    }),
  );
}

/** The words every report uses for an Offline cluster: stable while it stays offline (notifications compare them). */
export function offlineWords(o: Offline): string {
  return `Offline since ${o.since}, ${o.lastSeen ? `last seen ${o.lastSeen}` : "never seen by this stack"}`;
}

/** The reason a probe gave, with the Offline words: what `unreachable` maps a cluster to in every report. */
export function unreachableWithOffline(unreachable: ReadonlyMap<string, string>, offline: ReadonlyMap<string, Offline>): Map<string, string> {
  return new Map([...unreachable].map(([c, why]) => [c, offline.has(c) ? `${why}; ${offlineWords(offline.get(c)!)}` : why] as const));
}

export type SeenStore = StackRecordStore<SeenRecord>;

export function seenStore(backend: Backend, project: string, stack: string): SeenStore {
  return stackRecordStore<SeenRecord>(backend, project, stack, { file: "clusters-seen", table: "pulumi_fleet_clusters_seen", column: "record" });
}
