/**
 * Per-cluster helm values, Fleet's preprocessHelmValues: `global.fleet.clusterLabels.<label>` string
 * substitution, then (unless disablePreProcess) the values rendered as one `${ }` template over their
 * YAML text, then each templateValues entry rendered, parsed as YAML, and copied over the values.
 * As in Fleet, a cluster without labels gets no templating at all.
 */
import * as YAML from "yaml";
import { FleetError } from "../errors";
import { renderTemplate } from "./gotemplate";
import { HelmOptions } from "../bundles/types";
import { ClusterConfig } from "../config/stack";

const CLUSTER_LABEL_PREFIX = "global.fleet.clusterLabels.";
/** `.ClusterNamespace`: the namespace Fleet keeps Cluster objects in for downstream clusters. */
export const CLUSTER_NAMESPACE = "fleet-default";

export function templateHelmValues(helm: HelmOptions, cluster: ClusterConfig, ctx: { gitRepo: string; bundle: string }): HelmOptions {
  if (Object.keys(cluster.labels).length === 0) return helm;
  const values = structuredClone(helm.values ?? {});
  if (!helm.templateValues && Object.keys(values).length === 0) return helm;
  substituteLabels(values, cluster.labels);
  if (helm.disablePreProcess) return { ...helm, values };
  const data = {
    ClusterNamespace: CLUSTER_NAMESPACE,
    ClusterName: cluster.name,
    ClusterLabels: { ...cluster.labels },
    ClusterAnnotations: { ...cluster.annotations },
    ClusterValues: cluster.templateValues,
  };
  const fail = (what: string, err: unknown): never => {
    throw new FleetError(`${what}: ${(err as Error).message}`, { ...ctx, cluster: cluster.name, field: "helm.values" });
  };
  let rendered: Record<string, unknown>;
  try {
    const text = YAML.stringify(values, { sortMapEntries: true, lineWidth: 0 });
    const out = renderTemplate(text, data);
    rendered = (YAML.parse(out) ?? {}) as Record<string, unknown>;
  } catch (err) {
    return fail("failed to render helm values template", err);
  }
  for (const [key, tpl] of Object.entries(helm.templateValues ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    try {
      rendered[key] = YAML.parse(renderTemplate(tpl, data));
    } catch (err) {
      fail(`failed to render helm templateValues.${key}`, err);
    }
  }
  return { ...helm, values: rendered };
}

function substituteLabels(node: Record<string, unknown>, labels: Record<string, string>): void {
  for (const [k, v] of Object.entries(node)) {
    if (typeof v === "string" && v.startsWith(CLUSTER_LABEL_PREFIX)) {
      node[k] = labels[v.slice(CLUSTER_LABEL_PREFIX.length)] ?? "";
    } else if (v && typeof v === "object" && !Array.isArray(v)) {
      substituteLabels(v as Record<string, unknown>, labels);
    } else if (Array.isArray(v)) {
      for (const item of v) if (item && typeof item === "object" && !Array.isArray(item)) substituteLabels(item as Record<string, unknown>, labels);
    }
  }
}
