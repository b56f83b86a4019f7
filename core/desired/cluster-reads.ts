/**
 * The reads of clusters made for a GitRepo's content before apply (owners of objects it would create,
 * contested objects' owners, `lookup`, helm.valuesFrom) are that GitRepo's own: one job per
 * (cluster, GitRepo), each with the operator's deadline and count bound, so a GitRepo whose objects
 * make its read slow or huge fails only its own pairs on that cluster, never another GitRepo's.
 */
import { positiveNumber } from "../operator-env";
import { PlanEntry } from "../targeting/plan";

export interface ClusterReadBounds {
  /** The deadline of one GitRepo's read on one cluster (PULUMI_FLEET_CLUSTER_READ_SECONDS). */
  seconds: number;
  /** The most objects one GitRepo's read on one cluster may ask for (PULUMI_FLEET_CLUSTER_READ_OBJECTS). */
  objects: number;
}

export const CLUSTER_READ_DEFAULTS: ClusterReadBounds = { seconds: 60, objects: 20000 };

/** The operator's bounds on a GitRepo's reads of a cluster, from the environment. */
export function clusterReadBounds(env: NodeJS.ProcessEnv = process.env): ClusterReadBounds {
  return {
    seconds: Math.ceil(positiveNumber(env, "PULUMI_FLEET_CLUSTER_READ_SECONDS", CLUSTER_READ_DEFAULTS.seconds, 3600)),
    objects: Math.floor(positiveNumber(env, "PULUMI_FLEET_CLUSTER_READ_OBJECTS", CLUSTER_READ_DEFAULTS.objects)),
  };
}

/** The id of a GitRepo's read on a cluster (a renderer job's id): NUL never occurs in either name. */
export const readId = (cluster: string, gitRepo: string): string => `${cluster}\u0000${gitRepo}`;

/** Why a GitRepo's read of `count` objects on a cluster is not made: more than the operator's bound. */
export function overReadBound(count: number, bounds: ClusterReadBounds): string | undefined {
  return count > bounds.objects
    ? `${count} objects to read on the cluster for this GitRepo's new and changed deployments exceed PULUMI_FLEET_CLUSTER_READ_OBJECTS=${bounds.objects}`
    : undefined;
}

/** A read's error in words that name the deadline when it was the deadline. */
export function readError(error: string, bounds: ClusterReadBounds): string {
  return /deadline exceeded|did not finish within/i.test(error)
    ? `${error} (this GitRepo's read of the cluster is bounded by PULUMI_FLEET_CLUSTER_READ_SECONDS=${bounds.seconds})`
    : error;
}

/** A cluster's queries by GitRepo, each in their order. */
export function byGitRepo<Q extends { entry: PlanEntry }>(queries: readonly Q[]): Map<string, Q[]> {
  const out = new Map<string, Q[]>();
  for (const q of queries) (out.get(q.entry.gitRepo) ?? out.set(q.entry.gitRepo, []).get(q.entry.gitRepo)!).push(q);
  return out;
}
