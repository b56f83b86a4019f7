/**
 * Whether an update only removes BundleDeployments (a target edit, a bundle or cluster taken out of a
 * GitRepo's targets), decided before the engine starts: then the operation runs it as a targeted update
 * of just those pairs (and of the setups of the clusters they leave), and the program registers nothing
 * else, so its cost is that of the change, not of the fleet (automation/operation/up.ts). Exactly what a
 * full update would do, or it is not taken:
 *  - every pair the update keeps is registered as the last update registered it (registrations.ts: same
 *    digest, same code), is in the state, and is Ready at its deploymentID (a full update's provider
 *    diff would otherwise apply it again: tools/fleet-provider decide.go retryReason);
 *  - every pair it removes is in the state, and each setup it changes belongs to a cluster left with no
 *    pair (no kept pair's inputs read that setup's outputs); no setup comes or goes;
 *  - the clusters, GitRepos and the provider's configuration are those of the state; the state holds
 *    nothing else (no earlier layout, no moved-in provider), and nothing is carried, adopted or renamed.
 * Anything else, and any doubt, runs the full update: the reason is returned for the log and the tests.
 */
import { stableJson } from "../base/hash";
import { PairReport } from "../model/pair";
import { nameOfUrn as nameOf } from "../model/keys";
import { Registrations } from "./registrations";
import { BUNDLE_CONTENT_TYPE, BUNDLE_DEPLOYMENT_TYPE, CLUSTER_TYPE, ClusterAccess, DesiredState, FLEET_TYPE, GIT_REPO_TYPE } from "./types";
import { CLUSTER_SETUP_TYPE } from "./setup";

/** A resource of the state as the decision reads it (core/migrate/state-shape.ts StateResource). */
export interface StateRef {
  urn: string;
  type: string;
  custom?: boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}

export interface PruneOnlyFacts {
  previous?: Registrations;
  next: Registrations;
  desired: DesiredState;
  /** The state the desired state was computed from. */
  resources: readonly StateRef[];
  /** Its outputs `deploymentStates` and `clusterSetupStates`, as the last update left them. */
  states: unknown;
  setupStates: unknown;
  /** The provider's configuration the program would register (components/fleet.ts clusterAccess). */
  access: Record<string, ClusterAccess>;
  /** The one the state holds, revealed; undefined when it is a secret not decrypted yet (then PROVIDER_ENCRYPTED). */
  stateAccess: unknown;
  /** The stack's provider's name (types.ts stackProviderName). */
  provider: string;
  /** Anything the operation hands the program besides the desired state: carried access, adoptions, names in the state. */
  extras: boolean;
}

export interface PruneOnly {
  /** The engine's targets: the pairs removed, the contents no kept pair names, the setups that change. */
  targets: string[];
  /** The pairs removed, by key. */
  removed: string[];
  /** The clusters whose setup is registered (changed). */
  setups: string[];
  /** The kept pairs' and the unchanged setups' states, as the last update left them: the outputs the program gives again. */
  states: Record<string, PairReport>;
  setupStates: Record<string, PairReport>;
}

const STACK_TYPE = "pulumi:pulumi:Stack";
const PROVIDER_TYPE = "pulumi:providers:pulumi-fleet";
const READ_TYPE = "pulumi:pulumi:StackReference";
/** The default provider of that read of the stack's own outputs (components/program.ts selfReference). */
const READ_PROVIDER_TYPE = "pulumi:providers:pulumi";
const KNOWN = new Set([
  STACK_TYPE,
  PROVIDER_TYPE,
  READ_TYPE,
  READ_PROVIDER_TYPE,
  FLEET_TYPE,
  GIT_REPO_TYPE,
  CLUSTER_TYPE,
  BUNDLE_DEPLOYMENT_TYPE,
  CLUSTER_SETUP_TYPE,
  BUNDLE_CONTENT_TYPE,
]);
/** The reason given while the state's provider configuration is encrypted: the caller decrypts it and asks again. */
export const PROVIDER_ENCRYPTED = "the provider's configuration in the state is encrypted";
/** Each target is an argument of the engine's command line: beyond this many, the full update (a prune that large gains little from targeting). */
export const MAX_TARGETS = 4000;

