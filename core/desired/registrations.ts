/**
 * What the program registers, as one digest per resource: each BundleDeployment's and each cluster
 * setup's, from the values its component registers it from (components/bundle-deployment.ts,
 * components/cluster.ts), with the code that registers them (automation/engine/program-code.ts). An
 * `up` keeps them as the stack output `registrations`; the next one compares (prune-only.ts) to tell an
 * update that only removes pairs from one that changes any, before the engine starts.
 */
import { sha256Hex, stableJson } from "../base/hash";
import { DesiredCluster, DesiredDeployment, DesiredState } from "./types";
import { appliedAfterSetup, secretsCountedInDeploymentId } from "./setup";
import { hookObject } from "../model/pair";

/** The stack output the digests are kept under. */
export const REGISTRATIONS_OUTPUT = "registrations";

export interface Registrations {
  /** The digest of the code that registers the resources: another code may register the same values differently. */
  code: string;
  /** By deployment key. */
  pairs: Record<string, string>;
  /** By cluster, for the clusters that have a setup. */
  setups: Record<string, string>;
}

/** The digest of a value, with the code that registers it: 128 bits, as unlikely to collide as the whole digest at half the output's size. */
function digestOf(code: string, value: unknown): string {
  // Keys sorted: an unchanged pair's spec taken from the state (state.ts deployedAsBefore) is built in another order than a render's.
  return sha256Hex(stableJson({ code, value })).slice(0, 32);
}

/**
 * A pair's digest: what components/bundle-deployment.ts registers it from (its spec, the pairs it waits
 * for, the namespaces and setup it waits for, its GitRepo, the cluster's access key), nothing else: not
 * the commit (a new commit that leaves a pair's spec as it was registers it again unchanged). None for a
 * pair holding a secret value (its objects read from a Secret, its Secrets, a Secret among its hooks):
 * the output is plain text, and a digest of a short password could be guessed back.
 */
function pairDigest(code: string, d: DesiredDeployment, clusterKey: string, setupFirst: boolean): string | undefined {
  if (d.secret || d.spec.secretObjects || d.spec.hooks?.some((h) => hookObject(h).kind === "Secret")) return undefined;
  const { spec, dependsOn, clusterNamespaces, inAgentNamespace, afterOperatorSecrets, gitRepo } = d;
  return digestOf(code, { spec, dependsOn, clusterNamespaces, inAgentNamespace, afterOperatorSecrets, gitRepo, clusterKey, setupFirst });
}

/**
 * A setup's digest: its spec, its Secrets by their keys only, as the deploymentID already counts the
 * agent's token (setup.ts clusterSetup). None when it holds an operator's Secret, whose value nothing
 * in clear counts.
 */
function setupDigest(code: string, c: DesiredCluster): string | undefined {
  const setup = c.setup!;
  const secretKeys = Object.keys(setup.secretObjects ?? {}).sort();
  const counted = secretsCountedInDeploymentId(c);
  if (secretKeys.some((k) => !counted.has(k))) return undefined;
  return digestOf(code, { setup: { ...setup, secretObjects: secretKeys }, key: c.provider.name });
}

/** The key of the provider's configuration a pair is applied through (components/cluster.ts accessKey). */
export function accessKeyOf(c: DesiredCluster, user?: string): string {
  return user ? c.accountProviders.find((a) => a.user === user)!.provider.name : c.provider.name;
}

const computed = new WeakMap<DesiredState, Registrations>();

/**
 * Every pair's and setup's digest; a resource without one (it holds a secret value) is absent from its
 * map. Computed once per desired state and code (the operation decides with them, the program records them).
 */
export function registrationsOf(desired: DesiredState, code: string): Registrations {
  const known = computed.get(desired);
  if (known?.code === code) return known;
  const registrations = digestsOf(desired, code);
  computed.set(desired, registrations);
  return registrations;
}

function digestsOf(desired: DesiredState, code: string): Registrations {
  const clusters = new Map(desired.clusters.map((c) => [c.name, c]));
  const pairs: Record<string, string> = {};
  for (const d of desired.deployments) {
    const c = clusters.get(d.cluster)!;
    const digest = pairDigest(code, d, accessKeyOf(c, d.account), !!c.setup && appliedAfterSetup(d));
    if (digest !== undefined) pairs[d.key] = digest;
  }
  const setups: Record<string, string> = {};
  for (const c of desired.clusters) {
    const digest = c.setup ? setupDigest(code, c) : undefined;
    if (digest !== undefined) setups[c.name] = digest;
  }
  return { code, pairs, setups };
}

/** The output as the last update left it, or undefined when it is missing or not of this shape. */
export function registrationsFromOutput(value: unknown): Registrations | undefined {
  const v = value as Partial<Registrations> | undefined;
  const digests = (x: unknown) => !!x && typeof x === "object" && Object.values(x).every((s) => typeof s === "string");
  return v && typeof v === "object" && typeof v.code === "string" && digests(v.pairs) && digests(v.setups) ? (v as Registrations) : undefined;
}
