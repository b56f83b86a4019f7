/**
 * A bundle's helm values files, as Fleet reads them at `fleet apply`: each resolved inside its bundle
 * (symlinks included), read as Fleet reads YAML, never decrypted, and merged over `values` with Fleet's
 * MergeMaps.
 */
import * as path from "node:path";
import deepmerge from "deepmerge";
import { FleetError, withContext } from "../base/errors";
import { bundleNameFor } from "../base/naming";
import { GitRepoConfig } from "../config/git-repo";
import { Renderer } from "../model/renderer-protocol";
import { Checkout, joinRel } from "./checkout";
import { FleetYaml } from "./fleetyaml";
import { parseYamlDocuments } from "../base/yaml-documents";
import { readYamlAsFleet, YamlText } from "./goyaml";
import { HelmOptions } from "./types";
import { isSopsEncrypted } from "./sops";

/**
 * Every values file the fleet.yamls name, read as Fleet reads YAML; keyed by path from the root. A file
 * that cannot be read maps to its error, which withValuesFiles throws for the bundles naming it.
 */
export async function readValuesDocs(
  checkout: Checkout,
  parsed: { rel: string; fy: FleetYaml }[],
  repo: GitRepoConfig,
  render: Renderer,
): Promise<Map<string, unknown>> {
  const texts: YamlText[] = [];
  const seen = new Set<string>();
  const failedFiles = new Map<string, FleetError>();
  for (const { rel, fy } of parsed) {
    const ctx = { gitRepo: repo.name, bundle: fy.name ?? bundleNameFor(repo.name, rel) };
    const helms = [
      readsValuesFiles(fy.options.helm) ? fy.options.helm : undefined,
      ...fy.targets.map((t) => t.helm),
      ...fy.targetCustomizations.map((t) => t.helm),
    ];
    for (const vf of helms.flatMap(valuesFilesOf)) {
      const { file, problem } = valuesFileAt(checkout, rel, vf);
      // A problem (outside the bundle, missing) is reported with its bundle by withValuesFiles.
      if (problem || seen.has(file)) continue;
      seen.add(file);
      try {
        const text = checkout.readText(file);
        if (isSopsEncrypted({ name: file, content: text })) throw new FleetError(ENCRYPTED_VALUES, { file, field: "helm.valuesFiles" });
        parseYamlDocuments(text, file);
        texts.push({ key: file, text, file, ctx });
      } catch (err) {
        failedFiles.set(file, withContext(err, { file }));
      }
    }
  }
  const docs = await readYamlAsFleet(texts, render, (t, err) => failedFiles.set(t.key, err));
  for (const [file, err] of failedFiles) docs.set(file, err);
  return docs;
}

/**
 * Values reach a chart's templates, which may put them in any object (a ConfigMap, an annotation, a
 * message): decrypted values must not. Flux's helm-controller does not decrypt values files either.
 */
const ENCRYPTED_VALUES =
  "the values file is SOPS-encrypted: values files are not decrypted (a chart's templates could copy the values into any object, " +
  "kept and shown in clear); put the secret in a SOPS-encrypted Secret manifest of a raw YAML bundle, or read it with helm.valuesFrom";

export function valuesFilesOf(helm?: HelmOptions): string[] {
  return helm?.valuesFiles ?? [];
}

/**
 * Whether Fleet reads the top-level helm's valuesFiles: only when helm.chart or helm.repo is set
 * (internal/bundlereader/resources.go, readResources; a target's are read whatever it sets). Those it
 * does not read are still left out of the bundle's files (ignoreApplyConfigs lists them all).
 */
export function readsValuesFiles(helm?: HelmOptions): boolean {
  return !!(helm?.chart || helm?.repo);
}

/**
 * Where a values file is in the repository, and why it cannot be read: it must resolve (symlinks
 * included) to a regular file inside the bundle, checked before anything reads it.
 */
function valuesFileAt(checkout: Checkout, rel: string, vf: string): { file: string; problem?: FleetError } {
  const file = joinRel(rel, vf);
  const outside = () => ({ file, problem: new FleetError(`values file ${vf} is outside the bundle`, { file, field: "helm.valuesFiles" }) });
  if (path.posix.isAbsolute(vf) || path.posix.normalize(vf).split("/")[0] === "..") return outside();
  try {
    const kind = checkout.kindOf(file);
    if (kind === undefined) return { file, problem: new FleetError(`values file not found`, { file, field: "helm.valuesFiles" }) };
    if (kind !== "file") return { file, problem: new FleetError(`values file is a directory`, { file, field: "helm.valuesFiles" }) };
  } catch (err) {
    return { file, problem: withContext(err, { file, field: "helm.valuesFiles" }) };
  }
  if (!checkout.isInside(file, rel)) return outside();
  return { file };
}

/** Values files are merged over `values` when the bundle is read (Fleet: at `fleet apply`). */
export function withValuesFiles(checkout: Checkout, rel: string, helm: HelmOptions, valuesDocs: Map<string, unknown>): HelmOptions {
  if (!helm.valuesFiles?.length) return helm;
  let values: Record<string, unknown> = helm.values ?? {};
  for (const vf of helm.valuesFiles) {
    const { file, problem } = valuesFileAt(checkout, rel, vf);
    if (problem) throw problem;
    const doc = valuesDocs.get(file);
    if (doc instanceof FleetError) throw doc;
    if (doc === null || doc === undefined) continue;
    if (typeof doc !== "object" || Array.isArray(doc)) throw new FleetError("values file must be a YAML mapping", { file });
    values = mergeValues(values, doc as Record<string, unknown>);
  }
  return { ...helm, values };
}

/** Fleet's data.MergeMaps: maps merge recursively, anything else (lists included) is replaced. */
export function mergeValues(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  return deepmerge(base, over, { arrayMerge: (_target, source) => source });
}
