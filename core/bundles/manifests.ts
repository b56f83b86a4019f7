/**
 * Raw YAML bundles to Kubernetes objects, as Fleet's agent renders them: overlays first (a file in
 * overlays/<name>/ replaces the base file of the same name; `<file>_patch.<ext>` patches it with a JSON
 * merge patch, or a JSON patch when it is a list), then only .yaml/.yml/.json files outside overlays/,
 * outside directories with their own fleet.yaml or Chart.yaml, and outside templates/.
 * Then the namespace rules: `namespace` forces every object into it (cluster-scoped objects are an
 * error), otherwise namespaced objects without one get `defaultNamespace` or "default".
 */
import * as jsonpatch from "fast-json-patch";
import { FleetError } from "../errors";
import { parseYamlDocuments } from "./fleetyaml";
import { BundleFile, DeploymentOptions } from "./types";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
}

const OVERLAY_PREFIX = "overlays/";

/** Kinds that are not namespaced, beyond CRDs of cluster scope declared in the same bundle. */
const CLUSTER_SCOPED = new Set([
  "Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
  "StorageClass", "PriorityClass", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "APIService", "IngressClass", "RuntimeClass",
  "CSIDriver", "CSINode", "VolumeAttachment", "CertificateSigningRequest", "FlowSchema", "PriorityLevelConfiguration",
  "ComponentStatus", "ClusterIssuer", "VolumeSnapshotClass",
]);

/** The files Fleet would render as manifests (before overlays are applied). */
export function rawManifestFiles(files: BundleFile[]): BundleFile[] {
  const ignorePrefixes = files
    .filter((f) => /(^|\/)fleet\.ya?ml$/.test(f.name) && f.name.includes("/") || f.name.endsWith("/Chart.yaml"))
    .map((f) => f.name.slice(0, f.name.lastIndexOf("/") + 1));
  return files.filter((f) =>
    !/^fleet\.ya?ml$/.test(f.name) &&
    /\.(ya?ml|json)$/.test(f.name) &&
    !f.name.startsWith(OVERLAY_PREFIX) &&
    !f.name.startsWith("templates/") &&
    !ignorePrefixes.some((p) => f.name.startsWith(p)));
}

/** Applies the overlays in order; returns the full file set with replaced and patched files. */
export function applyOverlays(files: BundleFile[], overlays: string[], ctx: { gitRepo: string; bundle: string; cluster?: string }): BundleFile[] {
  if (overlays.length === 0) return files;
  const content = new Map(files.map((f) => [f.name, f.content]));
  for (const overlay of overlays) {
    const prefix = `${OVERLAY_PREFIX}${overlay}/`;
    const inOverlay = files.filter((f) => f.name.startsWith(prefix));
    if (inOverlay.length === 0) throw new FleetError(`overlay ${JSON.stringify(overlay)} not found (no files under ${prefix})`, { ...ctx, field: "yaml.overlays" });
    for (const f of inOverlay) {
      const name = f.name.slice(prefix.length);
      const base = name.split("/").pop()!;
      if (!base.includes("_patch.")) {
        content.set(name, f.content);
        continue;
      }
      const target = name.slice(0, name.length - base.length) + base.replace("_patch.", ".");
      const targetText = content.get(target);
      if (targetText === undefined) throw new FleetError(`failed to find base file ${target} to patch`, { ...ctx, file: f.name });
      const docs = parseYamlDocuments(targetText, target).filter((d) => d !== null && d !== undefined);
      if (docs.length !== 1) {
        // Fleet would keep only the first document and silently drop the rest.
        throw new FleetError(`cannot patch ${target}: it holds ${docs.length} YAML documents; a patched file must hold exactly one`, { ...ctx, file: f.name });
      }
      const doc = docs[0];
      const [patch] = parseYamlDocuments(f.content, f.name);
      let patched: unknown;
      try {
        patched = Array.isArray(patch)
          ? jsonpatch.applyPatch(structuredClone(doc), patch as jsonpatch.Operation[], true).newDocument
          : mergePatch(doc, patch);
      } catch (err) {
        throw new FleetError(`failed to patch ${target}: ${(err as Error).message.split("\n")[0]}`, { ...ctx, file: f.name });
      }
      content.set(target, JSON.stringify(patched));
    }
  }
  return [...content.entries()].map(([name, c]) => ({ name, content: c })).sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target !== null && typeof target === "object" && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch as object)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Objects of a raw YAML bundle for one cluster's options, with overlays and namespace rules applied. */
export function renderRawObjects(files: BundleFile[], options: DeploymentOptions, ctx: { gitRepo: string; bundle: string; cluster?: string }): K8sObject[] {
  const manifests = rawManifestFiles(applyOverlays(files, options.yaml?.overlays ?? [], ctx));
  const objects: { obj: K8sObject; file: string }[] = [];
  for (const f of manifests) {
    for (const doc of parseYamlDocuments(f.content, f.name)) {
      if (doc === null || doc === undefined) continue;
      for (const obj of flattenList(doc)) objects.push({ obj: checkObject(obj, { ...ctx, file: f.name }), file: f.name });
    }
  }
  const clusterScopedCrds = new Set(
    objects.filter(({ obj }) => obj.kind === "CustomResourceDefinition" && (obj.spec as { scope?: string })?.scope === "Cluster")
      .map(({ obj }) => (obj.spec as { names?: { kind?: string } }).names?.kind),
  );
  return objects.map(({ obj, file }) => {
    const clusterScoped = CLUSTER_SCOPED.has(obj.kind) || clusterScopedCrds.has(obj.kind);
    const meta = { ...obj.metadata };
    if (options.namespace) {
      if (clusterScoped) {
        throw new FleetError(`${obj.kind} ${meta.name} is cluster-scoped and cannot be deployed with namespace ${options.namespace} (fleet.yaml namespace / GitRepo targetNamespace)`, { ...ctx, file });
      }
      meta.namespace = options.namespace;
    } else if (!clusterScoped && !meta.namespace) {
      meta.namespace = options.defaultNamespace || "default";
    } else if (clusterScoped) {
      delete meta.namespace;
    }
    return { ...obj, metadata: meta };
  });
}

function flattenList(doc: unknown): unknown[] {
  const d = doc as { kind?: string; items?: unknown[] };
  if (d && typeof d === "object" && typeof d.kind === "string" && d.kind.endsWith("List") && Array.isArray(d.items)) return d.items;
  return [doc];
}

function checkObject(obj: unknown, ctx: { gitRepo: string; bundle: string; file: string; cluster?: string }): K8sObject {
  const o = obj as Partial<K8sObject>;
  if (!o || typeof o !== "object" || Array.isArray(o)) throw new FleetError("a manifest document must be a Kubernetes object (a mapping)", ctx);
  if (typeof o.apiVersion !== "string" || !o.apiVersion) throw new FleetError("object has no apiVersion", ctx);
  if (typeof o.kind !== "string" || !o.kind) throw new FleetError("object has no kind", ctx);
  if (!o.metadata || typeof o.metadata.name !== "string" || !o.metadata.name) {
    throw new FleetError(`${o.kind} has no metadata.name (generateName is not supported: names must be stable)`, ctx);
  }
  return o as K8sObject;
}
