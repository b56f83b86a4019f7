/**
 * The objects the stack's state holds per bundle deployment, read before the engine runs: an unchanged
 * deployment is registered with exactly these (core/desired/state.ts deployedAsBefore), as Fleet keeps
 * a BundleDeployment's release until its deploymentID changes. One `pulumi stack export --show-secrets`
 * (a Secret's data is a secret in the state; the program registers it as it was, and the provider marks
 * it secret again).
 */
import { OutputMap, Stack } from "@pulumi/pulumi/automation";
import { DeployedBundle, DeployedNamespace, DeployedObject } from "../../core/desired/facts";
import { clusterOfKey } from "../../core/model/keys";
import { isUnqualifiedKey, qualifiedKey } from "../../core/migrate/renames";
import { REPO_NAME_LABEL } from "../../core/targeting/depends-on";
import { K8sObject } from "../../core/model/k8s-object";
import { ContentManifests, fromEngineObjects, keptAsInState, pairSpecFromEngine, PairSpec } from "../../core/model/pair";
import { BUNDLE_CONTENT_TYPE, BUNDLE_DEPLOYMENT_TYPE, ClusterAccess, CLUSTER_TYPE } from "../../core/desired/types";
import { CLUSTER_SETUP_TYPE, isAppliedSet } from "../../core/desired/setup";
import { RETAIN_REASONS, retainCodeOf } from "../../core/desired/delete-policy";
import { clusterNamespaceName } from "../../core/desired/namespaces";
import { isNewStack, runCli } from "./stack";
import { deploymentInFiles } from "./checkpoint-file";
import { nameOfUrn, providerOf, StateResource } from "../../core/migrate/state-shape";
import { legacyObjects, legacySetups, NAMESPACE_TYPE } from "../../core/migrate/legacy-resources";

export type { StateResource };

/** A deployment as the state holds it; `earlier`: an earlier version's, one resource per object, whose objects its pair adopts (core/migrate/adoptions.ts). */
export type StateBundle = DeployedBundle & { earlier?: true };

const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** One read of the stack's state, for everything an operation needs of it before the engine runs. */
export interface StackState {
  resources: StateResource[];
  /** Operations a killed update left in flight (recorded when checkpoints are on). */
  pending: { type: string; resource: { urn: string } }[];
  /** The stack's outputs as the last update left them, secrets revealed (as `stack output --show-secrets`). */
  outputs: OutputMap;
  /** What the state holds per BundleDeployment (deployedObjectsOf). */
  deployed: Map<string, StateBundle>;
  /** Per cluster, the objects of an earlier version's agent and namespace resources (legacySetupsOf). */
  legacySetups: Map<string, DeployedObject[]>;
  /** The access the stack's provider had for each cluster key its pairs and setups name (carriedAccessOf). */
  access: Record<string, ClusterAccess>;
}

/**
 * The state, read once per operation (`fileDir`: a file backend's folder, read without the CLI where
 * checkpoint-file.ts reads its layout): the stack's outputs are its root resource's, so no `stack output`
 * call is needed besides (each CLI call is about 0.13 s of a no-op `up`). Its secrets are decrypted
 * (`--show-secrets`, a second read) only when the operation needs one (needsSecrets): the passphrase's
 * key derivation is 0.16 s of each command that decrypts. `configured` gives the names of the clusters
 * the stack configures (undefined: not known without the stack's config).
 */
export async function readState(stack: Stack, configured: () => Promise<Set<string> | undefined>, fileDir?: string): Promise<StackState> {
  // A stack created by this operation holds nothing yet (no CLI call: 0.25 s of a first deploy).
  if (isNewStack(stack)) return stateOf({});
  // A file backend's checkpoint is read from its folder (checkpoint-file.ts): the same deployment `stack export` prints, without a CLI start.
  const inFiles = fileDir ? deploymentInFiles(fileDir, stack.name) : undefined;
  const text = inFiles === undefined ? await runCli(stack, ["stack", "export", "--stack", stack.name]) : undefined;
  const plain = text !== undefined ? JSON.parse(text) : { deployment: inFiles === "none" ? {} : inFiles };
  const mayHoldSecret = text === undefined || text.includes(SECRET_SIG);
  if (!mayHoldSecret || !(await needsSecrets(plain?.deployment?.resources ?? [], configured))) return stateOf(plain);
  return stateOf(JSON.parse(await runCli(stack, ["stack", "export", "--show-secrets", "--stack", stack.name])));
}

