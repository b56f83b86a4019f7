/**
 * The objects of every (bundle, cluster) pair of the plan, rendered by fleet-render as Fleet's agent
 * renders them (chart, Helm's dry-run install, kustomize post-render, raw YAML), in one batch.
 * Pairs that render the same bundle with the same options share one render. Then Fleet's namespace
 * rules, checked here so nothing is registered when any object is wrong.
 */
import { renderErrorWhere } from "./render-error";
import { comparePatchPointers } from "./compare-patches";
import { nullStringValues } from "./api-ignored";
import { apiVersionProblem, dnsLabelProblem, kindProblem, objectNameProblem } from "../base/k8s-validation";
import { FleetError } from "../base/errors";
import { bundleRef } from "../model/keys";
import { positiveNumber } from "../base/operator-env";
import { stableJson } from "../base/hash";
import { Bundle } from "../bundles/types";
import { decryptedObjects } from "../bundles/sops";
import { CLUSTER_SCOPED, K8sObject } from "../model/k8s-object";
import { checkSingleOwner } from "./single-owner";
import { PlanEntry } from "../targeting/plan";
import { LookupAnswer, LookupKey, Renderer, RenderResult } from "../model/renderer-protocol";
import { RenderContext, renderRequest } from "./render-request";

export interface RenderedDeployment {
  /**
   * CRDs from the chart's crds/ first, then the rendered objects, then the hooks: every check of a
   * rendered object (names, namespaces, owners) checks a hook too, which creates an object as well.
   */
  objects: K8sObject[];
  /** Which of the objects are Helm hooks, and when they run (see HOOK_EVENTS): run by the pair, never part of its set. */
  hooks?: Map<K8sObject, HookRun>;
  style: "helm" | "kustomize" | "yaml";
  /** What Fleet does silently and is said here: skipped files, empty overlays, hooks. */
  warnings: string[];
  /** The chart's crds/ objects: Helm installs them only when absent, never checks their owner and never deletes them (core/desired/delete-policy.ts). */
  chartCrds: Set<K8sObject>;
  /** Objects taken from the state (an unchanged deployment): why each is retained, as decided when it was rendered. */
  retainReasons?: Map<K8sObject, string>;
  /** Per object, the fields diff.comparePatches leave out of drift (JSON pointers; core/render/compare-patches.ts). */
  ignoredFields: Map<K8sObject, string[]>;
  /** Every `lookup` the templates made (rendered with a lookup table). */
  lookups?: LookupKey[];
  /** A render that failed while lookups it made were not answered yet: the error, if answering them does not help. */
  pendingError?: string;
  /** Its lookups read a Secret (lookup-secrets.ts), or it holds decrypted Secrets: its objects are registered as a secret. */
  secret?: true;
  /** The Secrets decrypted from the bundle's SOPS files (core/bundles/sops.ts), as "<namespace>/<name> (<file>)". */
  decrypted?: string[];
}

/**
 * Hooks: the pair runs install, upgrade and delete hooks as Helm runs them around its release
 * (tools/fleet-provider hooks.go). Test hooks (`helm test`) are never run by Fleet, and rollback hooks
 * only by a Helm rollback, which no run here is: both are left out, each a warning naming the hook. A
 * delete policy Helm does not know is kept, as Helm keeps it (it deletes nothing, and it replaces the
 * default), and said.
 */
export const HOOK_EVENTS = ["pre-install", "post-install", "pre-upgrade", "post-upgrade", "pre-delete", "post-delete"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];
const HOOK_DELETE_POLICIES = ["before-hook-creation", "hook-succeeded", "hook-failed"] as const;

/** When a hook runs: its events, its weight (helm.sh/hook-weight), its delete policies as Helm keeps them (absent: Helm's default, before-hook-creation). */
export interface HookRun {
  events: HookEvent[];
  weight: number;
  deletePolicies?: string[];
}

const isOneOf =
  <T extends string>(values: readonly T[]) =>
  (v: string): v is T =>
    (values as readonly string[]).includes(v);

