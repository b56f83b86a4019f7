/**
 * A target cluster: its ClusterSetup, the one resource that creates the namespaces its bundles need
 * and its agent, as core/desired decided them, applied through the stack's pulumi-fleet provider
 * (components/fleet.ts), which holds every cluster's access. To decommission a cluster that no longer
 * answers, set `deleteUnreachable: true` on it and remove it from the stack: the provider then drops its
 * resources from the state instead of failing the update.
 */
import * as pulumi from "@pulumi/pulumi";
import { CLUSTER_TYPE, DesiredCluster } from "../core/desired/types";
import { PairObject } from "../core/model/pair";
import { ClusterSetupSet, FleetProvider } from "./pair";
import { accessKeyOf } from "../core/desired/registrations";

export class Cluster extends pulumi.ComponentResource {
  /** Its namespaces and agent; absent when it has neither. Bundles in them are applied after it. */
  readonly setup?: ClusterSetupSet;

  /** `adopt`: what its setup takes over of an earlier version's resources (core/migrate/adoptions.ts), when it has a setup. */
  constructor(
    name: string,
    private readonly c: DesiredCluster,
    provider: FleetProvider,
    opts: pulumi.ComponentResourceOptions = {},
    adopt?: Record<string, PairObject>,
  ) {
    super(CLUSTER_TYPE, name, {}, opts);
    if (c.setup) {
      // The agent's token is a secret in the state and the engine's events; the rest of the set shows as it is.
      const { secretObjects } = c.setup;
      this.setup = new ClusterSetupSet(
        name,
        {
          ...c.setup,
          cluster: this.accessKey(),
          ...(secretObjects ? { secretObjects: pulumi.secret(secretObjects) } : {}),
          ...(adopt ? { adopt } : {}),
        },
        { parent: this, provider },
      );
    }
    this.registerOutputs({});
  }

  /** The key of the provider's configuration a pair applied as `user` (a bundle's serviceAccount), or as the cluster's own identity, names. */
  accessKey(user?: string): string {
    return accessKeyOf(this.c, user);
  }
}
