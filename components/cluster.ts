/**
 * A target cluster: its Kubernetes providers (its own, and one per impersonated service account) and
 * the namespaces its bundles need, as core/desired decided them. To decommission a cluster that no
 * longer answers, set `deleteUnreachable: true` on it and remove it from the stack: the provider then
 * drops its resources from the state instead of failing the update.
 */
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { AGENT_TYPE, CLUSTER_TYPE, DesiredCluster, ProviderSettings } from "../core/desired/types";
import { agentNamespaceResource } from "../core/desired/agent";
import { FleetProvider } from "./pair";

export class Cluster extends pulumi.ComponentResource {
  readonly provider: k8s.Provider;
  /** Per impersonated user, a provider applying as that user; same clusterIdentifier, so moving a bundle between accounts replaces nothing. */
  readonly accountProviders = new Map<string, k8s.Provider>();
  readonly namespaces: Map<string, k8s.core.v1.Namespace>;
  /** pulumi-fleet's provider on this cluster, which applies its BundleDeployments; one more per impersonated user. */
  readonly fleetProvider: FleetProvider;
  readonly accountFleetProviders = new Map<string, FleetProvider>();

  constructor(name: string, c: DesiredCluster, opts: pulumi.ComponentResourceOptions = {}) {
    super(CLUSTER_TYPE, name, {}, opts);
    // The providers are the Cluster's siblings, not its children: `pulumi state move` (moving a cluster
    // between shards, automation/shard-moves.ts) copies providers instead of moving them, and a copied
    // provider whose parent moves along breaks the destination's state (pulumi v3.259.0). The alias
    // keeps the URN of stacks created when they were children.
    const providerOpts = { parent: opts.parent, aliases: [{ parent: this }, ...(c.arrived ? [{ parent: pulumi.rootStackResource }] : [])] };
    this.provider = provider(c.provider, providerOpts);
    for (const a of c.accountProviders) this.accountProviders.set(a.user, provider(a.provider, providerOpts));
    const fleetOpts = { parent: opts.parent, ...(c.arrived ? { aliases: [{ parent: pulumi.rootStackResource }] } : {}) };
    this.fleetProvider = fleetProvider(c.provider, fleetOpts);
    for (const a of c.accountProviders) this.accountFleetProviders.set(a.user, fleetProvider(a.provider, fleetOpts));
    // The agent's namespace, when its agent is switched off and a bundle needs it, was the Agent's resource.
    const agentUrn = pulumi.createUrn(name, AGENT_TYPE, this);
    this.namespaces = new Map(c.namespaces.map((ns) => [ns.metadata.name,
      new k8s.core.v1.Namespace(ns.name, { metadata: ns.metadata }, {
        parent: this, provider: this.provider, retainOnDelete: ns.retainOnDelete,
        ...(ns.wasAgentNamespace ? { aliases: [{ name: agentNamespaceResource(name), parent: agentUrn }] } : {}),
      })]));
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

function provider({ name, kubeconfig, ...settings }: ProviderSettings, opts: pulumi.CustomResourceOptions): k8s.Provider {
  return new k8s.Provider(name, { ...settings, ...(kubeconfig !== undefined ? { kubeconfig: pulumi.secret(kubeconfig) } : {}) }, opts);
}
