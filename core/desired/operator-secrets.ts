/**
 * The operator's Secrets on the clusters (gitRepos[].downstreamResources, core/config/downstream-resources.ts):
 * on every cluster a GitRepo's targets match, each of its Secrets, with the namespace it lands in. They
 * are part of the cluster's setup (setup.ts), the set that creates the cluster's namespaces before any
 * bundle is applied: applied as the cluster's own identity (the operator's, not a bundle's service
 * account), kept in the set's secret objects (a Pulumi secret in the state and the preview, redacted
 * from the provider's messages), pruned by that set when the GitRepo stops targeting the cluster or the
 * entry goes. The GitRepo's bundles on that cluster are applied after the setup.
 */
import { StackConfig } from "../config/stack";
import { FleetError } from "../base/errors";
import { K8sObject } from "../model/k8s-object";
import { clusterLabels } from "./ownership";
import { PlanEntry } from "../targeting/plan";
import { BUILT_IN_NAMESPACES, clusterNamespaceName } from "./namespaces";
import { DesiredNamespace } from "./types";

/** Which GitRepo's stack entry a Secret on a cluster comes from (an annotation: the ownership labels stay the stack's, so no bundle may adopt it). */
export const DOWNSTREAM_OF_ANNOTATION = "pulumi-fleet.io/downstream-resource-of";

export interface OperatorSecret {
  gitRepo: string;
  /** The stack file field it comes from, for errors: gitRepos[i].downstreamResources[j]. */
  field: string;
  manifest: {
    apiVersion: "v1";
    kind: "Secret";
    metadata: { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
    type: string;
    data: Record<string, string>;
  };
}

/**
 * Per cluster (only those with some), the Secrets of every GitRepo whose targets match it (`selected`:
 * each GitRepo's clusters, match.ts), in stack order. `agentNamespace`: the namespace a cluster's deployed agent owns, which no GitRepo's Secret may
 * land in (an error naming the field: the agent's namespace is the stack's).
 */
export function operatorSecrets(
  config: Pick<StackConfig, "file" | "gitRepos" | "clusters">,
  selected: ReadonlyMap<string, ReadonlySet<string>>,
  agentNamespace: (cluster: string) => string | undefined,
): Map<string, OperatorSecret[]> {
  const out = new Map<string, OperatorSecret[]>();
  config.gitRepos.forEach((repo, r) => {
    if (!repo.downstreamResources?.length) return;
    for (const cluster of config.clusters.filter((c) => selected.get(repo.name)?.has(c.name))) {
      repo.downstreamResources.forEach((s, i) => {
        const field = `gitRepos[${r}].downstreamResources[${i}]`;
        if (s.namespace === agentNamespace(cluster.name)) {
          throw new FleetError(`${JSON.stringify(s.namespace)} is the namespace of cluster ${cluster.name}'s agent, which is the stack's, not a GitRepo's`, {
            file: config.file,
            field: `${field}.namespace`,
            gitRepo: repo.name,
            cluster: cluster.name,
          });
        }
        const list = out.get(cluster.name) ?? out.set(cluster.name, []).get(cluster.name)!;
        list.push({
          gitRepo: repo.name,
          field,
          manifest: {
            apiVersion: "v1",
            kind: "Secret",
            type: s.type,
            data: s.data,
            metadata: {
              name: s.name,
              namespace: s.namespace,
              // The stack's labels win: only an object carrying them is pruned by the setup.
              labels: { ...s.labels, ...clusterLabels(cluster.name) },
              annotations: { ...s.annotations, [DOWNSTREAM_OF_ANNOTATION]: repo.name },
            },
          },
        });
      });
    }
  });
  return out;
}

/**
 * A bundle that declares an operator's Secret, or the Namespace one lands in, on that cluster fails
 * alone: an object has one owner, and the namespace is created by the cluster before any bundle (as
 * Fleet's agent creates it before the bundle's Helm release, which then refuses a Namespace it did not
 * create).
 */
export function checkSecretClaims(
  entries: PlanEntry[],
  objectsOf: (e: PlanEntry) => K8sObject[],
  secrets: ReadonlyMap<string, OperatorSecret[]>,
  fail: (e: PlanEntry, err: unknown) => void,
): void {
  for (const e of entries) {
    const mine = secrets.get(e.cluster);
    if (!mine?.length) continue;
    for (const o of objectsOf(e)) {
      const ns = o.metadata.namespace ?? e.namespace;
      const taken =
        o.kind === "Namespace"
          ? mine.find((s) => s.manifest.metadata.namespace === o.metadata.name)
          : o.kind === "Secret" && (o.apiVersion ?? "v1") === "v1"
            ? mine.find((s) => s.manifest.metadata.name === o.metadata.name && s.manifest.metadata.namespace === ns)
            : undefined;
      if (!taken) continue;
      const what = o.kind === "Namespace" ? `Namespace ${o.metadata.name}, where` : `Secret ${ns}/${o.metadata.name}, which`;
      fail(
        e,
        new FleetError(
          `declares ${what} the stack's ${taken.field} puts GitRepo ${taken.gitRepo}'s Secret on this cluster; ` +
            "the cluster creates those before any bundle and an object has one owner: leave it out of the bundle (use namespaceLabels for the namespace's labels)",
          { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster },
        ),
      );
      break;
    }
  }
}

/**
 * The cluster's namespaces with those its Secrets land in: a namespace no bundle needs is created for
 * them and kept when they go (nothing else of it is known to this stack). A built-in namespace, or one
 * the cluster's agent owns, is not created.
 */
export function withSecretNamespaces(
  cluster: string,
  namespaces: DesiredNamespace[],
  secrets: OperatorSecret[],
  agentNamespace: string | undefined,
): DesiredNamespace[] {
  const have = new Set(namespaces.map((ns) => ns.metadata.name));
  const added = [...new Set(secrets.map((s) => s.manifest.metadata.namespace))]
    .filter((ns) => !have.has(ns) && !BUILT_IN_NAMESPACES.has(ns) && ns !== agentNamespace)
    .map((ns): DesiredNamespace => ({ name: clusterNamespaceName(cluster, ns), metadata: { name: ns, labels: clusterLabels(cluster) }, retainOnDelete: true }));
  return added.length ? [...namespaces, ...added].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) : namespaces;
}
