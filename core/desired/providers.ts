/** How the stack's provider reaches each cluster (ProviderSettings, types.ts). */
import * as path from "node:path";
import { ClusterConfig } from "../config/stack";
import { ClusterFacts } from "./cluster-facts";
import { ClusterAccess, DesiredCluster, ProviderSettings } from "./types";

/** The provider's client allows 50 requests/s (burst 120) by default: see providerSettings. */
const CLIENT_QPS = 500;

const CLIENT_BURST = 1000;

/**
 * A cluster's access for the stack's provider. Its `clusterIdentifier` is the cluster's name, so a
 * rotated kubeconfig or token is an update of the provider, never a replacement of anything deployed
 * through it. In render mode the provider writes manifests to <renderDir>/<cluster> instead of
 * contacting a cluster.
 */
export function providerSettings(name: string, c: ClusterConfig, renderDir?: string): ProviderSettings {
  const settings: ProviderSettings = { name, clusterIdentifier: c.name };
  if (renderDir) return { ...settings, renderYamlToDirectory: path.join(renderDir, c.name) };
  // With the provider's default rate limit, a create or prune of a few hundred objects waits on the
  // client, not on the API server (BENCHMARKS.md); the API server's priority and fairness still protects it.
  settings.kubeClientSettings = { qps: CLIENT_QPS, burst: CLIENT_BURST };
  if (c.kubeconfig !== undefined) settings.kubeconfig = c.kubeconfig;
  if (c.context !== undefined) settings.context = c.context;
  if (c.deleteUnreachable) settings.deleteUnreachable = true;
  return settings;
}

/** The cluster as its provider reaches it: with the ambient kubeconfig reduced to its context when one was gathered (gather.ts). */
export function clusterReach(c: ClusterConfig, facts: Pick<ClusterFacts, "ambientKubeconfig">): ClusterConfig {
  return facts.ambientKubeconfig !== undefined ? { ...c, kubeconfig: facts.ambientKubeconfig, context: undefined } : c;
}

/** Every cluster's access, and each impersonated user's, by the provider settings' names (providerSettings): the stack's provider's configuration (components/fleet.ts). */
export function clusterAccess(clusters: DesiredCluster[]): Record<string, ClusterAccess> {
  const access = ({ name: _key, ...settings }: ProviderSettings): ClusterAccess => settings;
  return Object.fromEntries(
    clusters.flatMap((c) => [[c.provider.name, access(c.provider)], ...c.accountProviders.map((a) => [a.provider.name, access(a.provider)])]),
  );
}
