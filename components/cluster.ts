/**
 * A target cluster: its Kubernetes provider and the namespaces its bundles need.
 *
 * The provider's `clusterIdentifier` is the cluster's name, so a rotated kubeconfig or token is an
 * update of the provider, never a replacement of everything deployed through it. In render mode the
 * provider writes manifests to <renderDir>/<cluster> instead of contacting a cluster. To decommission
 * a cluster that no longer answers, set `deleteUnreachable: true` on it and remove it from the stack:
 * the provider then drops its resources from the state instead of failing the update.
 */
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { ClusterConfig } from "../core/config/stack";
import { NamespaceSpec } from "./namespaces";
import { clusterLabels } from "./labels";

export const CLUSTER_TYPE = "pulumi-fleet:index:Cluster";

export interface ClusterArgs {
  config: ClusterConfig;
  /** When set, manifests are rendered to <renderDir>/<cluster name>. */
  renderDir?: string;
  namespaces: NamespaceSpec[];
  /** serviceAccount: per user, a kubeconfig acting as that service account (core/service-accounts.ts). */
  accounts?: Map<string, string>;
  /** Moved in from another shard: its providers may sit at the root of the state (components/previous.ts). */
  arrived?: boolean;
}

export class Cluster extends pulumi.ComponentResource {
  readonly provider: k8s.Provider;
  /** Per impersonated user, a provider applying as that user; same clusterIdentifier, so moving a bundle between accounts replaces nothing. */
  readonly accountProviders = new Map<string, k8s.Provider>();
  readonly namespaces: Map<string, k8s.core.v1.Namespace>;
  readonly clusterName: string;

  constructor(name: string, args: ClusterArgs, opts: pulumi.ComponentResourceOptions = {}) {
    super(CLUSTER_TYPE, name, {}, opts);
    const c = args.config;
    this.clusterName = c.name;
    // The providers are the Cluster's siblings, not its children: `pulumi state move` (moving a cluster
    // between shards, automation/shard-moves.ts) copies providers instead of moving them, and a copied
    // provider whose parent moves along breaks the destination's state (pulumi v3.259.0). The alias
    // keeps the URN of stacks created when they were children.
    const providerOpts = { parent: opts.parent, aliases: [{ parent: this }, ...(args.arrived ? [{ parent: pulumi.rootStackResource }] : [])] };
    this.provider = new k8s.Provider(c.name, providerArgs(c, args.renderDir), providerOpts);
    for (const [user, kubeconfig] of [...(args.accounts ?? [])].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const asAccount: ClusterConfig = { ...c, kubeconfig, context: undefined };
      this.accountProviders.set(user, new k8s.Provider(`${c.name}/as/${user}`, providerArgs(asAccount), providerOpts));
    }
    this.namespaces = new Map(args.namespaces.map((ns) => [ns.name, new k8s.core.v1.Namespace(`${c.name}/${ns.name}`, {
      metadata: {
        name: ns.name,
        labels: { ...ns.labels, ...clusterLabels(c.name) },
        ...(Object.keys(ns.annotations).length ? { annotations: ns.annotations } : {}),
      },
    }, { parent: this, provider: this.provider, retainOnDelete: !ns.deleteWithBundles })]));
    this.registerOutputs({});
  }

  /** The provider applying as `user` (a bundle's serviceAccount), or the cluster's own. */
  providerFor(user?: string): k8s.Provider {
    return user ? this.accountProviders.get(user)! : this.provider;
  }
}

const CLIENT_QPS = 500;
const CLIENT_BURST = 1000;

export function providerArgs(c: ClusterConfig, renderDir?: string): k8s.ProviderArgs {
  // ConfigMaps and Secrets change in place, as Fleet's apply does: by default the provider replaces them
  // on any data change, which deletes and recreates an object users may reference by name.
  const args: k8s.ProviderArgs = { clusterIdentifier: c.name, enableConfigMapMutable: true, enableSecretMutable: true };
  if (renderDir) {
    args.renderYamlToDirectory = path.join(renderDir, c.name);
    return args;
  }
  // The provider's client allows 50 requests/s (burst 120); a create or prune of a few hundred objects
  // then waits on the client's own rate limiter, not on the API server (BENCHMARKS.md). The API
  // server's priority and fairness still protects it.
  args.kubeClientSettings = { qps: CLIENT_QPS, burst: CLIENT_BURST };
  if (c.kubeconfig !== undefined) args.kubeconfig = pulumi.secret(c.kubeconfig);
  if (c.context !== undefined) args.context = c.context;
  if (c.deleteUnreachable) args.deleteUnreachable = true;
  return args;
}