/** A rendered hook as the pair runs it, or why it is left out (or what of it is). */
function hookRunOf(h: { events: string[]; weight: number; deletePolicies: string[] | null }, what: string): { run?: HookRun; warnings: string[] } {
  const events = h.events.filter(isOneOf(HOOK_EVENTS));
  const policies = h.deletePolicies ?? [];
  const warnings: string[] = [];
  const skipped = h.events.filter((e) => !events.includes(e as HookEvent));
  if (skipped.length) {
    const why = skipped.map((e) =>
      e === "test"
        ? "Fleet never runs test hooks"
        : e.endsWith("-rollback")
          ? `${e} runs only on a Helm rollback, which no run is`
          : `${JSON.stringify(e)} is not a Helm hook event`,
    );
    warnings.push(`hook ${what}: ${events.length ? `${skipped.join(", ")} left out` : "left out"}: ${why.join("; ")}`);
  }
  const unknown = policies.filter((p) => !isOneOf(HOOK_DELETE_POLICIES)(p));
  if (unknown.length)
    warnings.push(
      `hook ${what}: helm.sh/hook-delete-policy ${unknown.map((p) => JSON.stringify(p)).join(", ")} is not one Helm knows: it deletes nothing, ` +
        "and, as in Helm, a policy given replaces the default (before-hook-creation)",
    );
  if (!events.length) return { warnings };
  return { run: { events, weight: h.weight, ...(policies.length ? { deletePolicies: policies } : {}) }, warnings };
}

/**
 * `render` runs the request (fleet-render's sandbox; core/desired/facts.ts). A render that fails after
 * a lookup its table cannot answer yet is not an error here: it comes back with `pendingError`, for
 * the caller to read the lookups and render it again.
 */
export async function renderDeployments(
  entries: PlanEntry[],
  bundles: Bundle[],
  commitOf: (gitRepo: string) => string,
  render: Renderer,
  context: RenderContext = {},
): Promise<Map<PlanEntry, RenderedDeployment>> {
  const lookupsOf = context.lookupsOf ?? (() => undefined);
  // Keyed by bundle ref: two GitRepos' bundles of one name are two bundles, each rendered from its own files.
  const byRef = new Map(bundles.map((b) => [bundleRef({ gitRepo: b.gitRepo, bundle: b.name }), b]));
  // A bundle whose SOPS files cannot be decrypted fails on each of its clusters, unrendered.
  const undecrypted = entries.filter((e) => byRef.get(bundleRef(e))!.decryptError);
  for (const e of undecrypted) {
    const err = byRef.get(bundleRef(e))!.decryptError!.within({ cluster: e.cluster });
    if (!context.onFailure) throw err;
    context.onFailure(e, err);
  }
  entries = entries.filter((e) => !undecrypted.includes(e));
  const { request, jobOf } = renderRequest(entries, byRef, commitOf, context);
  const results = request.renders.length ? (await render(request)).renders : {};
  const maxObjects = maxObjectsPerBundle();
  const out = new Map<PlanEntry, RenderedDeployment>();
  for (const e of entries) {
    const ctx = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster };
    const r = results[jobOf.get(e)!];
    try {
      if (!r) throw new FleetError("fleet-render returned no result for this bundle", ctx);
      if (r.error && unanswered(r.lookups, lookupsOf(e)).length) {
        out.set(e, { objects: [], style: r.style, warnings: [], chartCrds: new Set(), ignoredFields: new Map(), lookups: r.lookups, pendingError: r.error });
        continue;
      }
      out.set(e, renderedOf(e, r, byRef.get(bundleRef(e))!, maxObjects));
    } catch (err) {
      if (!context.onFailure || !(err instanceof FleetError)) throw err;
      context.onFailure(e, err);
    }
  }
  if (!context.onFailure) checkSingleOwner(out);
  return out;
}

