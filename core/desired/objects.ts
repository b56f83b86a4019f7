/**
 * The objects of one bundle deployment, as plain values: each rendered object with its ownership labels
 * applied, its key in the deployment, why a prune would leave it on the cluster, and the fields drift
 * leaves out. Why a prune keeps one is the delete policy's (delete-policy.ts); the BundleDeployment's
 * prune and the crash journal's "never sweep" both read `retain`.
 */
import { K8sObject } from "../model/k8s-object";
import { PlanEntry } from "../targeting/plan";
import { RenderedDeployment } from "../render/deployments";
import { withoutApiIgnored } from "../render/api-ignored";
import { Owner, withOwnership } from "./labels";
import { ownerLabels } from "./ownership";
import { KUBERNETES_PROVIDER_FIELD_MANAGERS, PairHook, PairSpec, pairObjectKey, pairObjects } from "../model/pair";
import { optionsCarried } from "../model/schema/pair-spec";
import { deletePolicyOf, RETAIN_REASONS, retainCode } from "./delete-policy";
import { objectDigest } from "../model/content-digest";

export interface DesiredObject {
  /** Its key in the deployment (pairObjectKey: group/kind/namespace/name). */
  key: string;
  /** The manifest as applied: ownership labels applied. */
  manifest: K8sObject;
  /** Why a prune leaves it on the cluster (keepResources, paused, Helm's keep policy, a chart's crds/); absent: deleted. */
  retain?: string;
  /** JSON pointers drift leaves out (diff.comparePatches). */
  ignoreDrift?: string[];
  /** A chart's crds/ object as Helm installs it: created when absent at the pair's install, never updated (GitRepo chartCrds: Create). */
  createOnly?: true;
}

/** `kubernetes:<group>/<version>:<Kind>`; the core group is spelled "core", as in the Kubernetes provider's schema. */
export function typeTokenOf(obj: { apiVersion: string; kind: string }): string {
  const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/", 2) : ["core", obj.apiVersion];
  return `kubernetes:${group}/${version}:${obj.kind}`;
}

/**
 * Why a prune leaves the object on the cluster, as its BundleDeployment's inputs carry it (the delete
 * policy's words), or undefined: it is deleted. An unchanged deployment's objects, taken from the state,
 * keep the reason decided when they were rendered, unless the bundle is paused now.
 */
export function retainReason(entry: PlanEntry, rendered: RenderedDeployment, obj: K8sObject): string | undefined {
  const carried = entry.paused ? undefined : rendered.retainReasons?.get(obj);
  if (carried) return carried;
  const code = retainCode(entry, obj, rendered.chartCrds.has(obj));
  return code && RETAIN_REASONS[code];
}

/** helm.timeoutSeconds: how long the deployment's objects may take to be ready; Helm's and the Kubernetes provider's default, 10 minutes, without it. */
export function timeoutSecondsOf(entry: PlanEntry): number {
  return entry.options.helm?.timeoutSeconds || DEFAULT_TIMEOUT_SECONDS;
}

const DEFAULT_TIMEOUT_SECONDS = 600;

const CRD_KIND = "CustomResourceDefinition";

/**
 * CRDs first, then Namespaces, then everything else (the provider applies them in these stages). The
 * fields comparePatches name are left out of drift only: an apply applies the whole object, as Fleet's
 * upgrade does.
 */
export function desiredObjects(entry: PlanEntry, rendered: RenderedDeployment, chartCrds: "Create" | "CreateReplace" = "Create"): DesiredObject[] {
  const owner: Owner = { gitRepo: entry.gitRepo, bundle: entry.bundle, cluster: entry.cluster };
  const objects = rendered.hooks ? rendered.objects.filter((o) => !rendered.hooks!.has(o)) : rendered.objects;
  const ordered = [
    ...objects.filter((o) => o.kind === CRD_KIND),
    ...objects.filter((o) => o.kind === "Namespace"),
    ...objects.filter((o) => o.kind !== CRD_KIND && o.kind !== "Namespace"),
  ];
  return ordered.map((obj) => {
    const retain = retainReason(entry, rendered, obj);
    const ignoreDrift = rendered.ignoredFields.get(obj);
    return {
      key: pairObjectKey(obj),
      manifest: withOwnership(withoutApiIgnored(obj), owner, entry.options.forceSyncGeneration),
      ...(retain ? { retain } : {}),
      ...(ignoreDrift?.length ? { ignoreDrift } : {}),
      ...(chartCrds === "Create" && rendered.chartCrds.has(obj) ? { createOnly: true as const } : {}),
    };
  });
}

