/**
 * The engine's unit: one BundleDeployment resource per (bundle, cluster) pair, applied as one set by
 * pulumi-fleet's own provider (tools/fleet-provider), and that provider, one per cluster (and per
 * impersonated user). A refused apply is the pair's state in its outputs, not an engine error. Each
 * cluster's namespaces and agent are one more such set, its ClusterSetup.
 */
import * as pulumi from "@pulumi/pulumi";
import { PairSpec, PairStatus } from "../core/desired/pair";
import { BUNDLE_DEPLOYMENT_TYPE } from "../core/desired/types";
import { CLUSTER_SETUP_TYPE } from "../core/desired/setup";

export interface FleetProviderArgs {
  clusterIdentifier: string;
  kubeconfig?: pulumi.Input<string>;
  context?: string;
  renderYamlToDirectory?: string;
  kubeClientSettings?: { qps?: number; burst?: number };
  /** A cluster being decommissioned that no longer answers: deleting its pairs drops them from the state. */
  deleteUnreachable?: boolean;
}

export class FleetProvider extends pulumi.ProviderResource {
  constructor(name: string, args: FleetProviderArgs, opts: pulumi.ResourceOptions = {}) {
    // The exact build tools/build-pulumi.sh installed for this checkout (its version names its sources).
    const version = process.env.PULUMI_FLEET_PROVIDER_VERSION;
    super("pulumi-fleet", name, { ...args, ...(args.kubeconfig !== undefined ? { kubeconfig: pulumi.secret(args.kubeconfig) } : {}) }, { ...opts, ...(version ? { version } : {}) });
  }
}

type Outputs<T> = { readonly [K in keyof T]-?: pulumi.Output<T[K]> };
/** The spec, where any field may come from another resource's output (waitFor: the states of the pairs it waits for). */
export type PairArgs = Omit<{ [K in keyof PairSpec]: pulumi.Input<PairSpec[K]> }, "waitFor"> & {
  waitFor?: pulumi.Input<{ name: string; state: pulumi.Input<string> }[]>;
};

/** A set of objects pulumi-fleet's provider applies as one: its inputs a PairSpec, its outputs Fleet's BundleDeployment status. */
abstract class AppliedSet extends pulumi.CustomResource {
  declare readonly deploymentId: pulumi.Output<string>;
  declare readonly appliedDeploymentId: Outputs<PairStatus>["appliedDeploymentId"];
  declare readonly state: Outputs<PairStatus>["state"];
  declare readonly messages: Outputs<PairStatus>["messages"];
  declare readonly inventory: Outputs<PairStatus>["inventory"];
  declare readonly revision: Outputs<PairStatus>["revision"];
  declare readonly retained: Outputs<PairStatus>["retained"];

  protected constructor(type: string, name: string, spec: PairArgs, opts: pulumi.CustomResourceOptions) {
    super(type, name, {
      ...spec, appliedDeploymentId: undefined, state: undefined, messages: undefined, inventory: undefined, revision: undefined, retained: undefined,
    }, opts);
  }
}

export class BundleDeploymentPair extends AppliedSet {
  constructor(name: string, spec: PairArgs, opts: pulumi.CustomResourceOptions) {
    super(BUNDLE_DEPLOYMENT_TYPE, name, spec, opts);
  }
}

/** A cluster's namespaces and agent (core/desired/setup.ts), applied before its bundles. */
export class ClusterSetupSet extends AppliedSet {
  constructor(name: string, spec: PairArgs, opts: pulumi.CustomResourceOptions) {
    super(CLUSTER_SETUP_TYPE, name, spec, opts);
  }
}
