/**
 * The desired state's parts assembled once the steps have decided (state.ts): each cluster's
 * namespaces, and the clusters with their providers and setup (each deployment: deployment.ts).
 */
import { PlanEntry } from "../targeting/plan";
import { agentObjects } from "./agent";
import { Ground } from "./ground";
import { heldNamespaces, HeldDeployments } from "./held";
import { withSecretNamespaces } from "./operator-secrets";
import { clusterReach, providerSettings } from "./providers";
import { withSetup } from "./setup";
import { Gathered, namespacesOf, Rendered } from "./state-steps";
import { DesiredCluster, DesiredNamespace } from "./types";

export const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Each cluster's namespaces for the deployments that deploy, with those failed deployments keep and the
 * operator's Secrets need. Removing deployments cannot make two bundles' namespace labels conflict: no
 * conflict is left here.
 */
export function finalNamespaces(g: Ground, r: Rendered, entries: PlanEntry[], held: HeldDeployments): Map<string, DesiredNamespace[]> {
  const namespaces = namespacesOf(g, r, entries, (_e, err) => {
    throw err;
  });
  for (const [cluster, list] of namespaces) {
    const owned = g.agentOwned(cluster);
    const names = new Set([...list.map((ns) => ns.metadata.name), ...(owned ? [owned] : [])]);
    list.push(...heldNamespaces(held.deployedOn(cluster), names));
    list.sort(byName);
    namespaces.set(cluster, withSecretNamespaces(cluster, list, g.secrets.get(cluster) ?? [], owned));
  }
  return namespaces;
}

/** Each cluster with its provider, the providers of the identities that deploy on it, its namespaces and agent. */
export function desiredClusters(g: Ground, got: Gathered, namespaces: Map<string, DesiredNamespace[]>, arrived: Set<string>): DesiredCluster[] {
  return [...g.pinned.clusters].sort(byName).map((c): DesiredCluster => {
    const known = got.known.get(c.name)!;
    const agent = g.agents.get(c.name)!.agent;
    return withSetup(
      {
        name: c.name,
        provider: providerSettings(c.name, clusterReach(c, known), g.pinned.renderDir),
        accountProviders: [...known.kubeconfigs]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([user, kubeconfig]) => ({ user, provider: providerSettings(`${c.name}/as/${user}`, { ...c, kubeconfig, context: undefined }) })),
        namespaces: namespaces.get(c.name)!,
        ...(agent ? { agent: agentObjects(c.name, agent) } : {}),
        arrived: arrived.has(c.name),
      },
      g.secrets.get(c.name),
      // A paused cluster's setup (its agent, namespaces, the operator's Secrets) is registered paused: its
      // provider applies nothing until the pause is removed, then the setup's deploymentID differs from the applied one.
      g.paused.has(c.name),
    );
  });
}