/** A pair's render as deployed: its objects with Fleet's namespace rules, decrypted Secrets placed, fields comparePatches ignores. */
function renderedOf(e: PlanEntry, r: RenderResult, b: Bundle, maxObjects: number): RenderedDeployment {
  const ctx = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster };
  if (r.error) {
    // Labelled with the template or manifest the renderer names, else the bundle's fleet.yaml.
    const at = renderErrorWhere(r.error, b.path, b.style);
    throw new FleetError(at.reason, { ...ctx, file: at.file ?? b.fleetYaml, ...(at.line ? { line: at.line } : {}) });
  }
  // Decrypted Secrets join the objects the sandbox rendered without them, placed as raw manifests are.
  const decrypted = decryptedObjects(b);
  const all = decrypted.length ? { ...r, objects: [...(r.objects ?? []), ...decrypted] } : r;
  checkObjectCount(all, maxObjects, ctx);
  const rendered = withNamespaces(all, e, ctx);
  const ignoredFields = new Map(
    rendered.objects.map((o): [K8sObject, string[]] => [o, comparePatchPointers(o, e.options.diff?.comparePatches)]).filter(([, p]) => p.length),
  );
  return {
    ...rendered,
    warnings: [...(b.warnings ?? []), ...rendered.warnings],
    style: r.style,
    ignoredFields,
    ...(r.lookups?.length ? { lookups: r.lookups } : {}),
    ...(decrypted.length
      ? { secret: true as const, decrypted: decryptedNames(b, rendered.objects.slice(firstDecrypted(r), firstDecrypted(r) + decrypted.length)) }
      : {}),
  };
}

/** Where the decrypted Secrets are among the placed objects: after the chart's CRDs and the rendered objects, before hooks (withNamespaces). */
function firstDecrypted(r: RenderResult): number {
  return (r.crds?.length ?? 0) + (r.objects?.length ?? 0);
}

/** Each decrypted Secret as placed ("<namespace>/<name> (<file>)"), in the order decryptedObjects gives them. */
function decryptedNames(b: Bundle, placed: K8sObject[]): string[] {
  const files = (b.decrypted ?? []).flatMap((d) => d.objects.map(() => d.file));
  return placed.map((o, i) => `${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name} (${files[i]})`);
}

/** The operator's bound on one deployment's rendered objects (PULUMI_FLEET_MAX_OBJECTS_PER_BUNDLE). */
export function maxObjectsPerBundle(env: NodeJS.ProcessEnv = process.env): number {
  return Math.floor(positiveNumber(env, "PULUMI_FLEET_MAX_OBJECTS_PER_BUNDLE", 5_000));
}

/**
 * Each rendered object becomes a resource (or a step of one) checked, diffed and registered: a chart
 * that ranges to a million ConfigMaps within the output limit fails its (bundle, cluster) here, before
 * any of that work.
 */
function checkObjectCount(r: RenderResult, max: number, ctx: { gitRepo: string; bundle: string; cluster: string }): void {
  const count = (r.objects?.length ?? 0) + (r.crds?.length ?? 0) + (r.hooks?.length ?? 0);
  if (count > max)
    throw new FleetError(`the bundle renders ${count} objects, over the limit of ${max} per bundle and cluster (PULUMI_FLEET_MAX_OBJECTS_PER_BUNDLE)`, ctx);
}

/** The lookups a render made that its table does not answer. */
export function unanswered(asked: LookupKey[] | undefined, table: LookupAnswer[] | undefined): LookupKey[] {
  if (!asked?.length || !table) return [];
  const known = new Set(table.map((a) => stableJson(a.key)));
  return asked.filter((k) => !known.has(stableJson(k)));
}

