/**
 * One (bundle, cluster) pair, as Fleet's BundleDeployment. Its children are the bundle's objects on
 * that cluster, one resource per object, exactly as core/desired describes them. When the pair leaves
 * the desired state, the component is not registered any more and the engine deletes its children in
 * the same update.
 */
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { AliasSpec } from "../core/desired/objects";
import { BUNDLE_DEPLOYMENT_TYPE, DesiredDeployment } from "../core/desired/types";
import { KubernetesObject } from "./k8s-object";

export interface BundleDeploymentArgs {
  deployment: DesiredDeployment;
  /** The cluster's provider, or the one applying as the deployment's service account. */
  provider: k8s.Provider;
  /** Namespaces the cluster component created, by name. */
  namespaces: Map<string, k8s.core.v1.Namespace>;
  /** The BundleDeployments of the same cluster this one waits for (fleet.yaml dependsOn). */
  dependsOn: pulumi.Resource[];
}

export class BundleDeployment extends pulumi.ComponentResource {
  readonly deploymentId: pulumi.Output<string>;
  readonly commit: pulumi.Output<string>;
  readonly namespace: pulumi.Output<string>;
  readonly objectCount: pulumi.Output<number>;

  constructor(name: string, args: BundleDeploymentArgs, opts: pulumi.ComponentResourceOptions = {}) {
    super(BUNDLE_DEPLOYMENT_TYPE, name, {}, opts);
    const d = args.deployment;
    for (const w of d.warnings) pulumi.log.warn(w, this);
    const registered = new Map<string, KubernetesObject>();
    for (const o of d.objects) {
      const dependsOn = [...args.dependsOn, ...o.dependsOnObjects.map((n) => registered.get(n)!), ...(o.clusterNamespace ? [args.namespaces.get(o.clusterNamespace)!] : [])];
      registered.set(o.name, new KubernetesObject(o.name, o.type, o.manifest, {
        parent: this, provider: args.provider, dependsOn, aliases: o.aliases.map((a) => this.alias(a)),
        ...(d.customTimeouts ? { customTimeouts: d.customTimeouts } : {}),
        ...(o.retainOnDelete ? { retainOnDelete: true } : {}),
        ...(o.ignoreChanges ? { ignoreChanges: o.ignoreChanges } : {}),
      }));
    }
    this.deploymentId = pulumi.output(d.record.deploymentId);
    this.commit = pulumi.output(d.commit);
    this.namespace = pulumi.output(d.record.namespace);
    this.objectCount = pulumi.output(d.objects.length);
    // Fleet's appliedDeploymentID: known only once every object of this deployment was applied. If one
    // fails, the outputs are not registered and the state keeps the last applied one, so the next
    // update renders this deployment again instead of taking its objects from the state
    // (core/desired/state.ts deployedAsBefore).
    const applied = pulumi.all([...registered.values()].map((r) => r.id)).apply(() => d.appliedDeploymentId ?? d.record.deploymentId);
    this.registerOutputs({ deploymentId: this.deploymentId, appliedDeploymentId: applied, commit: this.commit, namespace: this.namespace, objectCount: this.objectCount });
  }

  /** An alias whose parent is a resource that was a child of this deployment. */
  private alias(a: AliasSpec): pulumi.Alias {
    return {
      ...(a.name ? { name: a.name } : {}),
      ...(a.parent ? { parent: pulumi.createUrn(a.parent.name, a.parent.type, this) } : {}),
      ...(a.type ? { type: a.type } : {}),
    };
  }
}
