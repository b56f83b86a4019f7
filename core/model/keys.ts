/**
 * Keys of bundles and bundle deployments. A bundle is known by its GitRepo and name, as Fleet knows it
 * by its workspace and name: a fleet.yaml `name:` equal to another GitRepo's bundle names a different
 * bundle, never that one (issue 41). A deployment's key, "<cluster>/<gitRepo>/<bundle>", is the logical
 * name of its BundleDeployment resource and the key of the stack's `deployments` and `deploymentStates`
 * outputs. Versions before this one keyed deployments "<cluster>/<bundle>" (a legacy key): read back,
 * such keys are qualified with their record's GitRepo (qualifyKeys). Built and parsed only here
 * (cluster, GitRepo and bundle names are DNS labels: none holds "/").
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

/** The key an earlier version gave the deployment: the alias of its BundleDeployment's old name. */
export function legacyKey(d: { cluster: string; bundle: string }): string {
  return `${d.cluster}/${d.bundle}`;
}

export const isLegacyKey = (key: string) => key.indexOf("/") === key.lastIndexOf("/");

/** A legacy key with its GitRepo: the deployment's key now. */
export function qualifiedKey(legacy: string, gitRepo: string): string {
  const cluster = clusterOfKey(legacy);
  return deploymentKey({ cluster, gitRepo, bundle: legacy.slice(cluster.length + 1) });
}

/**
 * A map read back from the stack (outputs, state) with every legacy key qualified by the GitRepo
 * `gitRepoOf` gives for it; one it cannot tell is dropped (nothing can be matched to it, and nothing
 * is deleted because of it: the engine still holds its resource). Qualified keys pass unchanged.
 */
export function qualifyKeys<T>(byKey: Record<string, T>, gitRepoOf: (legacy: string, value: T) => string | undefined): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [key, value] of Object.entries(byKey)) {
    if (!isLegacyKey(key)) {
      out[key] = value;
      continue;
    }
    const gitRepo = gitRepoOf(key, value);
    if (gitRepo) out[qualifiedKey(key, gitRepo)] = value;
  }
  return out;
}
