/**
 * Fleet's status model, computed from what the stack last applied (its `deployments` output), the plan
 * of the current commit, and a refresh-preview of the clusters (live reads: readiness and drift).
 * States and ranks follow Fleet (fleet-semantics.md §4): ErrApplied > WaitApplied > Modified >
 * OutOfSync > Pending > NotReady > Ready; bundles and GitRepos roll up to the worst state and a
 * `readyClusters x/y` count.
 */
import type { DeploymentRecord } from "../../core/desired/records";
import type { FleetState } from "../../core/plan/pipeline";
import type { DepartureCode } from "../../core/desired/departures";
import type { ReportFacts } from "../../core/desired/report-facts";
import { compare } from "./deploy-events";
import { DeploymentSteps, GroupedSteps, nameOfUrn } from "../engine/steps";
import { Step } from "../engine/step-recorder";
import { Offline, offlineWords } from "../clusters/observed";
import { DeploymentState, failureCondition, failureState, PairCondition, STATE_RANK } from "./vocabulary";
import type { ClusterPause } from "../../core/config/stack";

export { STATE_RANK } from "./vocabulary";
export type { DeploymentState } from "./vocabulary";

export interface DeploymentStatus {
  gitRepo: string;
  bundle: string;
  cluster: string;
  state: DeploymentState;
  /** The deploymentId the current commit and options call for. */
  deploymentId: string;
  /** The deploymentId the last successful update applied (undefined: never deployed). */
  appliedDeploymentId?: string;
  /** Why it is not Ready: the objects that are missing, modified or not ready. */
  message: string;
  /** Why, beside the state (vocabulary.ts): Stalled, Offline, Paused, OffSchedule or Held. */
  condition?: PairCondition;
  /** Its cluster is Offline: not observed since it was last seen (ISO 8601); absent for a pair of a cluster never seen. */
  notObservedSince?: string;
  /** Its cluster is Offline: the state the last update left it in, before the cluster went out of reach. */
  lastObservedState?: string;
  /** Stalled (Fleet's condition word): its state is ErrApplied, and it is not applied again until its inputs change or `up --retry` (core/plan/stalled.ts). */
  stalled?: { failures: number; since: string; reason: string };
}

/** A pair that leaves: the next `up` prunes it (or, moved to another shard, that shard's stack holds it). */
export interface LeavingPair {
  gitRepo: string;
  bundle: string;
  cluster: string;
  code: DepartureCode;
  reason: string;
}

export interface RollUp {
  state: DeploymentState;
  readyClusters: number;
  desiredReadyClusters: number;
}

/** A cluster's agent as the last update deployed it (the stack output `summary.agents.<cluster>`). */
export interface AgentInfo {
  image: string;
  configHash: string;
  pinned: boolean;
}

/** A cluster's state: the worst of its pairs' (Fleet's Cluster display state), or Offline when it could not be read now. */
export type ClusterState = DeploymentState | "Offline";

export interface ClusterStatus {
  cluster: string;
  state: ClusterState;
  readyBundles: number;
  desiredReadyBundles: number;
  // The fields below were added for the status page; optional so that older reports still read.
  labels?: Record<string, string>;
  /** The cluster groups whose selector matches the cluster, sorted. */
  groups?: string[];
  /** Undefined when the stack has no record of it yet (never deployed). */
  agent?: AgentInfo;
  /** Undefined when nothing was probed (render mode). */
  reachable?: boolean;
  unreachableReason?: string;
  /** Offline: its API server did not answer this run; since when, and when it last did (automation/clusters/observed.ts). */
  offline?: Offline;
  /** Paused in the stack file (`clusters[].paused`): why, by whom, since when, and the words every report says; its pairs keep exactly what they have. */
  paused?: ClusterPause & { message: string };
}

export interface StatusReport {
  stack: string;
  deployments: DeploymentStatus[];
  bundles: (RollUp & { gitRepo: string; bundle: string })[];
  /** `chartVersion`: a HelmOp's (stack file helmOps), the chart version its commit stands for. */
  gitRepos: (RollUp & { gitRepo: string; commit: string; chartVersion?: boolean })[];
  clusters: ClusterStatus[];
  /** Pairs the last update deployed that this plan no longer holds, with why (core/desired/departures.ts); absent in older reports. */
  leaving?: LeavingPair[];
  /** When the clusters were read (ISO 8601); set by the operation, not by the pure computation. */
  takenAt?: string;
  /** The last run recorded (automation/runs/runs.ts): its id, kind (up, rollback, redeploy), start and whether every pair succeeded. */
  lastRun?: { id: string; kind: string; at: string; ok: boolean };
  /** A rollback in force: the run it re-applies, who pinned it and when, and the words every report says. */
  pinned?: { run: string; by: string; who: string; at: string; message: string };
}

