/**
 * Where Helm's `lookup` may read (issue 41). A lookup is read on the deployment's cluster with the
 * identity that deploys it, which may read far more than the GitRepo's own namespaces; GitRepo content
 * is untrusted and a GitRepo is a team's boundary, so a lookup of a namespaced kind is read only in the
 * GitRepo's namespaces: the deployment's own namespace and those its `allowedTargetNamespaces` match.
 * Anything else fails the deployment before it is read (never a silent "not found": the chart would
 * render differently than on Fleet without anyone knowing).
 */
import { CLUSTER_SCOPED } from "../model/k8s-object";
import { namespaceAllowed } from "../config/git-repo";
import { FleetError } from "../base/errors";
import { LookupKey } from "../model/renderer-protocol";

/** What one deployment's lookups may read. */
export interface LookupScope {
  /** The deployment's namespace (fleet.yaml namespace, else defaultNamespace, else "default"). */
  namespace: string;
  /** The GitRepo's allowedTargetNamespaces (names or `*` patterns), if set. */
  allowed?: readonly string[];
  /**
   * Namespaces of the cluster that are other GitRepos' (their deployments were there first, and this
   * GitRepo's were not), with those GitRepos: not read, even as the deployment's own namespace, unless
   * the operator allowed them (allowedTargetNamespaces). Content choosing another team's namespace
   * must not make the deploying identity read that team's Secrets.
   */
  foreign?: (namespace: string) => string[] | undefined;
}

/**
 * Readable by everyone, unauthenticated users included, by Kubernetes' design (cluster-info): charts
 * read cluster facts there. Not its Secrets: a Secret is never public.
 */
const PUBLIC_NAMESPACE = "kube-public";

/**
 * Why the key may not be read, or undefined when it may. Cluster-scoped kinds (Namespace, Node,
 * StorageClass, CRDs...) are read whatever namespace the template gives (the reader ignores it, as
 * Helm's client). A kind not known to be cluster-scoped is taken as namespaced: its namespace must be
 * the GitRepo's. A Get with no namespace cannot reach a namespaced object (the API serves no such
 * path), so it is read; a list with no namespace lists every namespace and is refused.
 */
export function lookupOutOfScope(key: LookupKey, scope: LookupScope): string | undefined {
  if (key.kind !== "Secret" && CLUSTER_SCOPED.has(key.kind)) return undefined;
  if (key.namespace === "") {
    if (key.name !== "") return undefined;
    return `lists ${key.kind} objects across all namespaces`;
  }
  if (scope.allowed && namespaceAllowed(key.namespace, scope.allowed)) return undefined;
  const others = scope.foreign?.(key.namespace);
  if (others)
    return `${key.name ? `reads ${key.kind} ${key.name}` : `lists ${key.kind} objects`} in namespace ${key.namespace}, which is GitRepo ${others.join(", ")}'s (its deployments were there first)`;
  if (key.namespace === scope.namespace) return undefined;
  if (key.namespace === PUBLIC_NAMESPACE && key.kind !== "Secret") return undefined;
  return key.name ? `reads ${key.kind} ${key.name} in namespace ${key.namespace}` : `lists ${key.kind} objects in namespace ${key.namespace}`;
}

/** The deployment's failure for a lookup out of its scope: what, where, and the setting that widens it. */
export function lookupScopeError(key: LookupKey, scope: LookupScope, where: { gitRepo: string; bundle: string; cluster: string }): FleetError | undefined {
  const why = lookupOutOfScope(key, scope);
  if (!why) return undefined;
  const own = scope.allowed?.length
    ? `namespace ${scope.namespace} or gitRepos[${where.gitRepo}].allowedTargetNamespaces (${scope.allowed.join(", ")})`
    : `namespace ${scope.namespace}`;
  return new FleetError(
    `a template's lookup ${why} (lookup ${JSON.stringify(key.apiVersion)} ${JSON.stringify(key.kind)} ${JSON.stringify(key.namespace)} ${JSON.stringify(key.name)}), ` +
      `outside this GitRepo's namespaces: it is not read. A lookup reads only the deployment's ${own}; the stack setting ` +
      `gitRepos[${where.gitRepo}].allowedTargetNamespaces widens that (it also lets the GitRepo's objects into those namespaces)`,
    where,
  );
}
