/**
 * The steps of the desired state (state.ts), in the order they run: each judges the deployments still
 * alive (steps.ts) and gives the later steps what it gathered or decided as a typed value, so what a
 * step needs is in its parameters.
 */
import { checkTakeOwnership, ownershipQueries } from "./ownership";
import { checkReach } from "./reach";
import { RenderedDeployment } from "../render/deployments";
import { contestedObjects } from "../render/single-owner";
import { AccountUsers, accountUsers, defaultAccountClusters, wantedUsers } from "./service-accounts";
import { PlanEntry, unchangedDeployments } from "../targeting/plan";
import { FleetError } from "../base/errors";
import { checkRendered } from "./checks";
import { clusterNamespaces } from "./cluster-namespaces";
import { KnownClusters } from "./cluster-facts";
import { failuresOf } from "../plan/failures";
import { deployedAsBefore } from "./from-state";
import { gatherAsUsers, gatherClusters } from "./gather";
import { gatherExisting, gatherOwners } from "./gather-objects";
import { Ground } from "./ground";
import { HeldDeployments, heldDeployments } from "./held";
import { partitionHolds, pausedHolds, windowHolds } from "./holds";
import { deploymentKey } from "../model/keys";
import { inDependencyOrder } from "./order";
import { knownOwners, ownersUnknown } from "./owners";
import { renewedKeys, valuesFromAsks, valuesFromRead, ValuesFromReads, valuesFromVerdicts } from "./read-values-from";
import { entriesByCluster } from "./records";
import { renderWithLookups } from "./render-lookups";
import { RolloutGates, rolloutGates } from "./rollout-gates";
import { Judged, verdictsOnly } from "./steps";
import { accessDigest, pairInputs, stalledAfterOf, stalledPairs } from "../plan/stalled";

/** The clusters' facts (`known`: ClusterFacts per cluster name), the identities that deploy, and the valuesFrom reads. */
export interface Gathered {
  known: KnownClusters;
  accounts: AccountUsers;
  valuesFrom: ValuesFromReads;
}

/** Each alive deployment's objects: rendered anew, or taken from the state as deployed when unchanged. */
export interface Rendered {
  unchanged: Set<PlanEntry>;
  /** The Helm revision each deployment last had (counted as the agent's releases are). */
  lastRevisions: Map<PlanEntry, number>;
  rendered: Map<PlanEntry, RenderedDeployment>;
}

/** What the failed deployments keep, and which clusters a rollout holds back. */
export interface Holds {
  held: HeldDeployments;
  rollouts: RolloutGates;
}

/** What content asks beyond its GitRepo's stack entry fails before anything renders as it asked (core/reach.ts). */
export function reach(g: Ground, alive: PlanEntry[]): Judged<undefined> {
  return verdictsOnly({ failed: failuresOf((fail) => checkReach(alive, g.pinned, g.fleet.bundles, g.fleet.targeting, fail)) });
}

/** helm.valuesFrom, read from each cluster as the deploying identity: a changed value is a new deploymentID. */
export async function valuesFrom(g: Ground, alive: PlanEntry[]): Promise<Judged<Gathered>> {
  const { pinned, facts, renderMode, leftOut } = g;
  const known = await gatherClusters(pinned, defaultAccountClusters(alive, renderMode, leftOut), g.agentNamespace, facts);
  const users = accountUsers(alive, g.agentNamespace, renderMode, known);
  const asks = valuesFromAsks(alive, { gitRepos: pinned.gitRepos, users, namespacesBefore: g.namespacesBefore, renderMode, leftOut, fileOf: g.fileOf });
  await gatherAsUsers(wantedUsers(alive, users), asks, pinned.clusters, facts, known);
  const reads = valuesFromRead(asks, known, { fileOf: g.fileOf });
  const verdicts = valuesFromVerdicts(reads);
  return {
    verdicts,
    value: {
      known,
      accounts: { ...users, userOf: renewedKeys(users.userOf, verdicts.renewed) },
      valuesFrom: { ...reads, read: renewedKeys(reads.read, verdicts.renewed) },
    },
  };
}

/** Pairs on a paused cluster: held as the state holds them, before anything about them is read or rendered (holds.ts). */
export function pausedClusters(g: Ground, alive: PlanEntry[]): Judged<undefined> {
  return verdictsOnly({ failed: pausedHolds(alive, g.paused).map(([pair, error]) => ({ pair, error, held: "paused" as const })) });
}

/**
 * Stalled pairs (core/plan/stalled.ts): failed `stalledAfter` times in a row with the inputs they have now
 * (deploymentIDs final: after valuesFrom), so they fail again without being rendered or applied. The
 * value: every planned pair's inputs, which the `up` records its failures under.
 */
export function stalled(g: Ground, alive: PlanEntry[]): Judged<Map<string, string>> {
  const access = new Map(g.pinned.clusters.map((c) => [c.name, accessDigest(c)]));
  const inputsOf = (e: PlanEntry) => pairInputs(e, access.get(e.cluster) ?? accessDigest(undefined));
  // Pairs failed before this step keep the plan's inputs; the alive ones have their valuesFrom digest now.
  const now = new Map(alive.map((e) => [deploymentKey(e), e]));
  const inputs = new Map(g.fleet.plan.entries.map((e) => [deploymentKey(e), inputsOf(now.get(deploymentKey(e)) ?? e)]));
  const found = stalledPairs(alive, g.options.stalled, stalledAfterOf(g.config.stalledAfter), (e) => inputs.get(deploymentKey(e))!);
  return { verdicts: { failed: found.map(([pair, error, facts]) => ({ pair, error, stalled: facts })) }, value: inputs };
}

