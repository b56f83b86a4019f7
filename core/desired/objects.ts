/**
 * The resources of one bundle deployment, as plain values: each rendered object with its ownership
 * labels applied, its logical name and type token, what it waits for, and how the engine treats it
 * (retain on delete, ignored fields, timeouts, aliases). The retain rule lives here once: the engine's
 * `retainOnDelete` and the crash journal's "never sweep" are both read from `retainOnDelete`.
 */
import { groupOf, K8sObject, objectKey } from "../bundles/manifests";
import { PlanEntry } from "../targeting/plan";
import { RenderedDeployment } from "../render/deployments";
import { withoutApiIgnored } from "./api-ignored";
import { Owner, withOwnership } from "./labels";

/** An alias the engine resolves to an earlier URN of the same object. */
export interface AliasSpec {
  /** An earlier logical name, under a resource of `parent` type and name that was a child of the deployment. */
  name?: string;
  parent?: { type: string; name: string };
  /** An earlier type token (another version of the same group). */
  type?: string;
}

export interface DesiredObject {
  /** Logical name: "<deployment key>/<objectKey>". */
  name: string;
  /** `kubernetes:<group>/<version>:<Kind>`. */
  type: string;
  /** The manifest as applied: ownership labels, forced apply, deletion propagation. */
  manifest: K8sObject;
  /** Objects of the same deployment it waits for (its CRD, its own Namespace object), by logical name. */
  dependsOnObjects: string[];
  /** The namespace the Cluster creates that it waits for. */
  clusterNamespace?: string;
  /** Left on the cluster when its resource goes: keepResources, paused, Helm's keep policy, a chart's crds/. */
  retainOnDelete: boolean;
  /** "*" for a paused bundle; else the fields diff.comparePatches leave alone while the deployment is unchanged. */
  ignoreChanges?: string[];
  aliases: AliasSpec[];
}

/** `kubernetes:<group>/<version>:<Kind>`; the core group is spelled "core", as in the provider's schema. */
export function typeTokenOf(obj: { apiVersion: string; kind: string }): string {
  const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/", 2) : ["core", obj.apiVersion];
  return `kubernetes:${group}/${version}:${obj.kind}`;
}

/** Versions an API commonly moves through; see versionAliases. */
const COMMON_VERSIONS = ["v1alpha1", "v1alpha2", "v1beta1", "v1beta2", "v1beta3", "v1", "v2alpha1", "v2beta1", "v2beta2", "v2", "v3"];

/**
 * Aliases to the same object under the other common versions of its (non-core) group. When a bundle moves an
 * object to a newer version of the same group, the engine then updates it in place. Without them it
 * would create the "new" resource and delete the old one, which is the same object on the cluster: the
 * bundle would delete its own object.
 */
export function versionAliases(obj: K8sObject): AliasSpec[] {
  const group = groupOf(obj.apiVersion);
  // The core group has only ever had v1; and every alias costs the SDK and the engine work per
  // resource, which at fleet scale (ConfigMaps, Services, Secrets are most objects) adds up.
  if (!group) return [];
  const current = obj.apiVersion.split("/").pop();
  return COMMON_VERSIONS.filter((v) => v !== current).map((v) => ({ type: typeTokenOf({ apiVersion: `${group}/${v}`, kind: obj.kind }) }));
}

/** Whether a prune leaves the object on the cluster (Fleet's and Helm's keep rules). */
export function retainsOnDelete(entry: PlanEntry, rendered: RenderedDeployment, obj: K8sObject): boolean {
  return entry.paused || !!entry.options.keepResources || rendered.kept.has(obj);
}

/** helm.timeoutSeconds: how long Helm waits for the release's objects; the provider awaits each object for its custom timeouts. */
export function customTimeoutsOf(entry: PlanEntry): { create: string; update: string } | undefined {
  const t = entry.options.helm?.timeoutSeconds;
  return t ? { create: `${t}s`, update: `${t}s` } : undefined;
}

const CRD_KIND = "CustomResourceDefinition";

/**
 * CRDs first, then Namespaces, then everything else; a custom resource waits for its CRD, a namespaced
 * object for its namespace (the bundle's own Namespace object, else the one the Cluster creates).
 * `unchanged`: the deployment has the deploymentId the last update deployed, so comparePatches apply.
 */
export function desiredObjects(key: string, entry: PlanEntry, rendered: RenderedDeployment, clusterNamespaces: ReadonlySet<string>, unchanged: boolean): DesiredObject[] {
  const owner: Owner = { gitRepo: entry.gitRepo, bundle: entry.bundle, cluster: entry.cluster };
  const objects = rendered.objects;
  const ordered = [...objects.filter((o) => o.kind === CRD_KIND), ...objects.filter((o) => o.kind === "Namespace"),
    ...objects.filter((o) => o.kind !== CRD_KIND && o.kind !== "Namespace")];
  // Until the renderer, helm and kustomize bundles were the provider's Chart and Directory components:
  // their objects keep their identity through aliases to those children ("<component>:<namespace>/<name>").
  const previousParent = rendered.style === "yaml" ? undefined
    : { type: rendered.style === "helm" ? "kubernetes:helm.sh/v4:Chart" : "kubernetes:kustomize/v2:Directory", name: key };
  const crds = new Map<string, string>();
  const ownNamespaces = new Map<string, string>();
  return ordered.map((obj) => {
    const name = `${key}/${objectKey(obj)}`;
    const dependsOnObjects: string[] = [];
    const crd = crds.get(`${groupOf(obj.apiVersion)}/${obj.kind}`);
    if (crd) dependsOnObjects.push(crd);
    const ns = obj.metadata.namespace;
    const own = ns ? ownNamespaces.get(ns) : undefined;
    if (own) dependsOnObjects.push(own);
    const ignored = unchanged ? rendered.ignoredFields.get(obj) : undefined;
    const desired: DesiredObject = {
      name, type: typeTokenOf(obj), manifest: withOwnership(withoutApiIgnored(obj), owner, entry.options.forceSyncGeneration), dependsOnObjects,
      ...(ns && !own && clusterNamespaces.has(ns) ? { clusterNamespace: ns } : {}),
      retainOnDelete: retainsOnDelete(entry, rendered, obj),
      ...(entry.paused ? { ignoreChanges: ["*"] } : ignored ? { ignoreChanges: ignored } : {}),
      aliases: [
        ...(previousParent ? [{ name: `${key}:${ns ? `${ns}/` : ""}${obj.metadata.name}`, parent: previousParent }] : []),
        ...versionAliases(obj),
      ],
    };
    if (obj.kind === CRD_KIND) {
      const spec = obj.spec as { group?: string; names?: { kind?: string } } | undefined;
      crds.set(`${spec?.group}/${spec?.names?.kind}`, name);
    }
    if (obj.kind === "Namespace") ownNamespaces.set(obj.metadata.name, name);
    return desired;
  });
}
