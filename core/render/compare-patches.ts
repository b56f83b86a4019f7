/**
 * fleet.yaml diff.comparePatches, as Fleet's agent reads them: the listed fields (jsonPointers, and
 * `remove` operations, which drop the field from the comparison) are left out when an object is
 * compared with the cluster, so a controller or a person may change them without the bundle reporting
 * `Modified` or correctDrift putting them back; a new version of the bundle is still applied whole.
 * Here they are the object's `ignoreDrift` (JSON pointers) in its BundleDeployment, which the provider
 * leaves out of the drift a refresh finds (`status`, `up --refresh`, correctDrift). Matching follows
 * Fleet (Argo CD's ignore-differences rules): the apiVersion's group and the kind must match; an empty
 * name or namespace matches any.
 */
import { K8sObject, groupOf } from "../model/k8s-object";
import { ComparePatch } from "../bundles/types";

/** The JSON pointers of the object's fields that comparePatches leave out of drift (the root never). */
export function comparePatchPointers(obj: K8sObject, patches: ComparePatch[] | undefined): string[] {
  const pointers = new Set<string>();
  for (const p of patches ?? []) {
    if (!matches(p, obj)) continue;
    for (const pointer of p.jsonPointers ?? []) pointers.add(pointer);
    for (const op of p.operations ?? []) if (op.op === "remove" && op.path) pointers.add(op.path);
  }
  return [...pointers].filter((x) => x !== "" && x !== "/");
}

function matches(p: ComparePatch, obj: K8sObject): boolean {
  if (p.kind !== obj.kind) return false;
  if (groupOf(p.apiVersion ?? "") !== groupOf(obj.apiVersion)) return false;
  if (p.name && p.name !== obj.metadata.name) return false;
  if (p.namespace && p.namespace !== (obj.metadata.namespace ?? "")) return false;
  return true;
}