function withNamespaces(
  r: RenderResult,
  e: PlanEntry,
  ctx: { gitRepo: string; bundle: string; cluster: string },
): Omit<RenderedDeployment, "style" | "ignoredFields"> {
  const warnings = [...(r.warnings ?? [])];
  const hooks: K8sObject[] = [];
  const runs: HookRun[] = [];
  for (const h of r.hooks ?? []) {
    const { run, warnings: said } = hookRunOf(h, `${h.object.kind} ${h.object.metadata?.name} (helm.sh/hook: ${h.events.join(",")})`);
    warnings.push(...said);
    if (!run) continue;
    hooks.push(h.object as K8sObject);
    runs.push(run);
  }
  const chartCrds = (r.crds ?? []) as K8sObject[];
  const all = [...chartCrds, ...(r.objects ?? []), ...hooks] as K8sObject[];
  const clusterScopedCrds = new Set(
    all
      .filter((o) => o.kind === "CustomResourceDefinition" && (o.spec as { scope?: string })?.scope === "Cluster")
      .map((o) => (o.spec as { names?: { kind?: string } }).names?.kind),
  );
  const objects = all.map((obj, i) => {
    if (!obj.metadata?.name) throw new FleetError(`${obj.kind} has no metadata.name (generateName is not supported: names must be stable)`, ctx);
    // A chart's crds/ are installed outside Fleet's post-renderer: a forced namespace never reaches them.
    const fromCrdsDir = i < chartCrds.length;
    const clusterScoped = fromCrdsDir || CLUSTER_SCOPED.has(obj.kind) || clusterScopedCrds.has(obj.kind);
    const meta = { ...obj.metadata };
    if (e.options.namespace && !fromCrdsDir) {
      if (clusterScoped) {
        // Fleet's post-renderer's words (internal/helmdeployer/postrender.go).
        throw new FleetError(
          `invalid cluster scoped object [name=${meta.name} kind=${obj.kind} apiVersion=${obj.apiVersion}] found. ` +
            `Your config uses targetNamespace or namespace (${e.options.namespace}) and thus forbids cluster-scoped resources. ` +
            "If you do not intend to disallow cluster scoped resources, you could switch to defaultNamespace",
          ctx,
        );
      }
      meta.namespace = e.options.namespace;
    } else if (!clusterScoped && !meta.namespace) {
      meta.namespace = e.namespace;
    } else if (clusterScoped) {
      delete meta.namespace;
    }
    const placed = { ...obj, metadata: meta };
    checkNames(placed, ctx);
    const nulls = nullStringValues(placed);
    if (nulls.length) {
      warnings.push(
        `${placed.kind} ${placed.metadata.name}: ${nulls.join(", ")} ${nulls.length > 1 ? "are" : "is"} null: it is not applied (the Kubernetes provider drops nulls), ` +
          'where Fleet\'s Helm would store an empty string; write "" to keep the key',
      );
    }
    return placed;
  });
  const firstHook = objects.length - hooks.length;
  return {
    objects,
    warnings,
    chartCrds: new Set(objects.slice(0, chartCrds.length)),
    ...(runs.length ? { hooks: new Map(runs.map((run, i) => [objects[firstHook + i], run])) } : {}),
  };
}

/**
 * An object's name and namespace as the API server validates them, before either becomes a file name
 * (render mode), a URN or a label: content chose them.
 */
function checkNames(obj: K8sObject, ctx: { gitRepo: string; bundle: string; cluster: string }): void {
  const name = String(obj.metadata.name);
  const kp = kindProblem(String(obj.kind));
  if (kp) throw new FleetError(`kind ${JSON.stringify(obj.kind)} of ${JSON.stringify(name)} ${kp}`, ctx);
  const ap = apiVersionProblem(String(obj.apiVersion));
  if (ap) throw new FleetError(`apiVersion ${JSON.stringify(obj.apiVersion)} of ${obj.kind} ${JSON.stringify(name)} ${ap}`, ctx);
  const problem = objectNameProblem(String(obj.kind), name);
  if (problem) throw new FleetError(`${obj.kind} ${JSON.stringify(name)}: metadata.name ${problem}`, ctx);
  const ns = obj.metadata.namespace;
  if (ns !== undefined && ns !== null && ns !== "") {
    const nsProblem = dnsLabelProblem(String(ns));
    if (nsProblem) throw new FleetError(`${obj.kind} ${JSON.stringify(name)}: metadata.namespace ${JSON.stringify(ns)} ${nsProblem}`, ctx);
  }
}
