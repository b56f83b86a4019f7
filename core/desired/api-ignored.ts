/**
 * What the API server ignores in a manifest, removed before the object is registered, so that an
 * object differing only in it has no diff and no drift (kompose writes `creationTimestamp: null`,
 * `status: {}` and `value: null` into every manifest). Only what never reaches the cluster or is
 * discarded there goes; everything else is kept as written ("never silently different").
 */
import { K8sObject } from "../bundles/manifests";

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
