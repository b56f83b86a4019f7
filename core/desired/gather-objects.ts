/**
 * Gathering, after rendering: what is read of the rendered objects on their clusters (the stack's
 * credentials), into each cluster's ClusterFacts. Who deployed a contested object the state does not
 * know (its live labels), and the live objects this update's new and changed deployments would create
 * (helm.takeOwnership). What to read is the decisions' (owners.ts, core/ownership.ts); what the
 * answers mean is theirs too.
 */
import { K8sObject } from "../bundles/manifests";
import { accessOf } from "../cluster-access";
import { ClusterConfig } from "../config/stack";
import { BUNDLE_NAME_LABEL, CLUSTER_LABEL, MANAGED_BY, MANAGED_BY_LABEL } from "../ownership";
import { OwnersJob } from "../render/renderer-protocol";
import { PlanEntry, REPO_NAME_LABEL } from "../targeting/plan";
import { factsOf, KnownClusters } from "./cluster-facts";
import { Facts } from "./facts";
import { claimKey } from "./owners";

const objectRef = (o: K8sObject) => ({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata.namespace ?? "", name: o.metadata.name });

/**
 * The live owners of contested objects, by claimKey, from their ownership labels, on the stack's
 * clusters not left out. A cluster that cannot be read tells nothing (plan order decides).
 */
export async function gatherOwners(
  unknown: { cluster: string; object: K8sObject }[],
  clusters: ClusterConfig[],
  facts: Facts,
  known: KnownClusters,
  skip?: ReadonlySet<string>,
): Promise<void> {
  const byCluster = new Map<string, K8sObject[]>();
  for (const c of unknown) {
    if (skip?.has(c.cluster)) continue;
    (byCluster.get(c.cluster) ?? byCluster.set(c.cluster, []).get(c.cluster)!).push(c.object);
  }
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const jobs: OwnersJob[] = [...byCluster]
    .filter(([cluster]) => byName.has(cluster))
    .map(([cluster, objects]) => ({
      id: cluster,
      ...accessOf(byName.get(cluster)),
      objects: objects.map(objectRef),
    }));
  if (!jobs.length) return;
  const results = await facts.objects(jobs);
  for (const job of jobs) {
    const objects = byCluster.get(job.id)!;
    results[job.id]?.objects?.forEach((l, i) => {
      const labels = l?.labels ?? {};
      if (labels[MANAGED_BY_LABEL] !== MANAGED_BY || labels[CLUSTER_LABEL] !== job.id || !labels[REPO_NAME_LABEL] || !labels[BUNDLE_NAME_LABEL]) return;
      factsOf(known, job.id).owners.set(claimKey(job.id, objects[i]), { gitRepo: labels[REPO_NAME_LABEL], bundle: labels[BUNDLE_NAME_LABEL] });
    });
  }
}

/** The live objects of each cluster's queries (core/ownership.ts ownershipQueries), in their order: one read per cluster with any. */
export async function gatherExisting(
  queries: ReadonlyMap<string, { entry: PlanEntry; object: K8sObject }[]>,
  clusters: ClusterConfig[],
  facts: Facts,
  known: KnownClusters,
): Promise<void> {
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const jobs: OwnersJob[] = [...queries]
    .filter(([, q]) => q.length)
    .map(([cluster, q]) => ({
      id: cluster,
      ...accessOf(byName.get(cluster)!),
      objects: q.map(({ object }) => objectRef(object)),
    }));
  if (!jobs.length) return;
  const results = await facts.objects(jobs);
  for (const job of jobs) factsOf(known, job.id).existing = results[job.id] ?? { error: "no answer" };
}