export function maintenanceWindows(g: Ground, alive: PlanEntry[]): Judged<undefined> {
  return verdictsOnly({ failed: windowHolds(alive, g.outside, g.previous).map(([pair, error]) => ({ pair, error, held: "schedule" as const })) });
}

/** An unchanged deployment is taken from the state as deployed; the others render, Helm revisions counted as the agent's releases do. */
export async function render(g: Ground, got: Gathered, planned: PlanEntry[]): Promise<Judged<Rendered>> {
  const { previous, facts } = g;
  const unchanged = unchangedDeployments(planned, previous?.deploymentIds);
  const fromState = deployedAsBefore(planned, unchanged, previous, g.fleet.bundles, facts.deployed);
  const lastRevisions = new Map(
    planned.flatMap((e): [PlanEntry, number][] => {
      const key = deploymentKey(e);
      return previous?.deploymentIds?.[key] !== undefined ? [[e, previous.revisions?.[key] ?? 1]] : [];
    }),
  );
  const r = await renderWithLookups(
    planned.filter((e) => !fromState.has(e)),
    { fleet: g.fleet, facts, leftOut: g.leftOut, namespacesBefore: g.namespacesBefore },
    { known: got.known, users: got.accounts, valuesFrom: got.valuesFrom.read, lastRevisions },
  );
  return { verdicts: r.verdicts, value: { unchanged, lastRevisions, rendered: new Map([...r.rendered, ...fromState]) } };
}

export async function renderedObjects(g: Ground, got: Gathered, r: Rendered, alive: PlanEntry[]): Promise<Judged<undefined>> {
  const contested = contestedObjects(new Map(alive.map((e) => [e, r.rendered.get(e)!])));
  if (!g.renderMode) await gatherOwners(ownersUnknown(contested, g.prior), g.pinned.clusters, g.facts, got.known, { skip: g.leftOut });
  const owners = knownOwners(contested, g.prior, g.renderMode ? undefined : got.known);
  const context = { owners, prior: g.prior, namespacesBefore: g.namespacesBefore, stack: g.pinned, bundles: g.fleet.bundles, secrets: g.secrets };
  return verdictsOnly({ failed: checkRendered(alive, r.rendered, context) });
}

/** takeOwnership reads and judges only the deployments still alive. */
export async function takeOwnership(g: Ground, got: Gathered, r: Rendered, alive: PlanEntry[]): Promise<Judged<undefined>> {
  if (g.renderMode) return verdictsOnly({ failed: [] });
  const adoption = {
    entries: alive,
    rendered: r.rendered,
    bundles: g.fleet.bundles,
    unchanged: r.unchanged,
    skip: g.leftOut,
    adopting: new Set(g.pinned.gitRepos.filter((x) => x.takeOwnership).map((x) => x.name)),
  };
  await gatherExisting(ownershipQueries(adoption), g.pinned.clusters, g.facts, got.known);
  return verdictsOnly({ failed: failuresOf((fail) => checkTakeOwnership(adoption, got.known, fail)) });
}

export function dependencyOrder(alive: PlanEntry[]): Judged<undefined> {
  return verdictsOnly({ failed: failuresOf((fail) => inDependencyOrder(alive, fail)) });
}

/** Each cluster's namespaces for the deployments given; a conflict between two bundles' labels goes to onConflict. */
export function namespacesOf(g: Ground, r: Rendered, entries: PlanEntry[], onConflict: (e: PlanEntry, err: FleetError) => void) {
  const byCluster = entriesByCluster(entries);
  return new Map(
    g.pinned.clusters.map((c) => {
      const agent = { namespace: g.agentNamespace(c.name), deployed: !!g.agents.get(c.name)!.agent };
      return [c.name, clusterNamespaces(c.name, byCluster.get(c.name) ?? [], r.rendered, agent, onConflict)] as const;
    }),
  );
}

export function namespaces(g: Ground, r: Rendered, alive: PlanEntry[]): Judged<undefined> {
  return verdictsOnly({ failed: failuresOf((fail) => namespacesOf(g, r, alive, fail)) });
}

/** What the failed deployments keep, and what must not take it from them; which clusters a rollout holds back. */
export function holdsAndRolloutGates(g: Ground, r: Rendered, alive: PlanEntry[]): Judged<Holds> {
  const held = heldDeployments(g.failures, g.fleet, g.readNow, g.previous, g.facts.deployed);
  const rollouts = rolloutGates(alive, g.fleet.bundles, g.fleet.targeting.partitions, g.failures);
  const partition = g.options.partition;
  const staged = partition === undefined ? [] : partitionHolds(rollouts.byBundle, alive, r.unchanged, partition);
  return {
    verdicts: {
      failed: [
        ...alive.filter((e) => held.taken(e, r.rendered.get(e)!)).map((e) => ({ pair: e, error: held.takenError(e, r.rendered.get(e)!) })),
        ...rollouts.waiting.map(([pair, error]) => ({ pair, error })),
        ...rollouts.heldBack.map(([pair, error]) => ({ pair, error, held: "schedule" as const })),
        ...staged.map(([pair, error]) => ({ pair, error, held: "partition" as const })),
      ],
    },
    value: { held, rollouts },
  };
}
