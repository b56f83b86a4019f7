/**
 * Fleet's options merge (options/calculate.go Merge): scalars override when set, helm values deep-merge,
 * templateValues are copied over, valuesFrom and compare patches merge by key, overlays append, flags
 * are OR-ed, a negative helm timeout resets it to 0, correctDrift is replaced.
 */
import { ComparePatch, DeploymentOptions, ValuesFrom } from "../bundles/types";
import { mergeValues } from "../bundles/values-files";
import { HELM_FLAGS_MERGED } from "../config/fleetyaml-fields";

const TARGET_ONLY_KEYS = ["name", "clusterName", "clusterSelector", "clusterGroup", "clusterGroupSelector", "doNotDeploy"];

/** The deployment options part of a target (drops its matching criteria). */
export function optionsOf(target: DeploymentOptions & Record<string, unknown>): DeploymentOptions {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(target)) if (!TARGET_ONLY_KEYS.includes(k)) out[k] = v;
  return out as DeploymentOptions;
}

export function mergeOptions(base: DeploymentOptions, custom: DeploymentOptions): DeploymentOptions {
  const result: DeploymentOptions = structuredClone(base);
  if (custom.defaultNamespace) result.defaultNamespace = custom.defaultNamespace;
  if (custom.namespace) result.namespace = custom.namespace;
  if (custom.serviceAccount) result.serviceAccount = custom.serviceAccount;
  if (custom.helm) {
    const h = (result.helm ??= {});
    const c = custom.helm;
    if ((c.timeoutSeconds ?? 0) > 0) h.timeoutSeconds = c.timeoutSeconds;
    else if ((c.timeoutSeconds ?? 0) < 0) h.timeoutSeconds = 0;
    if (h.values === undefined) h.values = c.values && structuredClone(c.values);
    else if (c.values) h.values = mergeValues(h.values, c.values);
    if (h.templateValues === undefined) h.templateValues = c.templateValues && { ...c.templateValues };
    else if (c.templateValues) Object.assign(h.templateValues, c.templateValues);
    if (c.valuesFrom?.length) h.valuesFrom = mergeByKey(h.valuesFrom ?? [], c.valuesFrom, valuesFromKey);
    for (const key of ["repo", "chart", "version", "releaseName"] as const) if (c[key]) h[key] = c[key];
    for (const key of HELM_FLAGS_MERGED) {
      if (h[key] || c[key]) h[key] = true;
    }
    for (const key of Object.keys(h) as (keyof typeof h)[]) if (h[key] === undefined) delete h[key];
  }
  if (custom.kustomize) {
    result.kustomize ??= {};
    if (custom.kustomize.dir) result.kustomize.dir = custom.kustomize.dir;
  }
  if (custom.diff) {
    result.diff ??= {};
    result.diff.comparePatches = mergeByKey(
      result.diff.comparePatches ?? [],
      custom.diff.comparePatches ?? [],
      (p: ComparePatch) => `${p.apiVersion}|${p.kind}|${p.namespace}|${p.name}`,
    );
  }
  if (custom.yaml) {
    result.yaml ??= {};
    result.yaml.overlays = [...(result.yaml.overlays ?? []), ...(custom.yaml.overlays ?? [])];
  }
  if ((custom.forceSyncGeneration ?? 0) > 0) result.forceSyncGeneration = custom.forceSyncGeneration;
  if (result.keepResources || custom.keepResources) result.keepResources = true;
  if (custom.correctDrift) result.correctDrift = custom.correctDrift;
  // Fleet unions namespace labels/annotations of the bundle's targets into the deployment.
  if (custom.namespaceLabels) result.namespaceLabels = { ...result.namespaceLabels, ...custom.namespaceLabels };
  if (custom.namespaceAnnotations) result.namespaceAnnotations = { ...result.namespaceAnnotations, ...custom.namespaceAnnotations };
  return result;
}

/** Fleet's valuesFromKey: a reference as written (namespace and key not defaulted); "" for an empty entry. */
function valuesFromKey(v: ValuesFrom): string {
  const ref = v.configMapKeyRef ?? v.secretKeyRef;
  if (!ref) return "";
  return `${v.configMapKeyRef ? "configmap" : "secret"}|${ref.namespace ?? ""}|${ref.name}|${ref.key ?? ""}`;
}

/**
 * Fleet's merge.ByKey (internal/merge): a custom entry replaces the base entry of its key (the last
 * one, where base repeats a key) in place; the first of custom entries sharing a key counts; others,
 * and entries without a key, are appended.
 */
function mergeByKey<T>(base: T[], custom: T[], key: (t: T) => string): T[] {
  if (!custom.length) return base;
  const baseIndex = new Map<string, number>();
  base.forEach((b, i) => key(b) && baseIndex.set(key(b), i));
  const out = [...base];
  const seen = new Set<string>();
  for (const c of custom) {
    const k = key(c);
    if (k) {
      if (seen.has(k)) continue;
      seen.add(k);
      const i = baseIndex.get(k);
      if (i !== undefined) {
        out[i] = c;
        continue;
      }
    }
    out.push(c);
  }
  return out;
}
