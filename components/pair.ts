/**
 * The engine's unit: one BundleDeployment resource per (bundle, cluster) pair, applied as one set by
 * pulumi-fleet's own provider (tools/fleet-provider), and that provider, one for the stack. A refused apply is the pair's state in its outputs, not an engine error. Each
 * cluster's namespaces and agent are one more such set, its ClusterSetup.
 */
import * as pulumi from "@pulumi/pulumi";
import { EngineObject, PairObject, PairSpec, PairStatus, toEngineObjects } from "../core/model/pair";
import { BUNDLE_DEPLOYMENT_TYPE, ClusterAccess } from "../core/desired/types";
import { CLUSTER_SETUP_TYPE } from "../core/desired/setup";

/**
 * The stack's pulumi-fleet provider: every cluster's access (and each impersonated user's), by the key a
 * pair's `cluster` names. One plugin process for the stack instead of one per cluster (BENCHMARKS.md §13).
 */
export class FleetProvider extends pulumi.ProviderResource {
  constructor(name: string, clusters: Record<string, ClusterAccess>, opts: pulumi.ResourceOptions = {}) {
    // The exact build tools/build-pulumi.sh installed for this checkout (its version names its sources).
    const version = process.env.PULUMI_FLEET_PROVIDER_VERSION;
    // Kubeconfigs hold credentials: the whole map is a secret when any cluster has one.
    const withCredentials = Object.values(clusters).some((c) => c.kubeconfig !== undefined);
    super("pulumi-fleet", name, { clusters: withCredentials ? pulumi.secret(clusters) : clusters }, { ...opts, ...(version ? { version } : {}) });
  }
}

type Outputs<T> = { readonly [K in keyof T]-?: pulumi.Output<T[K]> };
/** The spec, where any field may come from another resource's output (waitFor: the states of the pairs it waits for). */
export type PairArgs = Omit<{ [K in keyof PairSpec]: pulumi.Input<PairSpec[K]> }, "waitFor" | "objects"> & {
  waitFor?: pulumi.Input<{ name: string; state: pulumi.Input<string> }[]>;
  /** The set whole, or as its identities and digests when `content` names its BundleContent (core/model/pair.ts contentForm). */
  objects: pulumi.Input<Record<string, PairObject | EngineObject>>;
};

/** A set of objects pulumi-fleet's provider applies as one: its inputs a PairSpec, its outputs Fleet's BundleDeployment status. */
abstract class AppliedSet extends pulumi.CustomResource {
  // Only the outputs the program reads (a pair's gate, its setup's refusals, the stack's deploymentStates): the SDK
  // makes every registered property an Output of four promises, 12,000 resources at 1,000 clusters. The others
  // (inventory, revision, retained) are in the state all the same, where the operations read them.
  declare readonly appliedDeploymentId: Outputs<PairStatus>["appliedDeploymentId"];
  declare readonly state: Outputs<PairStatus>["state"];
  declare readonly messages: Outputs<PairStatus>["messages"];

  protected constructor(type: string, name: string, spec: PairArgs, opts: pulumi.CustomResourceOptions) {
    super(
      type,
      name,
      {
        ...spec,
        objects: engineObjects(spec.objects),
        secretObjects: engineObjects(spec.secretObjects),
        adopt: engineObjects(spec.adopt),
        appliedDeploymentId: undefined,
        state: undefined,
        messages: undefined,
      },
      opts,
    );
  }
}

/** Objects as the engine holds them (core/model/pair.ts toEngineObjects), a secret staying one. */
function engineObjects(objects: pulumi.Input<Record<string, PairObject | EngineObject> | undefined>): pulumi.Input<Record<string, EngineObject> | undefined> {
  if (objects === undefined) return undefined;
  if (pulumi.Output.isInstance(objects) || objects instanceof Promise)
    return pulumi.output(objects).apply((o) => (o === undefined ? undefined : toEngineObjects(o)));
  return toEngineObjects(objects);
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
