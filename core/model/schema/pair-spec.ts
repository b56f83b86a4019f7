/**
 * A BundleDeployment's inputs (one per bundle and cluster), the one source of core/model/pair.ts's
 * PairSpec and of tools/fleet-provider's Spec (generated, scripts/go-schema.ts). Each field says how
 * the provider's diffPair treats it (`diff`, with the reason when it is never compared), and a field
 * that carries a merged fleet.yaml option as is names it (`fromOption`: core/desired/objects.ts copies it).
 */
import { anyMap, bool, describe, int, list, map, oneOf, struct, text, type Field, type Shape } from "./describe";

/** The operator's readiness rule for one kind (stack file `healthChecks`, read by core/config/health-checks.ts): CEL over the live object. */
export const HEALTH_CHECK = describe({
  name: "HealthCheck",
  doc: "HealthCheck is one kind's expressions, as the stack file gives them (core/config/health-checks.ts).",
  fields: {
    apiVersion: { type: text, doc: "" },
    kind: { type: text, doc: "" },
    current: { type: text, doc: "" },
    inProgress: { type: text, optional: true, doc: "" },
    failed: { type: text, optional: true, doc: "" },
  },
});

/** One rendered object and why a prune would leave it on the cluster ("" or absent: it is deleted). */
export const PAIR_OBJECT = describe({
  name: "DesiredObject",
  doc: "DesiredObject is one rendered object and what a prune does with it.",
  // Its UnmarshalJSON reads a manifest given as JSON text (what the program registers) or as an object (spec.go).
  goType: "hand",
  fields: {
    manifest: {
      type: anyMap,
      doc: "The object; absent from a pair whose set is kept in a BundleContent resource (the `content` field), where apiVersion and digest stand for it.",
    },
    apiVersion: {
      type: text,
      optional: true,
      doc: "A pair with `content` only: the object's apiVersion, so its inventory is whole (its key leaves the version out) without the manifest.",
    },
    digest: {
      type: text,
      optional: true,
      doc: "A pair with `content` only: the manifest's digest (core/model/content-digest.ts, content_digest.go), what diffPair compares instead of the manifest.",
    },
    retain: { type: text, optional: true, doc: "Why a prune leaves it on the cluster (keepResources, Helm's keep policy, a chart's CRD...); empty: deleted." },
    createOnly: {
      type: bool,
      optional: true,
      doc: "A chart's crds/ object as Helm installs it (the GitRepo's chartCrds: Create): created when absent at the pair's install, never updated or drift-checked after; a change of its manifest is no diff.",
    },
    ignoreDrift: { type: list(text), optional: true, doc: "JSON pointers drift leaves out (fleet.yaml diff.comparePatches)." },
  },
});

/** How the pair deletes: the one value its apply and its deletion obey. */
export const DELETE_POLICY = describe({
  name: "DeletePolicy",
  doc: "DeletePolicy is the one value that says how this pair deletes (with each object's Retain).",
  fields: {
    propagation: { type: oneOf(["background", "foreground", "orphan"]), doc: `"background" (as Helm's uninstall and so Fleet), "foreground" or "orphan".` },
    ownerLabels: {
      type: map(text),
      doc: "Only an object that still carries all of these labels is deleted: one adopted or relabelled by another owner since is left alone.",
    },
  },
});

const EVENTS_SPEC = describe({
  name: "EventsSpec",
  doc: "EventsSpec is where and about what a pair's Events are posted: present only when the operator turned Events on.",
  fields: {
    namespace: { type: text, doc: "The namespace the bundle deploys into (fleet.yaml namespace, else defaultNamespace, else default)." },
    gitRepo: { type: text, goOmitEmpty: true, doc: "" },
    bundle: { type: text, doc: "" },
  },
});

const GATE = describe({
  name: "Gate",
  doc: "Gate is another pair this one waits for.",
  fields: { name: { type: text, doc: "" }, state: { type: text, doc: "" } },
});

