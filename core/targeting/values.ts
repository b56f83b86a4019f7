/**
 * Per-cluster helm values, Fleet's preprocessHelmValues: `global.fleet.clusterLabels.<label>` string
 * substitution, then (unless disablePreProcess) the values rendered as one `${ }` template over their
 * YAML text, then each templateValues entry rendered, parsed as YAML, and copied over the values.
 * As in Fleet, a cluster without labels gets no templating at all.
 */
import * as YAML from "yaml";
import { FleetError } from "../errors";
import { compileTemplate, CompiledTemplate } from "./gotemplate";
import { compileLeafTemplates, LeafTemplates } from "./leaf-templates";
import { HelmOptions } from "../bundles/types";
import { ClusterConfig } from "../config/stack";

const CLUSTER_LABEL_PREFIX = "global.fleet.clusterLabels.";
/** `.ClusterNamespace`: the namespace Fleet keeps Cluster objects in for downstream clusters. */
export const CLUSTER_NAMESPACE = "fleet-default";

/** YAML 1.1, as Go's yaml.v2 (behind sigs.k8s.io/yaml) reads and writes values: `yes` is a boolean there. */
const YAML_OPTIONS = { version: "1.1" as const };

/** The cluster-independent part of templating, prepared once per distinct helm options. */
interface PreparedValues {
  values: Record<string, unknown>;
  /** The values' YAML text compiled as a template; undefined when it holds no `${`. */
  template?: CompiledTemplate;
  /** The same templating value by value, without a YAML parse (leaf-templates.ts), when it qualifies. */
  leaves?: LeafTemplates;
  templateValues: [string, CompiledTemplate][];
}

const prepared = new WeakMap<HelmOptions, PreparedValues>();

function prepare(helm: HelmOptions): PreparedValues {
  let p = prepared.get(helm);
  if (!p) {
    const values = helm.values ?? {};
    const text = YAML.stringify(values, { ...YAML_OPTIONS, sortMapEntries: true, lineWidth: 0 });
    const template = text.includes("${") ? compileTemplate(text) : undefined;
    p = {
      values,
      template,
      leaves: template ? compileLeafTemplates(values, YAML_OPTIONS) : undefined,
      templateValues: Object.entries(helm.templateValues ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, compileTemplate(v)]),
    };
    prepared.set(helm, p);
  }
  return p;
}

/**
 * `helm` may be shared by many clusters (the plan caches merged options per target combination), so
 * it is never mutated. Labels are substituted after templating rather than before as in Fleet: the
 * result is the same because a substituted label value can never contain `${` (label syntax forbids it).
 */
export function templateHelmValues(helm: HelmOptions, cluster: ClusterConfig, ctx: { gitRepo: string; bundle: string }): HelmOptions {
  if (Object.keys(cluster.labels).length === 0) return helm;
  if (!helm.templateValues && Object.keys(helm.values ?? {}).length === 0) return helm;
  if (helm.disablePreProcess) return { ...helm, values: substituteLabels(structuredClone(helm.values ?? {}), cluster.labels) };
  const data = {
    ClusterNamespace: CLUSTER_NAMESPACE,
    ClusterName: cluster.name,
    ClusterLabels: cluster.labels,
    ClusterAnnotations: cluster.annotations,
    ClusterValues: cluster.templateValues,
  };
  const fail = (what: string, err: unknown): never => {
    throw new FleetError(`${what}: ${(err as Error).message}`, { ...ctx, cluster: cluster.name, field: "helm.values" });
  };
  let p: PreparedValues;
  try {
    p = prepare(helm);
  } catch (err) {
    return fail("failed to parse helm values template", err);
  }
  let rendered: Record<string, unknown>;
  try {
    rendered = !p.template
      ? structuredClone(p.values)
      : p.leaves?.render(p.values, data) ?? ((YAML.parse(p.template.render(data), YAML_OPTIONS) ?? {}) as Record<string, unknown>);
  } catch (err) {
    return fail("failed to render helm values template", err);
  }
  substituteLabels(rendered, cluster.labels);
  for (const [key, tpl] of p.templateValues) {
    try {
      rendered[key] = YAML.parse(tpl.render(data), YAML_OPTIONS);
    } catch (err) {
      fail(`failed to render helm templateValues.${key}`, err);
    }
  }
  return { ...helm, values: rendered };
}

function substituteLabels(node: Record<string, unknown>, labels: Record<string, string>): Record<string, unknown> {
  for (const [k, v] of Object.entries(node)) {
    if (typeof v === "string" && v.startsWith(CLUSTER_LABEL_PREFIX)) {
      node[k] = labels[v.slice(CLUSTER_LABEL_PREFIX.length)] ?? "";
    } else if (v && typeof v === "object" && !Array.isArray(v)) {
      substituteLabels(v as Record<string, unknown>, labels);
    } else if (Array.isArray(v)) {
      for (const item of v) if (item && typeof item === "object" && !Array.isArray(item)) substituteLabels(item as Record<string, unknown>, labels);
    }
  }
  return node;
}
