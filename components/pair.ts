/**
 * The engine's unit: one BundleDeployment resource per (bundle, cluster) pair, applied as one set by
 * pulumi-fleet's own provider (tools/fleet-provider), and that provider, one per cluster (and per
 * impersonated user). A refused apply is the pair's state in its outputs, not an engine error.
 */
import * as pulumi from "@pulumi/pulumi";
import { PairSpec, PairStatus } from "../core/desired/pair";
import { BUNDLE_DEPLOYMENT_TYPE } from "../core/desired/types";

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
    super("pulumi-fleet", name, { ...args, ...(args.kubeconfig !== undefined ? { kubeconfig: pulumi.secret(args.kubeconfig) } : {}) }, opts);
  }
}

type Outputs<T> = { readonly [K in keyof T]-?: pulumi.Output<T[K]> };
/** The spec, where any field may come from another resource's output (waitFor: the states of the pairs it waits for). */
export type PairArgs = Omit<{ [K in keyof PairSpec]: pulumi.Input<PairSpec[K]> }, "waitFor"> & {
  waitFor?: pulumi.Input<{ name: string; state: pulumi.Input<string> }[]>;
};

export class BundleDeploymentPair extends pulumi.CustomResource {
  declare readonly deploymentId: pulumi.Output<string>;
  declare readonly appliedDeploymentId: Outputs<PairStatus>["appliedDeploymentId"];
  declare readonly state: Outputs<PairStatus>["state"];
  declare readonly messages: Outputs<PairStatus>["messages"];
  declare readonly inventory: Outputs<PairStatus>["inventory"];
  declare readonly revision: Outputs<PairStatus>["revision"];
  declare readonly retained: Outputs<PairStatus>["retained"];

  constructor(name: string, spec: PairArgs, opts: pulumi.CustomResourceOptions) {
    super(BUNDLE_DEPLOYMENT_TYPE, name, {
      ...spec, appliedDeploymentId: undefined, state: undefined, messages: undefined, inventory: undefined, revision: undefined, retained: undefined,
    }, opts);
  }
}