/** A Helm hook of the set (helm.sh/hook): run at its phase of the pair's apply or deletion, never part of the set (hooks.go). */
export const PAIR_HOOK = describe({
  name: "Hook",
  doc: "Hook is one Helm hook object and when it runs, as Helm's release holds it (helm.sh/hook, -weight, -delete-policy).",
  fields: {
    events: {
      type: list(oneOf(["pre-install", "post-install", "pre-upgrade", "post-upgrade", "pre-delete", "post-delete"])),
      doc: "The phases it runs at (helm.sh/hook); test and rollback hooks are left out when rendered.",
    },
    weight: { type: int, goOmitEmpty: true, doc: "helm.sh/hook-weight: hooks of a phase run by weight, then by name." },
    deletePolicies: {
      type: list(text),
      optional: true,
      doc: "helm.sh/hook-delete-policy as Helm keeps it: before-hook-creation, hook-succeeded, hook-failed, or one it does not know (which deletes nothing, and as any given policy replaces the default); absent: before-hook-creation.",
    },
    manifest: {
      type: text,
      optional: true,
      doc: "The object as JSON text, owner labels applied; absent when the pair's BundleContent holds it (the `content` field: under `hooks[<index>]`), where digest and object stand for it. A hook that runs at deletion always keeps it (its content may be gone by then).",
    },
    digest: { type: text, optional: true, doc: "Content form only: the manifest's digest (owner labels applied), what diffPair compares." },
    object: { type: text, optional: true, doc: "Content form only: the object's key (group/kind/namespace/name), for what reports name." },
    apiVersion: {
      type: text,
      optional: true,
      doc: "Content form only: the object's apiVersion (its key leaves the version out), for its file in render mode.",
    },
  },
});

const objects = map(struct(PAIR_OBJECT));

