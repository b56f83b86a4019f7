/**
 * Keys of bundles and bundle deployments. A bundle is known by its GitRepo and name, as Fleet knows it
 * by its workspace and name: a fleet.yaml `name:` equal to another GitRepo's bundle names a different
 * bundle, never that one (issue 41). A deployment's key, "<cluster>/<gitRepo>/<bundle>", is the logical
 * name of its BundleDeployment resource and the key of the stack's `deployments` and `deploymentStates`
 * outputs (an earlier version's "<cluster>/<bundle>" is renamed by the state's migration: core/migrate).
 * Built and parsed only here (cluster, GitRepo and bundle names are DNS labels: none holds "/").
 */
export interface BundleId {
  gitRepo: string;
  bundle: string;
}

/** "<gitRepo>/<bundle>": a bundle's key within the stack. */
export function bundleRef(b: BundleId): string {
  return `${b.gitRepo}/${b.bundle}`;
}

export function parseBundleRef(ref: string): BundleId {
  const at = ref.indexOf("/");
  return { gitRepo: ref.slice(0, at), bundle: ref.slice(at + 1) };
}

export function deploymentKey(d: BundleId & { cluster: string }): string {
  return `${d.cluster}/${d.gitRepo}/${d.bundle}`;
}

/** The cluster of a deployment key. */
export function clusterOfKey(key: string): string {
  return key.slice(0, key.indexOf("/"));
}

/** The cluster, GitRepo and bundle of a deployment key. */
export function parseDeploymentKey(key: string): BundleId & { cluster: string } {
  const cluster = clusterOfKey(key);
  return { cluster, ...parseBundleRef(key.slice(cluster.length + 1)) };
}

/** The logical name at the end of a URN. */
export const nameOfUrn = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);
