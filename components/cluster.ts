/**
 * A target cluster: pulumi-fleet's providers for it (its own, and one per impersonated service account)
 * and its ClusterSetup, the one resource that creates the namespaces its bundles need and its agent, as
 * core/desired decided them. To decommission a cluster that no longer answers, set
 * `deleteUnreachable: true` on it and remove it from the stack: the provider then drops its resources
 * from the state instead of failing the update.
 */
import * as pulumi from "@pulumi/pulumi";
import { CLUSTER_TYPE, DesiredCluster, ProviderSettings } from "../core/desired/types";
import { ClusterSetupSet, FleetProvider } from "./pair";

export class Cluster extends pulumi.ComponentResource {
  /** pulumi-fleet's provider on this cluster, which applies its BundleDeployments; one more per impersonated user. */
  readonly fleetProvider: FleetProvider;
  readonly accountFleetProviders = new Map<string, FleetProvider>();
  /** Its namespaces and agent; absent when it has neither. Bundles in them are applied after it. */
  readonly setup?: ClusterSetupSet;

  constructor(name: string, c: DesiredCluster, opts: pulumi.ComponentResourceOptions = {}) {
    super(CLUSTER_TYPE, name, {}, opts);
    // The providers are the Cluster's siblings, not its children: `pulumi state move` (moving a cluster
    // between shards, automation/shard-moves.ts) copies providers instead of moving them, and a copied
    // provider whose parent moves along breaks the destination's state (pulumi v3.259.0).
    const fleetOpts = { parent: opts.parent, ...(c.arrived ? { aliases: [{ parent: pulumi.rootStackResource }] } : {}) };
    this.fleetProvider = fleetProvider(c.provider, fleetOpts);
    for (const a of c.accountProviders) this.accountFleetProviders.set(a.user, fleetProvider(a.provider, fleetOpts));
    if (c.setup) {
      // The agent's token is a secret in the state and the engine's events; the rest of the set shows as it is.
      const { secretObjects } = c.setup;
      this.setup = new ClusterSetupSet(name, { ...c.setup, ...(secretObjects ? { secretObjects: pulumi.secret(secretObjects) } : {}) }, { parent: this, provider: this.fleetProvider });
    }
    this.registerOutputs({});
  }

  /** pulumi-fleet's provider applying as `user` (a bundle's serviceAccount), or the cluster's own. */
  fleetProviderFor(user?: string): FleetProvider {
    return user ? this.accountFleetProviders.get(user)! : this.fleetProvider;
  }
}

/** The same cluster and credentials as its Kubernetes provider (a rotated kubeconfig is an update, never a replacement). */
function fleetProvider(s: ProviderSettings, opts: pulumi.CustomResourceOptions): FleetProvider {
  return new FleetProvider(s.name, {
    clusterIdentifier: s.clusterIdentifier,
    ...(s.kubeconfig !== undefined ? { kubeconfig: s.kubeconfig } : {}), ...(s.context !== undefined ? { context: s.context } : {}),
    ...(s.renderYamlToDirectory ? { renderYamlToDirectory: s.renderYamlToDirectory } : {}),
    ...(s.kubeClientSettings ? { kubeClientSettings: s.kubeClientSettings } : {}),
    ...(s.deleteUnreachable ? { deleteUnreachable: true } : {}),
  }, opts);
}