/** What the operation knows beyond the plan and the steps (all optional: a pure caller may have none). */
export interface StatusContext {
  agents?: Record<string, AgentInfo>;
  /** Per deployment, its objects that are not ready (nonReadyByDeployment). */
  nonReady?: Map<string, string[]>;
  /** Whether the clusters were probed for reachability (false in render mode). */
  probed?: boolean;
  takenAt?: string;
  /** The unreachable clusters' Offline states (since when, last seen). */
  offline?: ReadonlyMap<string, Offline>;
  /** The words of a paused cluster (core/desired/holds.ts pausedMessage: reports import no rule of core). */
  pausedWords?: (cluster: string, pause: ClusterPause) => string;
  /** Per deployment, the state the last update reported (its `deploymentStates` output): what an Offline cluster's pairs last showed. */
  lastStates?: Record<string, { state: string }>;
}

/**
 * @param facts what core decided of this plan and `applied` (core/desired/report-facts.ts reportFacts)
 * @param groups steps of a refresh-preview: refresh steps carry the live objects, and any change the
 *   preview would make to an applied deployment is drift
 * @param failed deployments whose last update failed
 */
export function computeStatus(
  stack: string,
  state: FleetState,
  applied: Record<string, DeploymentRecord>,
  facts: ReportFacts,
  groups: GroupedSteps,
  failed: Set<string> = new Set(),
  unreachable: Map<string, string> = new Map(),
  context: StatusContext = {},
): StatusReport {
  const deployments = state.plan.entries
    .map((e): DeploymentStatus => {
      const key = facts.keyOf(e);
      const rec = applied[key];
      const base = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, deploymentId: e.deploymentId, appliedDeploymentId: rec?.deploymentId };
      const steps = groups.deployments.get(key);
      // What the BundleDeployment's provider found (a refresh reads drift; its last apply may have been refused).
      const report = steps?.report;
      if (report && report.state !== "Ready") return { ...base, state: report.state as DeploymentState, message: report.messages.join("; ") };
      // Not observed now: never Ready, whatever it last was (Fleet's oldest status complaint, fleet#594).
      if (unreachable.has(e.cluster)) return { ...base, ...notObserved(key, unreachable.get(e.cluster)!, context, context.offline?.get(e.cluster)) };
      // The last update left this deployment behind (its cluster failed or was unreachable).
      if (failed.has(key)) return { ...base, state: "ErrApplied", message: "the last update failed on this cluster" };
      if (!rec) return { ...base, state: "Pending", message: "not deployed yet" };
      if (rec.deploymentId !== e.deploymentId) {
        return {
          ...base,
          state: e.paused ? "OutOfSync" : "WaitApplied",
          message: e.paused ? "paused: a newer deploymentId waits" : "a newer deploymentId waits for `up`",
          ...(e.paused ? { condition: "Paused" as const } : {}),
        };
      }
      const notReady = context.nonReady?.get(key) ?? [];
      const drift = steps ? driftOf(steps) : [];
      if (drift.length) return { ...base, state: "Modified", message: drift.join("; ") };
      if (notReady.length) return { ...base, state: "NotReady", message: notReady.join("; ") };
      return { ...base, state: "Ready", message: "" };
    })
    .concat(
      (state.failures?.list() ?? []).map((f): DeploymentStatus => ({
        // A bundle deployment that failed alone (core/plan/failures.ts): Fleet's ErrApplied, with why and what it keeps;
        // one held (a paused cluster, a maintenance window, --partition): OutOfSync, or Pending when never deployed (vocabulary.ts).
        gitRepo: f.gitRepo,
        bundle: f.bundle,
        cluster: f.cluster,
        state: failureState(f),
        ...(failureCondition(f) ? { condition: failureCondition(f) } : {}),
        deploymentId: "",
        appliedDeploymentId: f.cluster ? applied[facts.keyOf(f)]?.deploymentId : undefined,
        message: `${f.file ? `${f.file}: ` : ""}${f.reason} (${f.kept ? "keeps what it last deployed" : "nothing deployed"})`,
        ...(f.stalled ? { stalled: f.stalled } : {}),
      })),
    )
    .sort((a, b) => compare(`${a.gitRepo}/${a.bundle}/${a.cluster}`, `${b.gitRepo}/${b.bundle}/${b.cluster}`));

  pausedRollouts(facts, deployments);
  const rollUp = (items: DeploymentStatus[], desired: number, ready: number): RollUp => ({
    state: items.reduce<DeploymentState>((worst, d) => (STATE_RANK[d.state] > STATE_RANK[worst] ? d.state : worst), "Ready"),
    readyClusters: ready,
    desiredReadyClusters: desired,
  });
  const groupBy = <K extends string>(key: (d: DeploymentStatus) => K) => {
    const m = new Map<K, DeploymentStatus[]>();
    for (const d of deployments) m.set(key(d), [...(m.get(key(d)) ?? []), d]);
    return m;
  };
  const bundles = [...groupBy((d) => `${d.gitRepo}\u0000${d.bundle}`)].map(([k, items]) => {
    const [gitRepo, bundle] = k.split("\u0000");
    return { gitRepo, bundle, ...rollUp(items, items.length, items.filter((d) => d.state === "Ready").length) };
  });
  const gitRepos = [...state.config.gitRepos]
    .sort((a, b) => compare(a.name, b.name))
    .map((r) => {
      const items = deployments.filter((d) => d.gitRepo === r.name);
      const clusters = [...new Set(items.map((d) => d.cluster).filter((c) => c))];
      // A cluster is ready for a GitRepo when every bundle of the GitRepo on it is Ready.
      const ready = clusters.filter((c) => items.every((d) => d.cluster !== c || d.state === "Ready")).length;
      const commit = state.sources.get(r.name)?.commit ?? "";
      return { gitRepo: r.name, commit, ...(r.helmOp ? { chartVersion: true } : {}), ...rollUp(items, clusters.length, ready) };
    });
  const clusters = [...state.config.clusters]
    .sort((a, b) => compare(a.name, b.name))
    .map((c): ClusterStatus => {
      const items = deployments.filter((d) => d.cluster === c.name);
      const r = rollUp(items, items.length, items.filter((d) => d.state === "Ready").length);
      const agent = context.agents?.[c.name];
      return {
        cluster: c.name,
        state: unreachable.has(c.name) ? "Offline" : r.state,
        readyBundles: r.readyClusters,
        desiredReadyBundles: r.desiredReadyClusters,
        labels: { ...c.labels },
        groups: facts.groups.get(c.name) ?? [],
        ...(agent ? { agent: { image: agent.image, configHash: agent.configHash, pinned: agent.pinned } } : {}),
        ...(context.probed ? { reachable: !unreachable.has(c.name) } : {}),
        ...(unreachable.has(c.name) ? { unreachableReason: unreachable.get(c.name) } : {}),
        ...(context.offline?.has(c.name) ? { offline: context.offline.get(c.name) } : {}),
        ...(c.paused ? { paused: { ...c.paused, message: context.pausedWords?.(c.name, c.paused) ?? `paused: ${c.paused.reason}` } } : {}),
      };
    });
  const leaving = [...facts.leaving.values()].map(({ departure: d, text }): LeavingPair => ({
    gitRepo: d.gitRepo,
    bundle: d.bundle,
    cluster: d.cluster,
    code: d.code,
    reason: text.replaceAll("`", ""),
  }));
  return { stack, deployments, bundles, gitRepos, clusters, ...(leaving.length ? { leaving } : {}), ...(context.takenAt ? { takenAt: context.takenAt } : {}) };
}

