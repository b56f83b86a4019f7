/**
 * Gathering, after rendering: what is read of the rendered objects on their clusters (the stack's
 * credentials), into each cluster's ClusterFacts. Who deployed a contested object the state does not
 * know (its live labels), and the live objects this update's new and changed deployments would create
 * (helm.takeOwnership). What to read is the decisions' (owners.ts, core/desired/ownership.ts); what the
 * answers mean is theirs too.
 */
import { K8sObject } from "../model/k8s-object";
import { accessOf } from "../config/cluster-access";
import { ClusterConfig } from "../config/stack";
import { BUNDLE_NAME_LABEL, CLUSTER_LABEL, MANAGED_BY, MANAGED_BY_LABEL } from "./ownership";
import { OwnersJob } from "../model/renderer-protocol";
import { PlanEntry } from "../targeting/plan";
import { REPO_NAME_LABEL } from "../targeting/depends-on";
import { factsOf, KnownClusters } from "./cluster-facts";
import { Facts } from "./facts";
import { claimKey } from "./owners";
import { byGitRepo, readEachGitRepo, clusterReadBounds, ClusterReadBounds, overReadBound, readError, readId } from "./cluster-reads";

const objectRef = (o: K8sObject) => ({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata.namespace ?? "", name: o.metadata.name });

/**
 * The live owners of contested objects, by claimKey, from their ownership labels, on the stack's
 * clusters not left out: one read per cluster and set of GitRepos declaring them (`gitRepos`), each
 * with the operator's deadline and count bound, so GitRepos contesting only among themselves read for
 * themselves. A read that cannot be made or fails tells nothing of its objects (plan order decides).
 */
export async function gatherOwners(
  unknown: { cluster: string; object: K8sObject; gitRepos?: string[] }[],
  clusters: ClusterConfig[],
  facts: Facts,
  known: KnownClusters,
  { skip, bounds = clusterReadBounds() }: { skip?: ReadonlySet<string>; bounds?: ClusterReadBounds } = {},
): Promise<void> {
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const groups = new Map<string, { cluster: string; objects: K8sObject[] }>();
  for (const c of unknown) {
    if (skip?.has(c.cluster) || !byName.has(c.cluster)) continue;
    const id = readId(c.cluster, (c.gitRepos ?? []).join(","));
    (groups.get(id) ?? groups.set(id, { cluster: c.cluster, objects: [] }).get(id)!).objects.push(c.object);
  }
  const jobs: OwnersJob[] = [...groups]
    .filter(([, g]) => !overReadBound(g.objects.length, bounds))
    .map(([id, g]) => ({ id, ...accessOf(byName.get(g.cluster)), objects: g.objects.map(objectRef), timeoutSeconds: bounds.seconds }));
  if (!jobs.length) return;
  const results = await readEachGitRepo(jobs, facts.objects, (error) => ({ error }));
  for (const job of jobs) {
    const { cluster, objects } = groups.get(job.id)!;
    results[job.id]?.objects?.forEach((l, i) => {
      const labels = l?.labels ?? {};
      if (labels[MANAGED_BY_LABEL] !== MANAGED_BY || labels[CLUSTER_LABEL] !== cluster || !labels[REPO_NAME_LABEL] || !labels[BUNDLE_NAME_LABEL]) return;
      factsOf(known, cluster).owners.set(claimKey(cluster, objects[i]), { gitRepo: labels[REPO_NAME_LABEL], bundle: labels[BUNDLE_NAME_LABEL] });
    });
  }
}

/**
 * The live objects of each cluster's queries (core/desired/ownership.ts ownershipQueries), in their order: one
 * read per (cluster, GitRepo), each with the operator's deadline (cluster-reads.ts), so one GitRepo's
 * slow or huge read is its own pairs' failure on that cluster. A GitRepo asking for more objects than
 * the operator's count bound is not read: its answer is why.
 */
export async function gatherExisting(
  queries: ReadonlyMap<string, { entry: PlanEntry; object: K8sObject }[]>,
  clusters: ClusterConfig[],
  facts: Facts,
  known: KnownClusters,
  bounds: ClusterReadBounds = clusterReadBounds(),
): Promise<void> {
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const jobs: (OwnersJob & { cluster: string; gitRepo: string })[] = [];
  for (const [cluster, q] of queries) {
    for (const [gitRepo, own] of byGitRepo(q)) {
      const over = overReadBound(own.length, bounds);
      if (over) factsOf(known, cluster).existing.set(gitRepo, { error: over });
      else
        jobs.push({
          id: readId(cluster, gitRepo),
          cluster,
          gitRepo,
          ...accessOf(byName.get(cluster)!),
          objects: own.map(({ object }) => objectRef(object)),
          timeoutSeconds: bounds.seconds,
        });
    }
  }
  if (!jobs.length) return;
  const results = await readEachGitRepo(
    jobs.map(({ cluster: _c, gitRepo: _g, ...job }) => job),
    facts.objects,
    (error) => ({ error }),
  );
  for (const { cluster, gitRepo, id } of jobs) {
    const r = results[id] ?? { error: "no answer" };
    factsOf(known, cluster).existing.set(gitRepo, r.error ? { error: readError(r.error, bounds) } : r);
  }
}
