/**
 * The inputs and outputs of the engine's unit, one BundleDeployment resource per (bundle, cluster)
 * pair, as the provider in tools/fleet-provider reads and writes them (spec.go). Plain values: core
 * builds them, components/ registers them, automation/ reads the outputs.
 */
import { DELETE_POLICY, HEALTH_CHECK, PAIR_HOOK, PAIR_OBJECT, PAIR_SPEC } from "./schema/pair-spec";
import type { Shape } from "./schema/describe";
import { contentDigest, objectDigest } from "./content-digest";

/** The operator's readiness rule for one kind (stack file `healthChecks`, read by core/config/health-checks.ts): CEL over the live object. */
export type HealthCheck = Shape<typeof HEALTH_CHECK>;

/** Fleet's BundleDeployment states (fleet.cattle.io/v1alpha1 BundleState). */
export type PairState = "Ready" | "NotReady" | "WaitApplied" | "ErrApplied" | "Modified" | "OutOfSync";

/** One rendered object and why a prune would leave it on the cluster ("" or absent: it is deleted). */
export type PairObject = Shape<typeof PAIR_OBJECT>;

/** A Helm hook the pair runs at its phases (tools/fleet-provider hooks.go): its manifest as JSON text. */
export type PairHook = Shape<typeof PAIR_HOOK>;

/** How the pair deletes: the one value its apply and its deletion obey. */
export type DeletePolicy = Shape<typeof DELETE_POLICY>;

/** A BundleDeployment's inputs, as schema/pair-spec.ts describes them (the provider's Spec is generated from it). */
export type PairSpec = Shape<typeof PAIR_SPEC>;

export interface InventoryEntry {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  version: string;
  uid: string;
}

/** What the provider reports: Fleet's BundleDeployment status. */
export interface PairStatus {
  appliedDeploymentId: string;
  state: PairState;
  /** One line per object that is not ready or was refused, with the server's words. */
  messages: string[] | null;
  inventory: InventoryEntry[];
  revision: number;
  retained: string[] | null;
}

/** Whether a pair holds what it was asked to: Ready, or Modified (drift found after it was applied); anything else failed or waits. */
export function applied(state: PairState | string): boolean {
  return state === "Ready" || state === "Modified";
}

/** A pair's state as the stack's `deploymentStates` output keeps it (what `up`, `status` and the pages read). */
export interface PairReport {
  state: PairState;
  messages: string[];
  appliedDeploymentId: string;
}

/** An object's key in a pair: group/kind/namespace/name (no version: moving versions keeps the object). */
export function pairObjectKey(obj: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }): string {
  const group = obj.apiVersion.includes("/") ? obj.apiVersion.slice(0, obj.apiVersion.lastIndexOf("/")) : "";
  return [group, obj.kind, obj.metadata.namespace ?? "", obj.metadata.name].join("/");
}

/**
 * The prefix of the field managers the Kubernetes provider applied objects as (one per object,
 * pulumi-kubernetes-<random>), before this provider: their fields move to this provider's field manager
 * when the pair next changes an object, so a field the bundle drops is removed from the cluster.
 */
export const KUBERNETES_PROVIDER_FIELD_MANAGERS = "pulumi-kubernetes-";

/** Objects by key, as a pair's inputs hold them. */
export function pairObjects(
  objects: { key: string; manifest: object; retain?: string; ignoreDrift?: string[]; createOnly?: true }[],
): Record<string, PairObject> {
  return Object.fromEntries(
    objects.map((o) => [
      o.key,
      {
        manifest: o.manifest as Record<string, unknown>,
        ...(o.retain ? { retain: o.retain } : {}),
        ...(o.ignoreDrift?.length ? { ignoreDrift: o.ignoreDrift } : {}),
        ...(o.createOnly ? { createOnly: true } : {}),
      },
    ]),
  );
}

/**
 * An object as the engine holds it: its manifest as JSON text. The engine deep-copies, serializes and
 * sends every property of every resource in each of its events, and the Node SDK converts each to and
 * from protocol buffers: one string per object instead of a tree of properties is most of that work gone
 * in a large preview. The provider reads either form (tools/fleet-provider spec.go DesiredObject), so a
 * state written by an earlier version, whose manifests are trees, reads the same.
 */
export interface EngineObject {
  /** Absent from a pair whose set is in a BundleContent resource (contentForm): apiVersion and digest stand for it. */
  manifest?: string;
  apiVersion?: string;
  digest?: string;
  retain?: string;
  ignoreDrift?: string[];
  createOnly?: boolean;
}

/** A render as its BundleContent resource holds it: each object's manifest as JSON text, by key. */
export type ContentManifests = Record<string, string>;

