/**
 * What was read of each cluster, per cluster name: the one value the gathering functions (gather.ts,
 * gather-objects.ts) fill and the decisions read. A decision never reaches a cluster; adding a fact the
 * renderer needs adds a field here and its read in gathering.
 */
import { ClusterCapabilities } from "../render/render-request";
import { LookupResult, OwnersResult } from "../model/renderer-protocol";

export interface ClusterFacts {
  /** `fleet-default` in the agent namespace: true when it exists, the warning when it could not be read; absent when it does not exist or was not read. */
  defaultAccount?: true | { unread: string };
  /** Per user, the cluster's kubeconfig acting as that user (serviceAccount impersonation). */
  kubeconfigs: Map<string, string>;
  /** Per identity ("" for the stack's credentials, else the user) and GitRepo (read-values-from.ts valuesFromKey), the answer to what helm.valuesFrom references. */
  valuesFrom: Map<string, LookupResult>;
  /** What charts see as `.Capabilities`: the live cluster's, or the stack's kubeVersion and apiVersions in render mode. */
  capabilities?: ClusterCapabilities;
  /** By claimKey (owners.ts), who deployed a contested object the state does not know, as its live labels say. */
  owners: Map<string, { gitRepo: string; bundle: string }>;
  /** Per GitRepo, the live objects its new and changed deployments would create, in ownershipQueries' order, or why they could not be read. */
  existing: Map<string, OwnersResult>;
  /** The ambient kubeconfig reduced to the cluster's context (when KUBECONFIG lists several files). */
  ambientKubeconfig?: string;
}

/** Every cluster's facts, by name. */
export type KnownClusters = Map<string, ClusterFacts>;

/** A cluster's facts, made empty on first use (a held deployment's cluster may have left the stack). */
export function factsOf(known: KnownClusters, cluster: string): ClusterFacts {
  return known.get(cluster) ?? known.set(cluster, { kubeconfigs: new Map(), valuesFrom: new Map(), owners: new Map(), existing: new Map() }).get(cluster)!;
}

/** The kubeconfig a job on the cluster uses for `user`: undefined (the cluster's own) without one. */
export const kubeconfigAs = (known: ReadonlyMap<string, ClusterFacts>, cluster: string, user: string | undefined): string | undefined =>
  user ? known.get(cluster)!.kubeconfigs.get(user)! : undefined;