export function stateOf(exported: { deployment?: { resources?: StateResource[]; pending_operations?: StackState["pending"] } }): StackState {
  const resources: StateResource[] = exported?.deployment?.resources ?? [];
  const root = resources.find((r) => r.type === "pulumi:pulumi:Stack");
  const outputs: OutputMap = Object.fromEntries(Object.entries(root?.outputs ?? {}).map(([k, v]) => [k, { value: revealed(v), secret: isSecret(v) }]));
  const setups = legacySetupsOf(resources);
  return {
    resources,
    pending: exported?.deployment?.pending_operations ?? [],
    outputs,
    deployed: deployedObjectsOf(resources),
    legacySetups: setups.objects,
    access: carriedAccessOf(resources),
  };
}

/**
 * Whether reading the state must decrypt: a secret output; a BundleDeployment holding a secret (an
 * unchanged deployment is registered again as it was: its lookups', valuesFrom's or Secrets' values);
 * an earlier version's Kubernetes resource holding one (it moves into its set); or the provider's access
 * to a cluster no longer configured (kept until that cluster's pairs are deleted). A cluster's setup
 * holds secrets (the agent's token, the operator's Secrets) that no operation reads back: it is made anew.
 */
export async function needsSecrets(resources: StateResource[], configured: () => Promise<Set<string> | undefined>): Promise<boolean> {
  for (const r of resources) {
    if (r.type === "pulumi:pulumi:Stack" && holdsSecret(r.outputs)) return true;
    if ((r.type === BUNDLE_DEPLOYMENT_TYPE || r.type.startsWith("kubernetes:")) && holdsSecret(r.inputs)) return true;
  }
  if (!resources.some((r) => r.type === "pulumi:providers:pulumi-fleet" && holdsSecret(r.inputs?.clusters))) return false;
  const names = await configured();
  if (!names) return true;
  return resources.some((r) => isAppliedSet(r.type) && typeof r.inputs?.cluster === "string" && !names.has(clusterOfKey(`${r.inputs.cluster}/`)));
}

function holdsSecret(v: unknown): boolean {
  if (!v || typeof v !== "object") return false;
  if (SECRET_SIG in v) return true;
  return Object.values(v).some(holdsSecret);
}

/**
 * Per BundleDeployment's logical name (its deploymentKey): the deploymentID its objects were all applied
 * at (its `appliedDeploymentId` output), its objects, its last inputs, the user they were applied as,
 * and the namespaces its cluster created for them: what a failed deployment keeps. A stack deployed by
 * an earlier version holds a component per deployment with one resource per object: read the same way,
 * marked `earlier` (its BundleDeployment adopts them: core/migrate/adoptions.ts).
 */
