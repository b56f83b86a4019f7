/**
 * The Kubernetes object shape the pipeline passes around, and which files of a bundle Fleet reads as
 * manifests (used to tell an empty bundle early). Rendering itself is fleet-render's (core/render).
 */
import { BundleFile } from "./types";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
}

/** The API group of an apiVersion ("" for the core group). */
export function groupOf(apiVersion: string): string {
  return apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
}

/** An object's identity within a cluster: group, kind, namespace and name (not the version). */
export function objectKey(obj: K8sObject): string {
  const group = groupOf(obj.apiVersion) || "core";
  return [group, obj.kind, obj.metadata.namespace ?? "_", obj.metadata.name].join(":");
}

const OVERLAY_PREFIX = "overlays/";

/** The files Fleet would render as manifests or chart templates (before overlays are applied). */
export function rawManifestFiles(files: BundleFile[]): BundleFile[] {
  const ignorePrefixes = files
    .filter((f) => /(^|\/)fleet\.ya?ml$/.test(f.name) && f.name.includes("/") || f.name.endsWith("/Chart.yaml"))
    .map((f) => f.name.slice(0, f.name.lastIndexOf("/") + 1));
  return files.filter((f) =>
    !/^fleet\.ya?ml$/.test(f.name) &&
    /\.(ya?ml|json)$/.test(f.name) &&
    !f.name.startsWith(OVERLAY_PREFIX) &&
    !ignorePrefixes.some((p) => f.name.startsWith(p)));
}