/** A pair's state with its condition, as the table, the page and the chat messages say it: "NotReady (Offline)". */
export function stateWords(d: { state: string; condition?: string | null }): string {
  return d.condition ? `${d.state} (${d.condition})` : d.state;
}

/** What a cluster row says beside its state: Offline since when, paused by whom. */
export function clusterNote(c: ClusterStatus): string {
  return [c.offline ? offlineWords(c.offline) : "", c.paused?.message ?? ""].filter(Boolean).join("; ");
}

/** A pair of an Offline cluster: NotReady, with when it was last observed and what it showed then. */
function notObserved(key: string, why: string, context: StatusContext, offline: Offline | undefined) {
  const last = context.lastStates?.[key]?.state;
  return {
    state: "NotReady" as const,
    condition: "Offline" as const,
    message: `not observed now${last ? ` (last observed ${last})` : ""}: cluster unreachable: ${why}`,
    ...(offline?.lastSeen ? { notObservedSince: offline.lastSeen } : {}),
    ...(last ? { lastObservedState: last } : {}),
  };
}

/** Objects the preview would touch although the deploymentId is the applied one: hand edits or deletions. */
function driftOf(d: DeploymentSteps): string[] {
  const verb: Record<string, string> = { create: "missing", update: "modified", replace: "modified", delete: "extra" };
  return d.steps
    .filter((s) => verb[s.op])
    .map((s) => `${verb[s.op]} ${kindOf(s)} ${objectName(s)}${s.op !== "create" && s.diffs.length ? ` (${s.diffs.join(", ")})` : ""}`)
    .sort();
}