export function deployedObjectsOf(resources: StateResource[]): Map<string, StateBundle> {
  const out = new Map<string, StateBundle>();
  const legacy = new Map<string, StateBundle>();
  const clusterUrns = new Set(resources.filter((r) => r.type === CLUSTER_TYPE).map((r) => r.urn));
  const namespaces = clusterNamespacesIn(resources, clusterUrns);
  const contents = contentsIn(resources);
  const withNamespaces = (bundle: DeployedBundle, cluster: string) => {
    for (const { manifest } of bundle.objects) {
      const ns = manifest.metadata?.namespace ? namespaces.get(clusterNamespaceName(cluster, manifest.metadata.namespace)) : undefined;
      if (ns && !bundle.namespaces?.some((n) => n.name === ns.name)) (bundle.namespaces ??= []).push(ns);
    }
  };
  for (const r of resources.filter((x) => x.type === BUNDLE_DEPLOYMENT_TYPE)) {
    const key = nameOfUrn(r.urn);
    const applied = r.outputs?.appliedDeploymentId;
    const bundle: DeployedBundle = { ...(typeof applied === "string" ? { appliedDeploymentId: applied } : {}), objects: [] };
    const account = accountOf(key, r.provider, r.inputs?.cluster);
    if (account) bundle.account = account;
    if (r.custom && r.inputs) {
      const { waitFor: _gates, ...inputs } = revealed(r.inputs) as PairSpec;
      // A pair that names its content (components/content.ts) reads its manifests from that BundleContent, so an unchanged one is not rendered again.
      const content = typeof inputs.content === "string" ? contents.get(inputs.content) : undefined;
      const spec = pairSpecFromEngine(inputs, content);
      // Its content missing from the state (after `pulumi state move`, or lost): its objects are only identities, which no deployment
      // may take for a render, nor a hold apply as manifests; a hold registers its inputs as the state holds them (pair.ts keptAsInState).
      const missing = typeof inputs.content === "string" && !content;
      if (missing) delete bundle.appliedDeploymentId;
      bundle.spec = missing ? keptAsInState(inputs) : spec;
      if (isSecret(r.inputs.objects)) bundle.secret = true;
      bundle.objects = [...Object.values(spec.objects ?? {}), ...Object.values(spec.secretObjects ?? {})].map((o) => ({
        manifest: o.manifest as unknown as K8sObject,
        ...(o.retain ? { retain: o.retain } : {}),
        ...(o.createOnly ? { createOnly: true as const } : {}),
      }));
      withNamespaces(bundle, clusterOfKey(key));
      out.set(key, bundle);
    } else if (!r.custom) {
      legacy.set(r.urn, { ...bundle, earlier: true });
    }
  }
  for (const r of legacyObjects(resources)) {
    const [urn, bundle] = [r.component, legacy.get(r.component)!];
    bundle.objects.push({ manifest: revealed(r.inputs) as K8sObject, ...(r.retainOnDelete ? { retain: RETAIN_REASONS.legacy } : {}) });
    const account = accountOf(nameOfUrn(urn), providerOf(r));
    if (account) bundle.account = account;
  }
  for (const [urn, bundle] of legacy) {
    const key = legacyKeyNow(nameOfUrn(urn), bundle);
    if (!key) continue;
    withNamespaces(bundle, clusterOfKey(key));
    if (!out.has(key)) out.set(key, bundle);
  }
  // A pair still named without its GitRepo is one the migration could not rename (no GitRepo known): nothing matches it.
  return new Map([...out].filter(([key]) => !isUnqualifiedKey(key)));
}

/**
 * The key now of an earlier version's BundleDeployment component, named "<cluster>/<bundle>" (those
 * components are not renamed: their objects move into the pair registered under the key now): its
 * GitRepo is the one its objects' ownership labels name. Undefined when none does.
 */
function legacyKeyNow(name: string, bundle: DeployedBundle): string | undefined {
  if (!isUnqualifiedKey(name)) return name;
  const gitRepo = bundle.objects.find((o) => o.manifest.metadata?.labels?.[REPO_NAME_LABEL])?.manifest.metadata.labels![REPO_NAME_LABEL];
  return gitRepo ? qualifiedKey(name, gitRepo) : undefined;
}

/** The BundleContent resources of the state: each render's manifests (JSON text) by its digest, the resource's name. */
export function contentsIn(resources: StateResource[]): Map<string, ContentManifests> {
  const out = new Map<string, ContentManifests>();
  for (const r of resources) {
    if (r.type === BUNDLE_CONTENT_TYPE && r.custom && r.inputs?.objects) out.set(nameOfUrn(r.urn), revealed(r.inputs.objects) as ContentManifests);
  }
  return out;
}

/**
 * For each cluster key (a cluster, or "<cluster>/as/<user>") that a BundleDeployment or ClusterSetup in
 * the state names through the stack's one provider, the access that provider's configuration has for
 * it: what the next update keeps in the configuration for a cluster removed from the stack, so the
 * engine can still delete what it holds there (components/fleet.ts).
 */
export function carriedAccessOf(resources: StateResource[]): Record<string, ClusterAccess> {
  const configured = new Map<string, Record<string, ClusterAccess>>();
  for (const r of resources) {
    if (r.type !== "pulumi:providers:pulumi-fleet" || !nameOfUrn(r.urn).includes(":") || !r.inputs) continue;
    // Undecrypted (readState decrypts it only when a cluster is no longer configured): nothing is carried.
    if (isSecret(r.inputs.clusters) && typeof (r.inputs.clusters as Record<string, unknown>).plaintext !== "string") continue;
    configured.set(`${r.urn}::${r.id ?? ""}`, (revealed(r.inputs.clusters) ?? {}) as Record<string, ClusterAccess>);
  }
  const out: Record<string, ClusterAccess> = {};
  for (const r of resources) {
    if (!isAppliedSet(r.type) || !r.custom || !r.provider) continue;
    const key = r.inputs?.cluster;
    const access = typeof key === "string" ? configured.get(r.provider)?.[key] : undefined;
    if (access) out[key as string] = access;
  }
  return out;
}

