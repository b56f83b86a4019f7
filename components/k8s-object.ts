/**
 * One Pulumi resource per Kubernetes object of a raw YAML bundle. The Kubernetes provider only needs a
 * type token naming the object's group, version and kind, so arbitrary kinds (including custom
 * resources) are registered through one small class instead of a switch over every typed class.
 */
import * as pulumi from "@pulumi/pulumi";
import { groupOf, K8sObject } from "../core/bundles/manifests";

/** `kubernetes:<group>/<version>:<Kind>`; the core group is spelled "core", as in the provider's schema. */
export function typeTokenOf(obj: { apiVersion: string; kind: string }): string {
  const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/", 2) : ["core", obj.apiVersion];
  return `kubernetes:${group}/${version}:${obj.kind}`;
}

// The logical name of an object within a cluster and bundle is core's objectKey (the version is in the type token).
export { groupOf, objectKey } from "../core/bundles/manifests";

/** Versions an API commonly moves through; see versionAliases. */
const COMMON_VERSIONS = ["v1alpha1", "v1alpha2", "v1beta1", "v1beta2", "v1beta3", "v1", "v2alpha1", "v2beta1", "v2beta2", "v2", "v3"];

/**
 * Aliases to the same object under the other common versions of its (non-core) group. When a bundle moves an
 * object to a newer version of the same group, the engine then updates it in place. Without them it
 * would create the "new" resource and delete the old one, which is the same object on the cluster: the
 * bundle would delete its own object.
 */
export function versionAliases(obj: K8sObject): pulumi.Alias[] {
  const group = groupOf(obj.apiVersion);
  // The core group has only ever had v1; and every alias costs the SDK and the engine work per
  // resource, which at fleet scale (ConfigMaps, Services, Secrets are most objects) adds up.
  if (!group) return [];
  const current = obj.apiVersion.split("/").pop();
  return COMMON_VERSIONS.filter((v) => v !== current)
    .map((v) => ({ type: typeTokenOf({ apiVersion: group ? `${group}/${v}` : v, kind: obj.kind }) }));
}

export class KubernetesObject extends pulumi.CustomResource {
  constructor(name: string, obj: K8sObject, opts: pulumi.CustomResourceOptions) {
    super(typeTokenOf(obj), name, { ...obj }, { ...opts, aliases: [...(opts.aliases ?? []), ...versionAliases(obj)] });
  }
}
