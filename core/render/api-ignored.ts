/**
 * What the API server ignores in a manifest, removed before the object is registered, so that an
 * object differing only in it has no diff and no drift (kompose writes `creationTimestamp: null`,
 * `status: {}` and `value: null` into every manifest). Only what never reaches the cluster or is
 * discarded there goes; everything else is kept as written ("never silently different").
 */
import { K8sObject } from "../model/k8s-object";

/**
 * The object without null-valued map entries (at any depth, `metadata.creationTimestamp: null`
 * included) and without an empty top-level `status`.
 *
 * - null map entries: the Kubernetes provider drops them from every input before it diffs or applies
 *   (it reads inputs with SkipNulls), so they never reach the API server; keeping them only made the
 *   registered manifest (state, `plan --desired`) say something that was never applied. Null list
 *   items are kept: the provider sends those.
 * - `status: {}`: a kind with a status subresource (the built-in kinds that have a status, most CRDs)
 *   discards status on create and apply. For a custom resource the provider does not normalize it
 *   away, so the live object has no status and every update, preview and refresh diffed `+status`.
 *   Where a CRD has no status subresource an empty status holds nothing. A non-empty status is kept:
 *   such a CRD stores it as written, and the manifest does not say which kind of CRD it is.
 */
export function withoutApiIgnored<T extends K8sObject>(obj: T): T {
  const out = withoutNulls(obj) as T;
  if (isEmptyMap(out.status)) delete out.status;
  return out;
}

function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (!isPlainMap(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x);
  return out;
}

function isPlainMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isEmptyMap(v: unknown): boolean {
  return isPlainMap(v) && Object.keys(v).length === 0;
}

/**
 * Null values where Kubernetes has a map of strings (labels, annotations, a ConfigMap's or Secret's
 * data): the API server decodes such a null as "" on create, so Fleet's Helm stores the key with an
 * empty value, while the provider drops it (above). Named in a warning, never silently different.
 */
export function nullStringValues(obj: K8sObject): string[] {
  const maps: [string, unknown][] = [
    ["metadata.labels", obj.metadata?.labels],
    ["metadata.annotations", obj.metadata?.annotations],
  ];
  if (obj.apiVersion === "v1" && (obj.kind === "ConfigMap" || obj.kind === "Secret")) {
    for (const field of ["data", "stringData", "binaryData"]) maps.push([field, (obj as Record<string, unknown>)[field]]);
  }
  return maps.flatMap(([field, m]) =>
    isPlainMap(m)
      ? Object.keys(m)
          .filter((k) => m[k] === null)
          .map((k) => `${field}.${k}`)
      : [],
  );
}