export const PAIR_SPEC = describe({
  name: "Spec",
  doc: "Spec is a BundleDeployment's inputs: everything that decides the pair, as core/desired computed it.",
  // namespacesApart: a cluster's setup, told by its resource type, never by its inputs (namespaces_apart.go).
  goEmbed: "specLocal",
  fields: {
    deploymentId: { type: text, diff: "diff", doc: "Fleet's deploymentID: the bundle's content and its merged options." },
    cluster: {
      type: text,
      optional: true,
      diff: "diff",
      doc: 'Which of the provider\'s clusters (and impersonated users) the pair is applied to: a key of its configuration\'s `clusters` ("<cluster>" or "<cluster>/as/<user>"); absent: the provider\'s only cluster (a stack of an earlier version).',
    },
    content: {
      type: text,
      optional: true,
      diff: "none",
      doc: "The digest of the BundleContent resource that holds the manifests of `objects` (each then only its apiVersion and digest): the state keeps each distinct render once, not once per cluster. Never diffed: the objects' digests are, so a state of an earlier version, whose objects hold their manifests, diffs equal when the content is the same.",
    },
    objects: {
      type: objects,
      goOmitEmpty: true,
      diff: "objects",
      doc: "Objects by objectKey (group/kind/namespace/name, version left out so a version move is the same object). Only in the inputs (omitted from the outputs, see recorded).",
    },
    secretObjects: {
      type: objects,
      optional: true,
      diff: "objects",
      doc: "More of the set, whose manifests are secrets (the agent's token): a property of their own, so the engine keeps only these secret and the rest of the set stays readable in previews and the state.",
    },
    secretSet: {
      type: bool,
      optional: true,
      diff: "none",
      doc: "The whole set is a secret (what a lookup or helm.valuesFrom read from a Secret, Secrets decrypted from SOPS files): a message about it may quote any of its values, transformed or not, so its messages are withheld from the outputs (see told). Never diffed: it changes how messages are told, not what is applied, and takes effect at the next apply or refresh.",
    },
    timeoutSeconds: {
      type: int,
      optional: true,
      diff: "diff",
      doc: "Seconds to wait for the set to be ready after applying (helm.timeoutSeconds), and for pruned objects to be gone; 0: no readiness wait, and 10 minutes for pruned objects (timeoutOf).",
    },
    force: { type: bool, optional: true, diff: "diff", fromOption: "helm.force", doc: "Recreate objects whose immutable fields changed (helm.force)." },
    installsWithoutServerSideApply: {
      type: bool,
      optional: true,
      diff: "none",
      doc: "Fleet's agent installs without server-side apply (helm.takeOwnership, the GitRepo's takeOwnership, helm.force or correctDrift.force), so a chart's crds/ are only created when absent at the install (crds.go). Never diffed: read only at the pair's install.",
    },
    correctDrift: {
      type: bool,
      optional: true,
      diff: "diff",
      fromOption: "correctDrift.enabled",
      doc: "Re-apply when the last refresh found drift (correctDrift.enabled).",
    },
    paused: { type: bool, optional: true, diff: "diff", doc: "A paused bundle: nothing is applied or pruned; the pair keeps what it has." },
    adoptFieldManagers: {
      type: list(text),
      optional: true,
      diff: "diff",
      doc: "Field managers (name prefixes) whose fields this pair takes over when it next changes an object: the per-object resources of earlier versions applied each object as pulumi-kubernetes-<random>.",
    },
    adopt: {
      type: objects,
      optional: true,
      diff: "none",
      doc: "Objects this pair takes over when it is created: what the per-object resources of an earlier version deployed for it. They are its inventory before its first apply, so what the set no longer holds is pruned under their retain rules; read only by Create, never diffed.",
    },
    healthChecks: {
      type: list(struct(HEALTH_CHECK)),
      optional: true,
      diff: "diff",
      doc: "The operator's health checks per kind (health.go): they judge readiness instead of kstatus. Absent when the stack has none, so a stack without them registers what it did before.",
    },
    kubernetesEvents: {
      type: struct(EVENTS_SPEC),
      optional: true,
      goPointer: true,
      diff: "none",
      doc: "Kubernetes Events on the cluster when the pair's state changes (events.go); absent: none. Never diffed: turning Events on or off applies nothing, it takes effect at the pair's next apply or refresh.",
    },
    hooks: {
      type: list(struct(PAIR_HOOK)),
      optional: true,
      diff: "none",
      doc: "The set's Helm hooks, in the release's order: run as Helm runs them around an install, an upgrade or an uninstall (hooks.go), never applied or pruned with the set. Absent when the bundle has none. Never diffed as a field: hooks.go diffHooks compares them (events, weight, policies and each manifest's digest, whichever form holds it).",
    },
    hookTimeoutSeconds: {
      type: int,
      optional: true,
      diff: "diff",
      doc: "How long each hook may take to be ready: helm.timeoutSeconds, else Helm's 30 seconds (its status watcher's default, which Fleet's agent leaves in place). Present only with hooks.",
    },
    waitFor: {
      type: list(struct(GATE)),
      optional: true,
      diff: "diff",
      doc: "Gates: the states of the pairs this one waits for (dependsOn, rollout); all must be Ready to apply.",
    },
    deletePolicy: {
      type: struct(DELETE_POLICY),
      diff: "diff",
      doc: "How objects that leave the set, or the whole pair, are deleted: decided by the program, obeyed here.",
    },
    namespacesRefused: {
      type: map(text),
      optional: true,
      diff: "diff",
      doc: "The namespaces this pair needs that its cluster's setup could not create, with the API server's words (the setup's Status.Refused): the pair fails with them and applies nothing.",
    },
  },
});

/**
 * The pair-spec fields that carry a merged fleet.yaml option as is (`fromOption`), in the schema's
 * order: present only when the option is set (true, a value), so a stack without it registers what it did before.
 */
export function optionsCarried(options: object): Partial<Shape<typeof PAIR_SPEC>> {
  const out: Record<string, unknown> = {};
  for (const [key, f] of Object.entries(PAIR_SPEC.fields) as [string, Field][]) {
    if (!f.fromOption) continue;
    const value = f.fromOption.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], options);
    if (value !== undefined && value !== false) out[key] = value;
  }
  return out;
}
