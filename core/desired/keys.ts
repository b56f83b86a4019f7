/**
 * The key of a bundle deployment, "<cluster>/<bundle>": the logical name of its BundleDeployment
 * resource, the key of the stack's `deployments` output and of the last deploymentIds. Built and
 * parsed only here (cluster names cannot hold "/", bundle names are DNS labels).
 */
export function deploymentKey(d: { cluster: string; bundle: string }): string {
  return `${d.cluster}/${d.bundle}`;
}

/** The cluster of a deployment key. */
export function clusterOfKey(key: string): string {
  return key.slice(0, key.indexOf("/"));
}