function kindOf(s: Step): string {
  return s.type.slice(s.type.lastIndexOf(":") + 1);
}

/** "<cluster>/<bundle>/<group>:<Kind>:<ns>:<name>" resource names end in the object's namespace and name. */
function objectName(s: Step): string {
  const parts = nameOfUrn(s.urn).split(":");
  return parts.length >= 4 ? `${parts[parts.length - 2] === "_" ? "" : `${parts[parts.length - 2]}/`}${parts[parts.length - 1]}` : nameOfUrn(s.urn);
}

export function formatStatusTable(r: StatusReport): string {
  const rows: string[][] = [["GITREPO", "BUNDLE", "CLUSTER", "STATE", "READY", "MESSAGE"]];
  for (const g of r.gitRepos) {
    rows.push([
      g.gitRepo,
      "",
      "",
      g.state,
      `${g.readyClusters}/${g.desiredReadyClusters}`,
      g.chartVersion ? `version ${g.commit}` : `commit ${g.commit.slice(0, 12)}`,
    ]);
    for (const b of r.bundles.filter((x) => x.gitRepo === g.gitRepo)) {
      rows.push(["", b.bundle, "", b.state, `${b.readyClusters}/${b.desiredReadyClusters}`, ""]);
      for (const d of r.deployments.filter((x) => x.gitRepo === g.gitRepo && x.bundle === b.bundle))
        rows.push(["", "", d.cluster, stateWords(d), "", d.message]);
    }
  }
  rows.push([]);
  rows.push(["CLUSTER", "", "", "STATE", "BUNDLES", ""]);
  for (const c of r.clusters) rows.push([c.cluster, "", "", c.state, `${c.readyBundles}/${c.desiredReadyBundles}`, clusterNote(c)]);
  if (r.lastRun || r.pinned) rows.push([]);
  if (r.lastRun) rows.push([`last run ${r.lastRun.id} (${r.lastRun.kind}${r.lastRun.ok ? "" : ", some pairs failed"}) at ${r.lastRun.at}`]);
  if (r.pinned) rows.push([`pinned: ${r.pinned.message}`]);
  if (r.leaving?.length) {
    rows.push([], ["LEAVING", "BUNDLE", "CLUSTER", "", "", "WHY"]);
    for (const l of r.leaving) rows.push([l.gitRepo, l.bundle, l.cluster, "", "", l.reason]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => (row[i] ?? "").length)));
  return (
    rows
      .map((row) =>
        row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i])))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
}

/**
 * A rolloutStrategy that stopped (core/targeting/rollout.ts): the clusters waiting behind a partition
 * where the bundle is not Ready say so, as Fleet's bundle status shows a paused rollout.
 */
function pausedRollouts(facts: ReportFacts, deployments: DeploymentStatus[]): void {
  const of = new Map(deployments.filter((d) => d.cluster).map((d) => [`${d.gitRepo}/${d.bundle}/${d.cluster}`, d]));
  const at = (p: { gitRepo: string; bundle: string; cluster: string }) => of.get(`${p.gitRepo}/${p.bundle}/${p.cluster}`);
  // Stopped by an update that failed there or by clusters not ready, not merely waiting for the next `up`.
  for (const hold of facts.heldRollouts((p) => at(p)?.state === "ErrApplied" || at(p)?.state === "NotReady")) {
    for (const cluster of hold.held) {
      const d = at({ ...hold, cluster });
      if (d && d.state !== "Ready") d.message = `${hold.message}; ${d.message}`;
    }
  }
}
