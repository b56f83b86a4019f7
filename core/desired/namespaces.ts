/**
 * Which namespaces a cluster needs created. Several bundles may share a namespace, so namespaces are
 * owned by the cluster, not by one bundle: one resource per (cluster, namespace). Namespaces a bundle
 * defines itself, and the ones every cluster has, are left alone.
 */
import { K8sObject } from "../model/k8s-object";
import { FleetError } from "../base/errors";
import { PlanEntry } from "../targeting/plan";

/** The namespaces every cluster has: never created nor deleted by this stack. */
export const BUILT_IN_NAMESPACES: ReadonlySet<string> = new Set(["default", "kube-system", "kube-public", "kube-node-lease"]);

export interface NamespaceSpec {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Deleted with its last bundle only when every bundle in it sets deleteNamespace. */
  deleteWithBundles: boolean;
  /** Bundles that need it, for error messages and the summary. */
  bundles: string[];
}

/**
 * `objectsOf` gives the rendered raw YAML objects of each entry on this cluster. Two
 * bundles giving one namespace different labels or annotations conflict: with `onConflict` the later
 * one goes there and adds nothing (one pass), else the conflict is thrown.
 */
export function namespacesForCluster(
  cluster: string,
  entries: PlanEntry[],
  objectsOf: (entry: PlanEntry) => K8sObject[],
  onConflict?: (entry: PlanEntry, err: FleetError) => void,
): NamespaceSpec[] {
  const defined = new Set<string>();
  for (const e of entries) for (const o of objectsOf(e)) if (o.kind === "Namespace") defined.add(o.metadata.name);
  const specs = new Map<string, NamespaceSpec>();
  const need = (name: string, entry: PlanEntry, own: boolean) => {
    if (BUILT_IN_NAMESPACES.has(name) || defined.has(name)) return;
    let spec = specs.get(name);
    if (!spec) {
      spec = { name, labels: {}, annotations: {}, deleteWithBundles: true, bundles: [] };
      specs.set(name, spec);
    }
    spec.deleteWithBundles &&= !!entry.options.deleteNamespace;
    if (own) {
      // namespaceLabels/namespaceAnnotations describe the bundle's own namespace.
      merge(spec.labels, entry.options.namespaceLabels ?? {}, "namespaceLabels", { spec, entry, cluster });
      merge(spec.annotations, entry.options.namespaceAnnotations ?? {}, "namespaceAnnotations", { spec, entry, cluster });
    }
    if (!spec.bundles.includes(entry.bundle)) spec.bundles.push(entry.bundle);
  };
  for (const entry of entries) {
    const conflict =
      specs.has(entry.namespace) && !BUILT_IN_NAMESPACES.has(entry.namespace) && !defined.has(entry.namespace)
        ? conflictOf(specs.get(entry.namespace)!, entry, cluster)
        : undefined;
    if (conflict) {
      if (!onConflict) throw conflict;
      onConflict(entry, conflict);
      continue;
    }
    need(entry.namespace, entry, true);
    for (const o of objectsOf(entry)) if (o.metadata.namespace && o.metadata.namespace !== entry.namespace) need(o.metadata.namespace, entry, false);
  }
  return [...specs.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The error merging this entry's namespaceLabels/namespaceAnnotations into its namespace would raise, if any. */
function conflictOf(spec: NamespaceSpec, entry: PlanEntry, cluster: string): FleetError | undefined {
  try {
    merge({ ...spec.labels }, entry.options.namespaceLabels ?? {}, "namespaceLabels", { spec, entry, cluster });
    merge({ ...spec.annotations }, entry.options.namespaceAnnotations ?? {}, "namespaceAnnotations", { spec, entry, cluster });
    return undefined;
  } catch (err) {
    return err as FleetError;
  }
}

function merge(
  into: Record<string, string>,
  from: Record<string, string>,
  field: string,
  at: { spec: NamespaceSpec; entry: PlanEntry; cluster: string },
): void {
  const { spec, entry, cluster } = at;
  for (const [k, v] of Object.entries(from)) {
    if (k in into && into[k] !== v) {
      throw new FleetError(
        `namespace ${spec.name}: ${field} ${k} is ${JSON.stringify(into[k])} in another bundle on this cluster (${spec.bundles.join(", ")}) and ${JSON.stringify(v)} here`,
        {
          gitRepo: entry.gitRepo,
          bundle: entry.bundle,
          cluster,
          field,
        },
      );
    }
    into[k] = v;
  }
}

/** The logical name of the Namespace resource a cluster creates: "<cluster>/<namespace>". */
export const clusterNamespaceName = (cluster: string, namespace: string) => `${cluster}/${namespace}`;

/**
 * A setup's message for a namespace the API server refused (tools/fleet-provider namespaceRefusalLine).
 * Read from the messages, which every stored status holds: an output an earlier version did not store
 * is unknown to a preview, and every pair on the cluster would show as changing.
 */
const REFUSAL_LINE = /^namespace ([a-z0-9-]+) was refused by the API server: ([\s\S]*)$/;

/**
 * The refusals a pair fails with: those of the namespaces it needs among what its cluster's setup
 * reported refused, or undefined when it needs none of them. A namespace is the failure domain of the
 * pairs that use it: a team's namespace the API server refuses fails that team's pairs, never a bystander's.
 */
export function namespacesRefusedFor(needed: readonly string[], setupMessages: readonly string[] | null | undefined): Record<string, string> | undefined {
  const refused = new Map<string, string>();
  for (const line of setupMessages ?? []) {
    const m = REFUSAL_LINE.exec(line);
    if (m) refused.set(m[1], m[2]);
  }
  const mine = [...new Set(needed)].filter((ns) => refused.has(ns)).sort();
  return mine.length ? Object.fromEntries(mine.map((ns) => [ns, refused.get(ns)!])) : undefined;
}
