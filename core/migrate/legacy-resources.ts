/**
 * Where an earlier version's layouts show in a state: the Kubernetes provider's resources that the
 * versions before one BundleDeployment resource per pair registered. Read here only; the migration
 * (migrate.ts) decides what becomes of them.
 */
import { DeployedObject } from "../desired/facts";
import { RETAIN_REASONS } from "../desired/delete-policy";
import { AGENT_TYPE, BUNDLE_DEPLOYMENT_TYPE, CLUSTER_TYPE } from "../desired/types";
import { K8sObject } from "../model/k8s-object";
import { nameOfUrn, StateResource } from "./state-shape";

export const NAMESPACE_TYPE = "kubernetes:core/v1:Namespace";

export const KUBERNETES_PROVIDER_TYPE = "pulumi:providers:kubernetes";

/** A Kubernetes provider's resource type or its provider instance's. */
export const isKubernetesProviders = (type: string) => type.startsWith("kubernetes:") || type === KUBERNETES_PROVIDER_TYPE;

/**
 * One Kubernetes object's resource of the Kubernetes provider (its inputs are the object), custom as
 * that version registered it or state-only as the migration leaves it (migrate.ts): read alike.
 */
export const isObjectResource = (r: StateResource): r is StateResource & { inputs: Record<string, unknown> } =>
  r.type.startsWith("kubernetes:") && typeof r.inputs?.apiVersion === "string" && typeof r.inputs?.kind === "string";

export type LegacyObject = StateResource & { component: string; inputs: Record<string, unknown> };

/**
 * An earlier version's Kubernetes objects: the custom resources under a BundleDeployment component,
 * directly or under the Kubernetes provider's Chart and Directory components of older versions, with
 * the component they belong to (named by the deployment's key of that version).
 */
export function legacyObjects(resources: StateResource[]): LegacyObject[] {
  const parentOf = new Map(resources.map((r) => [r.urn, r]));
  const out: LegacyObject[] = [];
  for (const r of resources) {
    if (!isObjectResource(r)) continue;
    // Bounded: a Chart's children sit at most a few components below their BundleDeployment.
    for (let p = r.parent ? parentOf.get(r.parent) : undefined, hops = 0; p && hops < 5; p = p.parent ? parentOf.get(p.parent) : undefined, hops++) {
      if (p.type === BUNDLE_DEPLOYMENT_TYPE && !p.custom) out.push({ ...r, inputs: r.inputs, component: p.urn });
      if (p.type === BUNDLE_DEPLOYMENT_TYPE) break;
    }
  }
  return out;
}

/** The cluster a legacy object belongs to: its BundleDeployment component is named "<cluster>/<bundle>". */
export const clusterOfLegacyObject = (o: LegacyObject) => nameOfUrn(o.component).split("/")[0];

export interface LegacySetup {
  cluster: string;
  urn: string;
  object: DeployedObject;
}

/**
 * Per cluster, what an earlier version created as one resource per object: its agent's objects (under
 * the Agent component) and its namespaces (Namespace resources under the Cluster), with their retain
 * rules. The cluster's ClusterSetup adopts the objects (core/desired/setup.ts).
 */
export function legacySetups(resources: StateResource[]): LegacySetup[] {
  const byUrn = new Map(resources.map((r) => [r.urn, r]));
  const out: LegacySetup[] = [];
  for (const r of resources) {
    if (!isObjectResource(r) || !r.parent) continue;
    const parent = byUrn.get(r.parent);
    const underAgent = parent?.type === AGENT_TYPE;
    if (!underAgent && !(r.type === NAMESPACE_TYPE && parent?.type === CLUSTER_TYPE)) continue;
    const retain = r.type !== NAMESPACE_TYPE ? undefined : underAgent ? RETAIN_REASONS.agentNamespace : r.retainOnDelete ? RETAIN_REASONS.namespace : undefined;
    // The Agent and Cluster components are named after their cluster.
    out.push({ cluster: nameOfUrn(parent!.urn), urn: r.urn, object: { manifest: r.inputs as unknown as K8sObject, ...(retain ? { retain } : {}) } });
  }
  return out;
}
