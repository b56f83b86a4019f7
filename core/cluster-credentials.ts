/**
 * The one place a job for fleet-render (owners, deletes, discovery, impersonation, lookups, valuesFrom)
 * gets the credentials it reaches a cluster with: the stack file's kubeconfig and context (empty: the
 * ambient kubeconfig, as client-go's loader reads it), or, acting as a user (serviceAccount), the
 * impersonating kubeconfig made for that user, whose one context is its current one.
 */
import { ClusterConfig } from "./config/stack";

export interface ClusterCredentials {
  kubeconfig: string;
  context: string;
}

export function clusterCredentials(cluster: Pick<ClusterConfig, "kubeconfig" | "context"> | undefined, impersonating?: string): ClusterCredentials {
  if (impersonating !== undefined) return { kubeconfig: impersonating, context: "" };
  return { kubeconfig: cluster?.kubeconfig ?? "", context: cluster?.context ?? "" };
}
