/**
 * fleet.yaml diff.comparePatches, mapped onto the engine. In Fleet the listed fields (jsonPointers, and
 * `remove` operations, which drop the field from the comparison) are left out when the agent compares
 * an object with the cluster: a controller or a person may change them without the bundle reporting
 * `Modified` or correctDrift putting them back; a new version of the bundle is still applied whole.
 * Here they become the object's `ignoreChanges` (Pulumi property paths) while its deployment is
 * unchanged since the last update (same deploymentId): then `status`, `up --refresh` and correctDrift
 * leave them alone. When the deployment changes, nothing is ignored and the new desired state is
 * applied whole, as Fleet's upgrade applies it. Matching follows Fleet (Argo CD's ignore-differences
 * rules): the apiVersion's group and the kind must match; an empty name or namespace matches any.
 */
import { K8sObject, groupOf } from "./bundles/manifests";
import { ComparePatch } from "./bundles/types";

/** The Pulumi property paths of the object's fields that comparePatches leave out. */
export function comparePatchPaths(obj: K8sObject, patches: ComparePatch[] | undefined): string[] {
  const paths = new Set<string>();
  for (const p of patches ?? []) {
    if (!matches(p, obj)) continue;
    for (const pointer of p.jsonPointers ?? []) paths.add(propertyPath(pointer));
    for (const op of p.operations ?? []) if (op.op === "remove" && op.path) paths.add(propertyPath(op.path));
  }
  return [...paths].filter((x) => x !== "");
}

function matches(p: ComparePatch, obj: K8sObject): boolean {
  if (p.kind !== obj.kind) return false;
  if (groupOf(p.apiVersion ?? "") !== groupOf(obj.apiVersion)) return false;
  if (p.name && p.name !== obj.metadata.name) return false;
  if (p.namespace && p.namespace !== (obj.metadata.namespace ?? "")) return false;
  return true;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A JSON pointer (RFC 6901) as a Pulumi property path: /spec/replicas -> spec.replicas, ~1 -> "/". */
export function propertyPath(pointer: string): string {
  if (pointer === "" || pointer === "/") return "";
  const segments = pointer.replace(/^\//, "").split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  let out = "";
  for (const s of segments) {
    if (/^(0|[1-9][0-9]*)$/.test(s)) out += `[${s}]`;
    else if (IDENTIFIER.test(s)) out += out ? `.${s}` : s;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}