/**
 * A set as a pair registers it when its content is kept apart (components/content.ts): the content's
 * digest, the objects with only what the provider needs without the content (apiVersion, digest of the
 * whole manifest, retain, ignoreDrift: its inventory for prune and delete, and what diffPair compares),
 * and the manifests the BundleContent resource named by that digest holds. Those leave out the pair's
 * owner labels (its deletePolicy.ownerLabels, which name its cluster and are on every object: core/desired/labels.ts),
 * which the provider puts back (withOwnerLabels), so every cluster that renders a bundle alike shares one
 * content. Undefined when an object lacks one of them (then the pair keeps its manifests).
 */
export function contentForm(
  objects: Record<string, PairObject>,
  ownerLabels: Record<string, string>,
  hooks: PairHook[] = [],
): { content: string; objects: Record<string, EngineObject>; hooks?: PairHook[]; manifests: ContentManifests } | undefined {
  const inventory: Record<string, EngineObject> = {};
  const manifests: ContentManifests = {};
  const digests: Record<string, string> = {};
  // Its hooks too, under hooks[<index>], but one that runs at deletion: its content may be gone by then.
  const engineHooks: PairHook[] = [];
  for (const [i, h] of hooks.entries()) {
    if (h.manifest === undefined || h.events.some((e) => e === "pre-delete" || e === "post-delete")) {
      engineHooks.push(h);
      continue;
    }
    const manifest = JSON.parse(h.manifest) as Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };
    const shared = withoutOwnerLabels(manifest, ownerLabels);
    if (!shared) return undefined;
    const key = hookContentKey(i);
    digests[key] = objectDigest(shared);
    manifests[key] = JSON.stringify(shared);
    const { manifest: _text, ...run } = h;
    engineHooks.push({ ...run, digest: objectDigest(manifest), object: pairObjectKey(manifest), apiVersion: manifest.apiVersion });
  }
  for (const [key, o] of Object.entries(objects)) {
    const shared = withoutOwnerLabels(o.manifest, ownerLabels);
    if (!shared) return undefined;
    digests[key] = objectDigest(shared);
    manifests[key] = JSON.stringify(shared);
    inventory[key] = {
      apiVersion: String(o.manifest.apiVersion),
      digest: objectDigest(o.manifest),
      ...(o.retain ? { retain: o.retain } : {}),
      ...(o.ignoreDrift?.length ? { ignoreDrift: o.ignoreDrift } : {}),
      ...(o.createOnly ? { createOnly: true } : {}),
    };
  }
  return { content: contentDigest(digests), objects: inventory, ...(hooks.length ? { hooks: engineHooks } : {}), manifests };
}

/** A hook's object: its manifest, or, kept in the pair's content, its identity (key and apiVersion). */
export function hookObject(h: PairHook): Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } } {
  return h.manifest !== undefined ? JSON.parse(h.manifest) : (identityManifest(h.object ?? "", h.apiVersion) as ReturnType<typeof hookObject>);
}

/** Where a pair's BundleContent holds its hook at that index (tools/fleet-provider content.go withContent). */
export const hookContentKey = (index: number) => `hooks[${index}]`;

/** A pair's hooks as the state holds them, each manifest taken from its BundleContent where the pair keeps it there (contentForm). */
export function hooksFromEngine(
  hooks: PairHook[] | undefined,
  content: ContentManifests | undefined,
  ownerLabels: Record<string, string> | undefined,
): PairHook[] | undefined {
  return hooks?.map((h, i) => {
    const text = content?.[hookContentKey(i)];
    if (h.manifest !== undefined || text === undefined) return h;
    const { digest: _digest, object: _object, apiVersion: _apiVersion, ...run } = h;
    return { ...run, manifest: JSON.stringify(withOwnerLabels(JSON.parse(text) as Record<string, unknown>, ownerLabels)) };
  });
}

/** A manifest without the owner labels, as its content holds it; undefined when it does not carry them all. */
function withoutOwnerLabels(manifest: Record<string, unknown>, ownerLabels: Record<string, string>): Record<string, unknown> | undefined {
  const metadata = (manifest.metadata ?? {}) as { labels?: Record<string, string> };
  const labels = { ...(metadata.labels ?? {}) };
  for (const [k, v] of Object.entries(ownerLabels)) {
    if (labels[k] !== v) return undefined;
    delete labels[k];
  }
  return { ...manifest, metadata: { ...metadata, labels } };
}

/** A content's manifest as the pair applies it: with its owner labels (content_digest.go withOwnerLabels does the same). */
export function withOwnerLabels(shared: Record<string, unknown>, ownerLabels: Record<string, string> | undefined): Record<string, unknown> {
  const metadata = (shared.metadata ?? {}) as { labels?: Record<string, string> };
  return { ...shared, metadata: { ...metadata, labels: { ...(metadata.labels ?? {}), ...(ownerLabels ?? {}) } } };
}

