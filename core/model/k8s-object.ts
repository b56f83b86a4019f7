/** The Kubernetes object shape the pipeline passes around. Rendering itself is fleet-render's (core/render). */

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
}

/** The API group of an apiVersion ("" for the core group). */
export function groupOf(apiVersion: string): string {
  return apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
}

/** An object's identity within a cluster: group, kind, namespace and name (not the version). */
export function objectKey(obj: K8sObject): string {
  const group = groupOf(obj.apiVersion) || "core";
  return [group, obj.kind, obj.metadata.namespace ?? "_", obj.metadata.name].join(":");
}

/**
 * How every message names an object: "Kind namespace/name", or "Kind name" for one without a namespace
 * (cluster-scoped). Content that is no valid object reads "object" for a missing kind and "(unnamed)"
 * for a missing name. A sink that must escape content escapes this text like any other.
 */
export function objectName(o: { kind?: unknown; namespace?: string; name?: string }): string {
  return `${o.kind ?? "object"} ${o.namespace ? `${o.namespace}/` : ""}${o.name ?? "(unnamed)"}`;
}

/** objectName of an object as its manifest (or a live object) has it. */
export function describeObject(obj: { kind?: unknown; metadata?: { name?: string; namespace?: string } }): string {
  return objectName({ kind: obj.kind, namespace: obj.metadata?.namespace, name: obj.metadata?.name });
}

/** Kinds that are not namespaced, beyond CRDs of cluster scope declared in the same bundle. */
export const CLUSTER_SCOPED: ReadonlySet<string> = new Set([
  "Namespace",
  "Node",
  "PersistentVolume",
  "ClusterRole",
  "ClusterRoleBinding",
  "CustomResourceDefinition",
  "StorageClass",
  "PriorityClass",
  "ValidatingWebhookConfiguration",
  "MutatingWebhookConfiguration",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "APIService",
  "IngressClass",
  "RuntimeClass",
  "CSIDriver",
  "CSINode",
  "VolumeAttachment",
  "CertificateSigningRequest",
  "FlowSchema",
  "PriorityLevelConfiguration",
  "ComponentStatus",
  "ClusterIssuer",
  "VolumeSnapshotClass",
]);
