/** The namespaces each cluster creates, as the desired state registers them (DesiredNamespace, types.ts). */
import { FleetError } from "../base/errors";
import { clusterLabels } from "./ownership";
import { RenderedDeployment } from "../render/deployments";
import { PlanEntry } from "../targeting/plan";
import { namespaceRetain } from "./delete-policy";
import { namespacesForCluster, clusterNamespaceName } from "./namespaces";
import { DesiredNamespace } from "./types";

/**
 * The namespaces a cluster creates for its bundles. A deployed agent owns its own namespace, so a bundle
 * deploying into it does not create it twice; with the agent switched off the cluster creates it, and
 * the alias to the agent's resource turns the change of owner into an update, never a delete of the
 * namespace (and everything in it) on the cluster.
 */
export function clusterNamespaces(
  cluster: string,
  entries: PlanEntry[],
  rendered: Map<PlanEntry, RenderedDeployment>,
  agent: { namespace: string; deployed: boolean },
  onConflict: (entry: PlanEntry, err: FleetError) => void,
): DesiredNamespace[] {
  return namespacesForCluster(cluster, entries, (e) => rendered.get(e)!.objects, onConflict)
    .filter((ns) => !agent.deployed || ns.name !== agent.namespace)
    .map((ns) => ({
      name: clusterNamespaceName(cluster, ns.name),
      metadata: {
        name: ns.name,
        labels: { ...ns.labels, ...clusterLabels(cluster) },
        ...(Object.keys(ns.annotations).length ? { annotations: ns.annotations } : {}),
      },
      retainOnDelete: !!namespaceRetain(ns.deleteWithBundles),
      ...(ns.name === agent.namespace ? { wasAgentNamespace: true as const } : {}),
    }));
}