/** A set's objects as the program registers them (EngineObject). */
export function toEngineObjects(objects: Record<string, PairObject | EngineObject>): Record<string, EngineObject> {
  const out: Record<string, EngineObject> = {};
  for (const [key, o] of Object.entries(objects))
    out[key] = typeof o.manifest === "object" ? { ...o, manifest: JSON.stringify(o.manifest) } : (o as EngineObject);
  return out;
}

/**
 * A set's objects as the state or the engine's events hold them, in any form (toEngineObjects,
 * contentForm): an object without its manifest takes it from `content` (its BundleContent's manifests),
 * else stands as its identity alone (apiVersion, kind, namespace, name: what the engine's events need).
 */
export function fromEngineObjects(
  objects: Record<string, PairObject | EngineObject> | undefined,
  content?: ContentManifests,
  ownerLabels?: Record<string, string>,
): Record<string, PairObject> {
  const out: Record<string, PairObject> = {};
  for (const [key, o] of Object.entries(objects ?? {})) {
    const { apiVersion, digest: _digest, ...rest } = o as EngineObject;
    if (o.manifest === undefined) {
      const text = content?.[key];
      out[key] = {
        ...rest,
        manifest: text !== undefined ? withOwnerLabels(JSON.parse(text) as Record<string, unknown>, ownerLabels) : identityManifest(key, apiVersion),
      };
    } else out[key] = typeof o.manifest === "string" ? { ...o, manifest: JSON.parse(o.manifest) as Record<string, unknown> } : (o as PairObject);
  }
  return out;
}

/** An object's identity as a manifest, from its key (group/kind/namespace/name) and apiVersion. */
export function identityManifest(key: string, apiVersion: string | undefined): Record<string, unknown> {
  const [group, kind, namespace, ...name] = key.split("/");
  return { apiVersion: apiVersion ?? (group ? `${group}/v1` : "v1"), kind, metadata: { name: name.join("/"), ...(namespace ? { namespace } : {}) } };
}

/** A pair's spec as the state holds its inputs, its sets of objects read back (fromEngineObjects; `content`: its BundleContent's manifests). */
export function pairSpecFromEngine(inputs: PairSpec, content?: ContentManifests): PairSpec {
  // Read back whole (or as identities without their content): the engine form's `content` is the component's to set again.
  const { content: _content, ...rest } = inputs;
  const spec: PairSpec = { ...rest, objects: fromEngineObjects(inputs.objects, content, inputs.deletePolicy?.ownerLabels) };
  if (inputs.hooks) spec.hooks = hooksFromEngine(inputs.hooks, content, inputs.deletePolicy?.ownerLabels);
  if (inputs.secretObjects) spec.secretObjects = fromEngineObjects(inputs.secretObjects);
  if (inputs.adopt) spec.adopt = fromEngineObjects(inputs.adopt);
  return spec;
}

/**
 * A pair's inputs as the state holds them, in engine form (its `content` and each object's apiVersion
 * and digest), for a pair whose content is not in the state: its manifests are nowhere to rebuild, and
 * identities taken for manifests would apply stubs. Registered again verbatim they diff as no change in
 * the provider (diffPair compares the digests).
 */
export function keptAsInState(inputs: PairSpec): PairSpec {
  return { ...inputs, objects: { ...inputs.objects } };
}

/**
 * The set as a pair registers it: its spec's own engine form when it has one (keptAsInState), else
 * kept apart in a BundleContent (contentForm) when `shared` and the set allows, else whole.
 */
export function registeredSet(
  spec: PairSpec,
  shared: boolean,
  withHooks = true,
): { content?: string; objects: Record<string, PairObject | EngineObject>; hooks?: PairHook[]; manifests?: ContentManifests } {
  if (spec.content !== undefined) return { content: spec.content, objects: spec.objects };
  const form =
    shared && Object.keys(spec.objects).length ? contentForm(spec.objects, spec.deletePolicy.ownerLabels, withHooks ? (spec.hooks ?? []) : []) : undefined;
  return form ?? { objects: spec.objects };
}

/**
 * What reports say instead of the messages of a pair whose objects hold what a lookup read from a
 * Secret: its provider's messages may quote a field's value (an API server refusal does), so they stay
 * secrets in the state and every report says only how many there were.
 */
export function withheldMessages(count: number | "unknown"): string[] {
  if (!count) return [];
  return [
    `${count === "unknown" ? "" : `${count} `}messages withheld: this bundle deployment's objects hold what a lookup read from a Secret, and a message may quote them`,
  ];
}
