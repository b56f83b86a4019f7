/**
 * One (bundle, cluster) pair of the plan, as Fleet's BundleDeployment. Its children are the bundle's
 * objects on that cluster: one resource per object for raw YAML, the provider's helm.v4.Chart for
 * helm bundles, kustomize.v2.Directory for kustomize bundles. When the pair leaves the plan, the
 * component is not registered any more and the engine deletes its children in the same update.
 */
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { Bundle } from "../core/bundles/types";
import { K8sObject, renderRawObjects } from "../core/bundles/manifests";
import { PlanEntry } from "../core/targeting/plan";
import { groupOf, KubernetesObject, objectKey } from "./k8s-object";
import { LifecyclePolicy, lifecycleOptions, Owner, ownershipTransform, validateObjectLabels, withOwnership } from "./labels";

export const BUNDLE_DEPLOYMENT_TYPE = "pulumi-fleet:index:BundleDeployment";

export interface BundleDeploymentArgs {
  entry: PlanEntry;
  bundle: Bundle;
  commit: string;
  provider: k8s.Provider;
  /** Namespaces the cluster component created, by name; objects in them wait for them. */
  namespaces: Map<string, k8s.core.v1.Namespace>;
  /** Raw YAML objects for this pair, already rendered (the Fleet component renders them once for namespaces). */
  objects?: K8sObject[];
  /** Other BundleDeployments of the same cluster this one waits for (fleet.yaml dependsOn). */
  dependsOn: pulumi.Resource[];
  /** The cluster is excluded from this update: do not construct provider-side components for it. */
  clusterUnreachable?: boolean;
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
    const childOpts = { parent: this, provider: args.provider, dependsOn: args.dependsOn };
    if (entry.paused) {
      pulumi.log.warn(`bundle ${entry.bundle} is paused on cluster ${entry.cluster}: its objects stay exactly as deployed (no update, no delete)`, this);
    }

    let objectCount: pulumi.Output<number>;
    if (bundle.style.kind === "yaml") {
      const objects = args.objects ?? renderCheckedObjects(bundle, entry);
      registerRawObjects(name, objects, owner, policy, args, childOpts);
      objectCount = pulumi.output(objects.length);
    } else if (args.clusterUnreachable) {
      objectCount = pulumi.output(0);
    } else {
      const nsDependency = args.namespaces.get(entry.namespace);
      const opts: pulumi.ComponentResourceOptions = {
        ...childOpts,
        dependsOn: [...args.dependsOn, ...(nsDependency ? [nsDependency] : [])],
        transforms: [ownershipTransform(owner, policy)],
      };
      objectCount = bundle.style.kind === "helm"
        ? helmChart(name, entry, bundle, opts).resources.apply((r) => r.length)
        : kustomizeDirectory(name, entry, bundle, opts).resources.apply((r) => r.length);
    }

    this.deploymentId = pulumi.output(entry.deploymentId);
    this.commit = pulumi.output(args.commit);
    this.namespace = pulumi.output(entry.namespace);
    this.objectCount = objectCount;
    this.registerOutputs({ deploymentId: this.deploymentId, commit: this.commit, namespace: this.namespace, objectCount });
  }
}

/** The raw YAML objects of a (bundle, cluster) pair, with every label checked before anything is registered. */
export function renderCheckedObjects(bundle: Bundle, entry: PlanEntry): K8sObject[] {
  const owner: Owner = { gitRepo: entry.gitRepo, bundle: entry.bundle, cluster: entry.cluster };
  const objects = renderRawObjects(bundle.files, entry.options, owner);
  for (const obj of objects) validateObjectLabels(obj, owner);
  return objects;
}

const CRD_KIND = "CustomResourceDefinition";

/** CRDs first, then everything else; a custom resource waits for its CRD, a namespaced object for its namespace. */
function registerRawObjects(
  name: string, objects: K8sObject[], owner: Owner, policy: LifecyclePolicy,
  args: BundleDeploymentArgs, childOpts: pulumi.CustomResourceOptions,
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
    const resource = new KubernetesObject(`${name}/${objectKey(obj)}`, withOwnership(obj, owner),
      lifecycleOptions({ ...childOpts, dependsOn: deps }, policy));
    if (obj.kind === CRD_KIND) {
      const spec = obj.spec as { group?: string; names?: { kind?: string } };
      crds.set(`${spec.group}/${spec.names?.kind}`, resource);
    }
    if (obj.kind === "Namespace") ownNamespaces.set(obj.metadata.name, resource);
  }
}

/** A local chart from the checked-out commit, or a remote repository (https or oci) and version. */
function helmChart(name: string, entry: PlanEntry, bundle: Bundle, opts: pulumi.ComponentResourceOptions): k8s.helm.v4.Chart {
  const helm = entry.options.helm ?? {};
  const style: { path?: string; repo?: string; chart?: string; version?: string } = bundle.style.kind === "helm" ? bundle.style : {};
  const chart = helm.chart ?? style.chart ?? style.path ?? ".";
  const remote = !!(helm.repo ?? style.repo) || /^(oci|https?):\/\//.test(chart);
  return new k8s.helm.v4.Chart(name, {
    name: entry.releaseName,
    namespace: entry.namespace,
    chart: remote ? chart : path.join(bundle.dir, chart),
    version: remote ? helm.version ?? style.version : undefined,
    repositoryOpts: remote && (helm.repo ?? style.repo) ? { repo: helm.repo ?? style.repo } : undefined,
    values: helm.values ?? {},
  }, opts);
}

function kustomizeDirectory(name: string, entry: PlanEntry, bundle: Bundle, opts: pulumi.ComponentResourceOptions): k8s.kustomize.v2.Directory {
  return new k8s.kustomize.v2.Directory(name, {
    directory: path.join(bundle.dir, entry.options.kustomize?.dir ?? "."),
    namespace: entry.namespace,
  }, opts);
}