export function pruneOnly(f: PruneOnlyFacts): PruneOnly | { why: string } {
  const { previous, next, desired } = f;
  if (!previous) return { why: "the last update recorded no registrations" };
  if (previous.code !== next.code) return { why: "the code that registers the resources changed" };
  if (f.extras) return { why: "the state is being carried, adopted or renamed" };
  // A pair or cluster that arrived from another stack is re-parented by its alias when registered: the full update does that.
  if (desired.clusters.some((c) => c.arrived) || desired.deployments.some((d) => d.arrived)) return { why: "a cluster arrived from another stack" };
  const unknown = f.resources.find((r) => !KNOWN.has(r.type));
  if (unknown) return { why: `the state holds a ${unknown.type}` };
  const byType = (type: string) => f.resources.filter((r) => r.type === type);
  const providers = byType(PROVIDER_TYPE);
  if (providers.length !== 1 || nameOf(providers[0].urn) !== f.provider) return { why: "the state holds another provider" };
  if (f.stateAccess === undefined) return { why: PROVIDER_ENCRYPTED };
  if (stableJson(f.stateAccess) !== stableJson(f.access)) return { why: "the provider's configuration changes" };
  const names = (type: string) =>
    stableJson(
      byType(type)
        .map((r) => nameOf(r.urn))
        .sort(),
    );
  if (names(CLUSTER_TYPE) !== stableJson(desired.clusters.map((c) => c.name).sort())) return { why: "a cluster comes or goes" };
  if (names(GIT_REPO_TYPE) !== stableJson(desired.gitRepos.map((g) => g.name).sort())) return { why: "a GitRepo comes or goes" };

  const pairs = new Map(byType(BUNDLE_DEPLOYMENT_TYPE).map((r) => [nameOf(r.urn), r]));
  if (pairs.size !== byType(BUNDLE_DEPLOYMENT_TYPE).length) return { why: "the state holds a pair twice" };
  const states = asReports(f.states);
  const kept = new Set<string>();
  for (const d of desired.deployments) {
    if (previous.pairs[d.key] === undefined || previous.pairs[d.key] !== next.pairs[d.key]) return { why: `${d.key} is added or changed` };
    const r = pairs.get(d.key);
    if (!r || !ready(r, d.spec.deploymentId)) return { why: `${d.key} is not Ready in the state at its deploymentID` };
    if (!states[d.key]) return { why: `${d.key} has no state in the outputs` };
    kept.add(d.key);
  }
  const removed = [...pairs.keys()].filter((k) => !kept.has(k)).sort();
  const missing = Object.keys(previous.pairs).find((k) => !kept.has(k) && !pairs.has(k));
  if (missing) return { why: `${missing} is not in the state` };

  const setups = new Map(byType(CLUSTER_SETUP_TYPE).map((r) => [nameOf(r.urn), r]));
  const setupStates = asReports(f.setupStates);
  const clustersKept = new Set(desired.deployments.map((d) => d.cluster));
  const changedSetups: string[] = [];
  const unchangedStates: Record<string, PairReport> = {};
  for (const c of desired.clusters) {
    if (!!c.setup !== setups.has(c.name)) return { why: `cluster ${c.name}'s setup comes or goes` };
    if (!c.setup) continue;
    const now = next.setups[c.name];
    if (now !== undefined && previous.setups[c.name] === now) {
      if (!ready(setups.get(c.name)!, c.setup.deploymentId) || !setupStates[c.name]) return { why: `cluster ${c.name}'s setup is not Ready in the state` };
      unchangedStates[c.name] = setupStates[c.name];
      continue;
    }
    // Changed, or not comparable (an operator's Secret: registrations.ts): registered again, which only a cluster left with no pair allows.
    if (clustersKept.has(c.name)) return { why: `cluster ${c.name}'s setup changes under pairs it keeps` };
    changedSetups.push(c.name);
  }
  if (!removed.length) return { why: "no pair is removed" };

  const named = new Set([...kept].map((k) => pairs.get(k)!.inputs?.content).filter((c): c is string => typeof c === "string"));
  const contents = byType(BUNDLE_CONTENT_TYPE).filter((r) => !named.has(nameOf(r.urn)));
  const targets = [...removed.map((k) => pairs.get(k)!.urn), ...contents.map((r) => r.urn), ...changedSetups.map((c) => setups.get(c)!.urn)];
  if (targets.length > MAX_TARGETS) return { why: `${targets.length} resources change, more than ${MAX_TARGETS} to name as targets` };
  return {
    targets,
    removed,
    setups: changedSetups,
    states: Object.fromEntries([...kept].map((k) => [k, states[k]])),
    setupStates: unchangedStates,
  };
}

/** Ready as the provider reported it, nothing refused, at the deploymentID (when a pair's is given). */
function ready(r: StateRef, deploymentId?: string): boolean {
  const o = r.outputs ?? {};
  const refused = o.refused as Record<string, unknown> | undefined;
  return o.state === "Ready" && (!refused || !Object.keys(refused).length) && (deploymentId === undefined || o.appliedDeploymentId === deploymentId);
}

function asReports(value: unknown): Record<string, PairReport> {
  return value && typeof value === "object" ? (value as Record<string, PairReport>) : {};
}