/**
 * The chart's crds/ objects that changed since the pair's last inputs and are not updated (chartCrds:
 * Create, as Helm never upgrades crds/): each a warning, so the preview says what Fleet says nothing of.
 */
export function crdsNotUpgraded(objects: DesiredObject[], last: PairSpec | undefined): string[] {
  if (!last) return [];
  const before = { ...last.objects, ...last.secretObjects };
  const why =
    "Helm, and so Fleet's agent, applies a chart's crds/ only at its install " +
    "(the stack file's chartCrds: CreateReplace for this GitRepo applies them at every change, as Flux's upgrade.crds does)";
  return objects.flatMap((o) => {
    if (!o.createOnly) return [];
    const was = before[o.key];
    const what = `${o.manifest.kind} ${o.manifest.metadata.name}`;
    if (!was) return [`${what} is new in the chart's crds/ and is not created: ${why}`];
    // A manifest the state holds only as its identity (its content gone) tells nothing.
    if (was.manifest?.spec === undefined || objectDigest(was.manifest) === objectDigest(o.manifest)) return [];
    return [`${what} changed in the chart's crds/ and is not updated: ${why}`];
  });
}

/**
 * The deployment's Helm hooks as its pair runs them (tools/fleet-provider hooks.go), in the render's
 * order, each with the ownership labels its objects carry: a hook only ever replaces an object that
 * carries them.
 */
export function desiredHooks(entry: PlanEntry, rendered: RenderedDeployment): PairHook[] {
  if (!rendered.hooks) return [];
  const owner: Owner = { gitRepo: entry.gitRepo, bundle: entry.bundle, cluster: entry.cluster };
  return rendered.objects.flatMap((obj) => {
    const run = rendered.hooks!.get(obj);
    // keepResources: Fleet's agent then deletes only the release's history, running no delete hook.
    const events = entry.options.keepResources ? run?.events.filter((e) => e !== "pre-delete" && e !== "post-delete") : run?.events;
    if (!run || !events?.length) return [];
    return [{ ...run, events, manifest: JSON.stringify(withOwnership(withoutApiIgnored(obj), owner, entry.options.forceSyncGeneration)) }];
  });
}

/** Clusters' namespaces the objects are in: the BundleDeployment waits for the Cluster to create them. */
export function clusterNamespacesOf(objects: { manifest: K8sObject }[], clusterNamespaces: ReadonlySet<string>): string[] {
  const own = new Set(objects.filter((o) => o.manifest.kind === "Namespace").map((o) => o.manifest.metadata.name));
  return [...new Set(objects.map((o) => o.manifest.metadata.namespace).filter((ns): ns is string => !!ns && !own.has(ns) && clusterNamespaces.has(ns)))].sort();
}

/**
 * The BundleDeployment's inputs: its objects, how they are applied (timeout, force, correctDrift,
 * paused) and the one delete policy its prune and its deletion obey (delete-policy.ts): only objects
 * that still carry the deployment's owner labels are deleted.
 * What it adopts of an earlier version's resources is the migration's (core/migrate/adoptions.ts).
 */
export function pairSpecOf(entry: PlanEntry, objects: DesiredObject[], secretSet?: boolean, hooks: PairHook[] = []): PairSpec {
  const secrets = objects.filter((o) => o.manifest.kind === "Secret");
  const hookTimeout = entry.options.helm?.timeoutSeconds;
  return {
    deploymentId: entry.deploymentId,
    objects: pairObjects(objects.filter((o) => o.manifest.kind !== "Secret")),
    // A Secret's values, committed, rendered by a chart or decrypted, are a Pulumi secret of their own
    // (as a cluster setup's): encrypted in the state, [secret] in the preview, and the provider redacts
    // them from its messages; the rest of the set stays readable.
    ...(secrets.length ? { secretObjects: pairObjects(secrets) } : {}),
    // The whole set is a secret (types.ts DesiredDeployment.secret): the provider withholds its messages.
    ...(secretSet ? { secretSet: true } : {}),
    timeoutSeconds: timeoutSecondsOf(entry),
    // Present only with hooks, and their timeout only when helm.timeoutSeconds is set: without it Fleet's
    // agent waits for nothing before the post hooks, and each hook gets Helm's 30 seconds.
    ...(hooks.length ? { hooks, ...(hookTimeout ? { hookTimeoutSeconds: hookTimeout } : {}) } : {}),
    // helm.force, correctDrift.enabled...: the schema's fields that carry an option (core/model/schema/pair-spec.ts).
    ...optionsCarried(entry.options),
    ...(entry.paused ? { paused: true } : {}),
    adoptFieldManagers: [KUBERNETES_PROVIDER_FIELD_MANAGERS],
    deletePolicy: deletePolicyOf(ownerLabels(entry)),
  };
}
