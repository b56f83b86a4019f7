/**
 * One (bundle, cluster) pair of the plan, as Fleet's BundleDeployment. Its children are the bundle's
 * objects on that cluster, one resource per object, as core rendered them (core/render: raw YAML,
 * helm and kustomize alike). When the pair leaves the plan, the component is not registered any more
 * and the engine deletes its children in the same update.
 */
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { Bundle } from "../core/bundles/types";
import { K8sObject } from "../core/bundles/manifests";
import { PlanEntry } from "../core/targeting/plan";
import { groupOf, KubernetesObject, objectKey } from "./k8s-object";
import { LifecyclePolicy, lifecycleOptions, Owner, validateObjectLabels, withOwnership } from "./labels";

export const BUNDLE_DEPLOYMENT_TYPE = "pulumi-fleet:index:BundleDeployment";

export interface BundleDeploymentArgs {
  entry: PlanEntry;
  bundle: Bundle;
  commit: string;
  provider: k8s.Provider;
  /** Namespaces the cluster component created, by name; objects in them wait for them. */
  namespaces: Map<string, k8s.core.v1.Namespace>;
  /** This pair's objects, rendered and checked by core (prepareFleet). */
  objects: K8sObject[];
  /** Other BundleDeployments of the same cluster this one waits for (fleet.yaml dependsOn). */
  dependsOn: pulumi.Resource[];
  /** What the render said Fleet does silently (skipped files, hooks): shown in the preview. */
  warnings?: string[];
  /** Objects a prune leaves on the cluster (core/render: Helm's keep policy, a chart's crds/). */
  kept?: Set<K8sObject>;
  /** Per object, fields diff.comparePatches leave alone (given only while the deployment is unchanged). */
  ignoredFields?: Map<K8sObject, string[]>;
}

/** Logical name of a (bundle, cluster) pair: names only, never list positions. */
export function deploymentName(entry: { bundle: string; cluster: string }): string {
  return `${entry.cluster}/${entry.bundle}`;
}

export function lifecyclePolicyOf(entry: PlanEntry): LifecyclePolicy {
  return { retainOnDelete: entry.paused || !!entry.options.keepResources, freeze: entry.paused };
}

export class BundleDeployment extends pulumi.ComponentResource {
  readonly deploymentId: pulumi.Output<string>;
  readonly commit: pulumi.Output<string>;
  readonly namespace: pulumi.Output<string>;
  readonly objectCount: pulumi.Output<number>;

  constructor(name: string, args: BundleDeploymentArgs, opts: pulumi.ComponentResourceOptions = {}) {
    super(BUNDLE_DEPLOYMENT_TYPE, name, {}, opts);
    const { entry, bundle } = args;
    const owner: Owner = { gitRepo: entry.gitRepo, bundle: entry.bundle, cluster: entry.cluster };
    const policy = lifecyclePolicyOf(entry);
    // helm.timeoutSeconds: how long Helm waits for the release's objects to be ready. The provider awaits
    // each object (a Deployment until its rollout is available) for the resource's custom timeouts.
    const timeout = entry.options.helm?.timeoutSeconds ? `${entry.options.helm.timeoutSeconds}s` : undefined;
    const childOpts: pulumi.CustomResourceOptions = {
      parent: this, provider: args.provider, dependsOn: args.dependsOn,
      ...(timeout ? { customTimeouts: { create: timeout, update: timeout } } : {}),
    };
    if (entry.paused) {
      pulumi.log.warn(`bundle ${entry.bundle} is paused on cluster ${entry.cluster}: its objects stay exactly as deployed (no update, no delete)`, this);
    }

    for (const w of args.warnings ?? []) pulumi.log.warn(`bundle ${entry.bundle} on cluster ${entry.cluster}: ${w}`, this);
    // Until the renderer, helm and kustomize bundles were the provider's Chart and Directory
    // components: their objects keep their identity through aliases to those children.
    const previous = bundle.style.kind === "yaml" ? undefined
      : { parent: pulumi.createUrn(name, bundle.style.kind === "helm" ? "kubernetes:helm.sh/v4:Chart" : "kubernetes:kustomize/v2:Directory", this), prefix: name };
    registerRawObjects(name, args.objects, owner, policy, args, childOpts, previous);
    const objectCount = pulumi.output(args.objects.length);

    this.deploymentId = pulumi.output(entry.deploymentId);
    this.commit = pulumi.output(args.commit);
    this.namespace = pulumi.output(entry.namespace);
    this.objectCount = objectCount;
    this.registerOutputs({ deploymentId: this.deploymentId, commit: this.commit, namespace: this.namespace, objectCount });
  }
}

/** Checks every label of a (bundle, cluster) pair's objects, before anything is registered. */
export function checkObjectLabels(objects: K8sObject[], entry: PlanEntry): void {
  const owner: Owner = { gitRepo: entry.gitRepo, bundle: entry.bundle, cluster: entry.cluster };
  for (const obj of objects) validateObjectLabels(obj, owner);
}

/** Where the previous version registered a helm or kustomize bundle's objects (see the constructor). */
interface PreviousLayout { parent: pulumi.Output<string>; prefix: string }

const CRD_KIND = "CustomResourceDefinition";

/** CRDs first, then everything else; a custom resource waits for its CRD, a namespaced object for its namespace. */
function registerRawObjects(
  name: string, objects: K8sObject[], owner: Owner, policy: LifecyclePolicy,
  args: BundleDeploymentArgs, childOpts: pulumi.CustomResourceOptions, previous?: PreviousLayout,
): void {
  const crds = new Map<string, KubernetesObject>();
  const ownNamespaces = new Map<string, KubernetesObject>();
  const ordered = [...objects.filter((o) => o.kind === CRD_KIND), ...objects.filter((o) => o.kind === "Namespace"),
    ...objects.filter((o) => o.kind !== CRD_KIND && o.kind !== "Namespace")];
  for (const obj of ordered) {
    const deps: pulumi.Resource[] = [...(childOpts.dependsOn as pulumi.Resource[])];
    const crd = crds.get(`${groupOf(obj.apiVersion)}/${obj.kind}`);
    if (crd) deps.push(crd);
    const ns = obj.metadata.namespace;
    const nsResource = ns ? ownNamespaces.get(ns) ?? args.namespaces.get(ns) : undefined;
    if (nsResource) deps.push(nsResource);
    // The provider named a Chart's or Directory's children "<component>:<namespace>/<name>".
    const aliases: pulumi.Alias[] = previous
      ? [{ name: `${previous.prefix}:${ns ? `${ns}/` : ""}${obj.metadata.name}`, parent: previous.parent }]
      : [];
    const objectPolicy = args.kept?.has(obj) ? { ...policy, retainOnDelete: true } : policy;
    const ignored = args.ignoredFields?.get(obj);
    const resource = new KubernetesObject(`${name}/${objectKey(obj)}`, withOwnership(obj, owner, args.entry.options.forceSyncGeneration),
      lifecycleOptions({ ...childOpts, dependsOn: deps, aliases, ...(ignored ? { ignoreChanges: ignored } : {}) }, objectPolicy));
    if (obj.kind === CRD_KIND) {
      const spec = obj.spec as { group?: string; names?: { kind?: string } };
      crds.set(`${spec.group}/${spec.names?.kind}`, resource);
    }
    if (obj.kind === "Namespace") ownNamespaces.set(obj.metadata.name, resource);
  }
}