/**
 * The namespaces the clusters created for their bundles, by logical name ("<cluster>/<namespace>"): the
 * Namespace objects of each ClusterSetup, or an earlier version's Namespace resources under a Cluster.
 * The agent's own namespace is the agent's, not a bundle's.
 */
function clusterNamespacesIn(resources: StateResource[], clusterUrns: Set<string>): Map<string, DeployedNamespace> {
  const out = new Map<string, DeployedNamespace>();
  for (const r of resources) {
    if (r.type === NAMESPACE_TYPE && r.parent && clusterUrns.has(r.parent) && r.inputs) {
      out.set(nameOfUrn(r.urn), {
        name: nameOfUrn(r.urn),
        metadata: r.inputs.metadata as DeployedNamespace["metadata"],
        retainOnDelete: r.retainOnDelete === true,
      });
    }
    if (r.type !== CLUSTER_SETUP_TYPE || !r.custom || !r.inputs) continue;
    for (const o of Object.values(fromEngineObjects(revealed(r.inputs.objects) as PairSpec["objects"]))) {
      const metadata = o.manifest.metadata as DeployedNamespace["metadata"];
      if (o.manifest.kind !== "Namespace" || retainCodeOf(o.retain) === "agentNamespace") continue;
      const name = clusterNamespaceName(nameOfUrn(r.urn), metadata.name);
      out.set(name, { name, metadata, retainOnDelete: !!o.retain });
    }
  }
  return out;
}

/** Per cluster, the objects of an earlier version's agent and namespace resources (core/migrate legacySetups), secrets revealed. */
export function legacySetupsOf(resources: StateResource[]): { objects: Map<string, DeployedObject[]>; urns: string[] } {
  const objects = new Map<string, DeployedObject[]>();
  const found = legacySetups(resources);
  for (const { cluster, object } of found)
    objects.set(cluster, [...(objects.get(cluster) ?? []), { ...object, manifest: revealed(object.manifest) as K8sObject }]);
  return { objects, urns: found.map((s) => s.urn) };
}

/**
 * The user a deployment was applied as: its spec's `cluster` is "<cluster>" or "<cluster>/as/<user>"
 * (components/fleet.ts), as an earlier version's provider was named (one per cluster and user).
 */
function accountOf(key: string, providerRef: string | undefined, access?: unknown): string | undefined {
  const prefix = `${clusterOfKey(key)}/as/`;
  if (typeof access === "string") return access.startsWith(prefix) ? access.slice(prefix.length) : undefined;
  if (!providerRef) return undefined;
  const provider = nameOfUrn(providerRef.slice(0, providerRef.lastIndexOf("::")));
  return provider.startsWith(prefix) ? provider.slice(prefix.length) : undefined;
}

/** The URNs of an earlier version's per-object resources (children of a BundleDeployment component: core/migrate). */
export function legacyObjectUrns(resources: StateResource[]): string[] {
  return legacyObjects(resources).map((r) => r.urn);
}

const isSecret = (v: unknown) => !!v && typeof v === "object" && SECRET_SIG in v;

/**
 * The configuration (every cluster's access) the state holds for the stack's provider named `name`:
 * undefined when there is none or it is a secret this read did not decrypt (providerConfigDecrypted).
 */
export function providerConfigIn(resources: StateResource[], name: string): unknown {
  const p = resources.find((r) => r.type === "pulumi:providers:pulumi-fleet" && nameOfUrn(r.urn) === name);
  const clusters = p?.inputs?.clusters;
  if (clusters === undefined || (isSecret(clusters) && typeof (clusters as Record<string, unknown>).plaintext !== "string")) return undefined;
  return revealed(clusters);
}

/** The same, from a read of the state that decrypts its secrets (one CLI call: the passphrase's key derivation). */
export async function providerConfigDecrypted(stack: Stack, name: string): Promise<unknown> {
  const exported = JSON.parse(await runCli(stack, ["stack", "export", "--show-secrets", "--stack", stack.name]));
  return providerConfigIn(exported?.deployment?.resources ?? [], name);
}

/** A value with the state's secret envelopes (`--show-secrets`: the plaintext as JSON text) opened. */
function revealed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(revealed);
  if (!v || typeof v !== "object") return v;
  const o = v as Record<string, unknown>;
  if (SECRET_SIG in o) {
    if (typeof o.plaintext !== "string") throw new Error("the state holds a secret that was not decrypted (stack export --show-secrets)");
    return revealed(JSON.parse(o.plaintext));
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, revealed(x)]));
}
