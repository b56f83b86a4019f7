/**
 * The reads of clusters made for a GitRepo's content before apply (owners of objects it would create,
 * contested objects' owners, `lookup`, helm.valuesFrom) are that GitRepo's own: one job per
 * (cluster, GitRepo), each with the operator's deadline and count bound, so a GitRepo whose objects
 * make its read slow or huge fails only its own pairs on that cluster, never another GitRepo's.
 */
import { positiveNumber } from "../base/operator-env";
import { PlanEntry } from "../targeting/plan";
import { stopSignal } from "../base/stop-signal";
import { settleLimited } from "../base/settle-limited";

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

/** How many GitRepos' read batches run at once (each one fleet-render process reading its clusters concurrently). */
const READ_BATCHES_AT_ONCE = 4;

/**
 * Runs the read jobs (ids made by readId) in one batch per GitRepo, a few batches at once: a batch that
 * fails as a whole (the tool crashed, was killed, answered nothing) is the error of its own GitRepo's
 * jobs only, never every GitRepo's. A stop (Ctrl-C) still stops everything.
 */
export async function readEachGitRepo<J extends { id: string }, R>(
  jobs: J[],
  read: (jobs: J[]) => Promise<Record<string, R>>,
  failed: (error: string) => R,
): Promise<Record<string, R>> {
  const groups = new Map<string, J[]>();
  for (const j of jobs) {
    const gitRepo = j.id.slice(j.id.lastIndexOf("\u0000") + 1);
    (groups.get(gitRepo) ?? groups.set(gitRepo, []).get(gitRepo)!).push(j);
  }
  const batches = [...groups.values()];
  const settled = await settleLimited(batches, READ_BATCHES_AT_ONCE, read);
  const out: Record<string, R> = {};
  settled.forEach((r, i) => {
    if (r.status === "fulfilled") {
      Object.assign(out, r.value);
      return;
    }
    if (stopSignal.aborted) throw r.reason;
    const why = r.reason instanceof Error ? r.reason.message : String(r.reason);
    for (const j of batches[i]) out[j.id] = failed(why);
  });
  return out;
}
