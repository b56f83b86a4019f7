/**
 * The operations on one environment's stack as a typed library (what scripts/fleet.ts and users' own
 * scripts call): preview with a pull-request summary, up and destroy with one deploy event per real
 * deploy, refresh. Each runs the real engine through openStack and attributes its steps to bundle
 * deployments and agents (steps.ts).
 */
import { EngineEvent, OutputMap, Stack } from "@pulumi/pulumi/automation";
import { BUNDLE_DEPLOYMENT_TYPE, ClusterAccess } from "../core/desired/types";
import { DeploymentRecord, deploymentRecord, pairFailures } from "../core/desired/records";
import { CLUSTER_SETUP_STATES_OUTPUT, DEPLOYMENT_STATES_OUTPUT, DEPLOYMENTS_OUTPUT } from "../core/desired/previous";
import { deploymentKey, legacyKey, parseDeploymentKey, qualifyKeys } from "../core/model/keys";
import { configFromValues, FleetState } from "../core/plan/pipeline";
import { clustersOutsideWindowsAt } from "../core/targeting/schedule-windows";
import { DeployEvent, deployEvents } from "./reports/deploy-events";
import { Prune, prunesOf } from "./reports/preview-report";
import { renderSummaryMarkdown } from "./reports/pr-summary";
import { withoutStackTraces } from "./engine/stack-traces";
import { StackConfig } from "../core/config/stack";
import { unreachableClusters } from "./clusters/reachability";
import { resolveBackend } from "./engine/backend";
import { phase } from "./engine/timings";
import { FailedUpStore, failedUpStore } from "./engine/failed-up-store";
import { JournalStore, journalStore, stateIdentities, writerId } from "./engine/journal-store";
import { DeployedBundle, DeployedObject, JournalHooks, readObjects } from "../core/desired/facts";
import { DeploymentFailure, describeFailures } from "../core/plan/failures";
import { applied, PairReport } from "../core/model/pair";
import { rolloutHoldMessages } from "../core/targeting/rollout-hold";
import { markRetained, readState, StackState } from "./engine/deployed-objects";
import { historyMark, startEarly } from "./engine/early-desired";
import { DeployOptions, EarlyDesired } from "../core/desired/options";
import { settleEarlier } from "../core/desired/journal";
import { PROJECT_NAME } from "./engine/stack";
import { stackLockStore } from "./engine/own-locks";
import { ensureKubernetesProvider, needsKubernetesProvider } from "./engine/toolchain";
import { describeHolder, leaseHolder, leftoverProof, lockHolders, removeLocks, StackLockedError, withStackLock } from "./engine/locks";
import { liveLease, stackLeaseStore } from "./engine/stack-lease";
import { provenGone } from "../core/base/process-identity";
import { isRenderMode, openStack, programErrorOf, StackOptions, upWithoutReadBack } from "./engine/stack";
import { engineFailureText, worded } from "./reports/error-report";
import { AgentInfo, computeStatus, StatusReport } from "./reports/status";
import { nonReadyByDeployment } from "./engine/live-readiness";
import { ReportFacts, reportFacts } from "../core/desired/report-facts";
import { clusterOfUrn, GroupedSteps, groupSteps } from "./engine/steps";
import { StepRecorder } from "./engine/step-recorder";
import { stopSignal, throwIfStopped } from "../core/base/stop-signal";
import { notifyAfterStatus, notifyAfterUp } from "./notify/notify";
import { RunFacts, withMetrics } from "./metrics/report";
import { pairsAfterUp, pairsOfStatus } from "./metrics/pairs";
import type { PairOutcome } from "./reports/run-summary";
import { pairOutcomes } from "./engine/pair-outcomes";
import { ClustersUnreachableError } from "./reports/exit-codes";

/** The records by deployment key; an earlier version's keys, without the GitRepo, are qualified with their record's. */
function deploymentsOutput(outputs: OutputMap): Record<string, DeploymentRecord> {
  return qualifyKeys((outputs[DEPLOYMENTS_OUTPUT]?.value ?? {}) as Record<string, DeploymentRecord>, (_key, r) => r?.gitRepo);
}

/** Each BundleDeployment's state as its provider reported it (components/fleet.ts deploymentStates). */
function statesOutput(outputs: OutputMap): Record<string, PairReport> {
  return (outputs[DEPLOYMENT_STATES_OUTPUT]?.value ?? {}) as Record<string, PairReport>;
}

/** Each cluster whose setup (its namespaces and agent, core/desired/setup.ts) did not reach Ready, with the provider's words. */
function setupFailures(outputs: OutputMap): string[] {
  const states = (outputs[CLUSTER_SETUP_STATES_OUTPUT]?.value ?? {}) as Record<string, PairReport>;
  return Object.entries(states)
    .filter(([, r]) => !applied(r.state))
    .map(([cluster, r]) => `cluster ${cluster}: ${r.state}: ${r.messages.length ? r.messages.join("; ") : "no message"}`)
    .sort();
}

/** Each cluster's agent image and config hash as the last update deployed them (`summary.agents`). */
function agentsOutput(outputs: OutputMap): Record<string, AgentInfo> {
  return (outputs.summary?.value?.agents ?? {}) as Record<string, AgentInfo>;
}

export interface OperationOptions extends StackOptions {
  /** The engine's progress output, as it comes (default: none). */
  onOutput?: (text: string) => void;
  /** Fail if the operation would change anything (a CI drift gate). */
  expectNoChanges?: boolean;
  /** Refresh the state from the clusters first (drift shows as changes). */
  refresh?: boolean;
  /**
   * up: keep going when a resource fails (the engine's continue-on-error). Default false: when a
   * resource with dependents fails (a rollout's canary, a dependsOn, a CRD), the program cannot register
   * the dependents, and the engine with continue-on-error then deleted them as if they had left the
   * plan (seen with pulumi v3.259.0). Unreachable clusters are left out before the engine runs, and
   * broken bundles fail alone before it, so what stops an update here is an apply that failed.
   * destroy keeps going (default true): it registers nothing.
   */
  continueOnError?: boolean;
  /**
   * Write the state once at the end instead of after every step (PULUMI_SKIP_CHECKPOINTS): the default
   * wherever the crash journal can be kept beside the state (file and PostgreSQL backends; always for
   * destroy and refresh, which create nothing), since a checkpoint per step rewrites the whole state
   * and so grows with the square of the stack (BENCHMARKS.md). If the process dies mid-update, the next
   * `up` re-applies what the state missed and the journal sweeps what nothing owns any more
   * (core/journal.ts). false: the engine's checkpoint after every step.
   */
  skipCheckpoints?: boolean;
  /** Another update holds the stack's lock: wait for it instead of failing at once. */
  waitLock?: boolean;
  /** Remove the stack's lock whoever holds it (the user checked that its holder is gone). */
  forceUnlock?: boolean;
  /** Warnings that must reach the user even when the engine output is not streamed (default: stderr). */
  onWarning?: (message: string) => void;
  /** Every engine event of the operation, as it comes (e.g. a progress display, automation/reports/progress.ts). */
  onEvent?: (event: EngineEvent) => void;
  /** The clusters found unreachable before the engine runs (cluster -> why), left out of the operation. */
  onUnreachable?: (clusters: ReadonlyMap<string, string>) => void;
  /** Show the stack's outputs in the engine's output (default: suppressed, they are thousands of lines at scale). */
  showOutputs?: boolean;
}

export interface OperationResult {
  stack: string;
  /** The engine's counts per operation kind ("create", "update", "same", ...). */
  changes: Record<string, number>;
  groups: GroupedSteps;
  /** The stack's deployments output before the operation. */
  before: Record<string, DeploymentRecord>;
  durationMs: number;
}

export interface PreviewResult extends OperationResult {
  /** The plan the program ran. */
  state: FleetState;
  /** What core decided of the plan for the reports (core/desired/report-facts.ts). */
  facts: ReportFacts;
  prunes: Prune[];
  summaryMarkdown: string;
  /** Clusters left out because they did not answer (cluster -> reason). */
  unreachable: Map<string, string>;
  /** When the preview finished (ISO 8601), for the preview page. */
  takenAt: string;
  /** Bundle deployments that fail (each keeps what it last deployed): the preview fails, after showing everything. */
  failures: DeploymentFailure[];
  /** Bundle deployments the update would hold, not fail (a maintenance window, --partition). */
  held: DeploymentFailure[];
  /** Each pair once, with what would happen to it (automation/reports/run-summary.ts tabulates them). */
  outcomes: PairOutcome[];
}

export interface UpResult extends OperationResult {
  /** One per bundle deployment whose objects changed; empty for a no-op. */
  events: DeployEvent[];
  /** Bundle deployments held, not failed (a maintenance window, --partition): each kept what it had. */
  held: DeploymentFailure[];
  /** Each pair once, with what happened to it (automation/reports/run-summary.ts tabulates them). */
  outcomes: PairOutcome[];
  /** The stack's outputs the update wrote (secret ones as "[secret]"); up only. */
  outputs?: Record<string, unknown>;
}

/** An operation failed; what did change before the failure is still reported. */
export class OperationError extends Error {
  constructor(
    message: string,
    readonly events: DeployEvent[],
    readonly groups: GroupedSteps,
    readonly cause?: Error,
    /** Each pair of the plan once, with what happened to it, where the plan was known. */
    readonly outcomes: PairOutcome[] = [],
  ) {
    super(message);
  }
}

/** An update that deployed everything but bundles that failed alone (core/desired/failures.ts); each kept what it had. */
export class BundlesFailedError extends OperationError {
  constructor(
    message: string,
    events: DeployEvent[],
    groups: GroupedSteps,
    readonly failures: DeploymentFailure[],
    outcomes: PairOutcome[],
  ) {
    super(message, events, groups, undefined, outcomes);
  }
}

interface Session {
  stack: Stack;
  /** The stack's configuration, read once (with the state when the operation probes clusters). */
  config: () => Promise<StackConfig>;
  /** Runs an engine command that takes the stack lock (locks.ts). */
  locked: <T>(run: () => Promise<T>) => Promise<T>;
  recorder: StepRecorder;
  before: Record<string, DeploymentRecord>;
  /** The stack's `summary.agents` output before the operation. */
  agentsBefore: Record<string, AgentInfo>;
  planned: () => FleetState | undefined;
  renderMode: boolean;
  /** Clusters whose API server did not answer (cluster -> reason), left out of this operation. */
  unreachable: Map<string, string>;
  /** URNs of the unreachable clusters' resources in the state: the engine's exclude list. */
  excluded: string[];
  started: number;
  /** After an update the engine finished: its crash journal entry is no longer needed (core/journal.ts). */
  settleJournal: () => Promise<void>;
  /** The stack's crash journal, where the backend keeps one. */
  store?: JournalStore;
  /** An earlier version's per-object resources this operation moves into their BundleDeployments. */
  moving: Set<string>;
  /** The state as the operation found it, before taking the stack's lock (readState). */
  state: StackState;
}

/**
 * Whether the engine writes the state only at the end: the caller's choice, else yes for destroy and
 * refresh (they create nothing a crash could orphan) and for up where the crash journal can be kept.
 */
function skipsCheckpoints(op: "up" | "destroy" | "refresh" | "read", options: OperationOptions, store: JournalStore | undefined): boolean {
  if (op === "read") return false; // preview and status write no state
  return options.skipCheckpoints ?? (op !== "up" || store !== undefined);
}

async function open(options: OperationOptions, op: "up" | "destroy" | "refresh" | "read" = "read", runsProgram = false): Promise<Session> {
  try {
    return await openSession(options, op, runsProgram);
  } catch (err) {
    throw worded(err, `stack ${options.stack}`);
  }
}

async function openSession(options: OperationOptions, op: "up" | "destroy" | "refresh" | "read", runsProgram: boolean): Promise<Session> {
  phase("operation called");
  let planned: FleetState | undefined;
  let unreachable = new Map<string, string>();
  const backend = resolveBackend(options);
  const store = journalStore(backend, PROJECT_NAME, options.stack);
  const skip = skipsCheckpoints(op, options, store);
  if (op === "up" && skip && !store) {
    warnerOf(options)(
      `warning: stack ${options.stack}: the state is written only at the end and this backend keeps no crash journal: ` +
        'if this update is killed, objects it created may be left on the clusters owned by nothing (docs/state-and-recovery.md, "Crash journal")',
    );
  }
  let stack: Stack | undefined;
  let journalKey: string | undefined;
  let deployed: Map<string, DeployedBundle> | undefined;
  let legacySetups: Map<string, DeployedObject[]> | undefined;
  let access: Record<string, ClusterAccess> | undefined;
  const journal: JournalHooks | undefined =
    op === "up" && skip && store
      ? {
          list: () => store.list(),
          add: (e) => store.add(e),
          remove: (keys) => store.remove(keys),
          stateIdentities: async () => stateIdentities((await stack!.exportStack()).deployment),
          writer: writerId(),
          onRecorded: (key) => {
            journalKey = key;
          },
          warn: (m) => warnerOf(options)(`warning: stack ${options.stack}: ${m}`),
        }
      : undefined;
  let early: (() => EarlyDesired | undefined) | undefined;
  const deploy: DeployOptions = {
    ...options.deploy,
    onPlanned: (s) => {
      planned = s;
      options.deploy?.onPlanned?.(s);
    },
    onDesired: (d) => {
      planned = d.fleet;
      options.deploy?.onDesired?.(d);
    },
    leftOut: () => new Set([...unreachable.keys(), ...(options.deploy?.leftOut?.() ?? [])]),
    correctsDrift: true,
    journal,
    deployed: () => deployed,
    legacySetups: () => legacySetups,
    carriedAccess: () => access,
    early: () => early?.(),
  };
  stack = await openStack({ ...options, env: { ...options.env, ...(skip ? { PULUMI_SKIP_CHECKPOINTS: "true" } : {}) }, deploy });
  phase("workspace and stack selected");
  const markNow = () => historyMark(backend.fileDir, options.stack);
  const mark = runsProgram ? markNow() : undefined;
  const renderMode = isRenderMode(options);
  // The stack's config (its clusters, to probe) is read beside the state: two CLI calls at once.
  let config = options.config || !renderMode ? configOf(stack, options) : undefined;
  config?.catch(() => undefined); // awaited below; a failure is reported there
  const clusterNames = async (of: Promise<StackConfig>) => new Set((await of).clusters.map((c) => c.name));
  // What the state holds, for the deployments this run leaves as they are (core/desired/state.ts
  // deployedAsBefore), and the outputs the last update left: one read of the state.
  const state = await readState(stack, async () => (config ? clusterNames(config) : undefined));
  phase("state read");
  if (needsKubernetesProvider(state.resources.map((r) => r.type))) ensureKubernetesProvider(options.stack);
  const outputs = state.outputs;
  const before = deploymentsOutput(outputs);
  let legacy = state.legacy;
  if (op === "up" || op === "read") ({ deployed, legacySetups, access } = state);
  let excluded: string[] = [];
  if (!renderMode) {
    unreachable = await unreachableClusters((await config!).clusters);
    if (unreachable.size) excluded = state.resources.map((r) => r.urn).filter((urn) => unreachable.has(clusterOfUrn(urn) ?? ""));
    if (unreachable.size) options.onUnreachable?.(unreachable);
  }
  phase("clusters probed");
  // The program's desired state, computed while the CLI starts (automation/engine/early-desired.ts).
  if (mark && config && options.deploy?.previous === undefined) early = startEarly({ config: await config, state, deploy, mark, markNow });
  const warn = warnerOf(options);
  const leases = stackLeaseStore(backend, PROJECT_NAME, options.stack);
  const locks = stackLockStore(backend, PROJECT_NAME, options.stack);
  const policy = { stack: options.stack, waitLock: options.waitLock, forceUnlock: options.forceUnlock, warn, leases, locks };
  const locked = <T>(run: () => Promise<T>) => withStackLock(stack, policy, run);
  // An earlier version's per-object resources on clusters still configured move into their
  // BundleDeployments (deployed-objects.ts markRetained); on a cluster no longer configured they go
  // with their old provider, as before.
  if (legacy.length) {
    const configured = await clusterNames(config ?? configOf(stack, options));
    legacy = legacy.filter((urn) => configured.has(clusterOfUrn(urn) ?? ""));
  }
  return {
    stack,
    config: () => (config ??= configOf(stack, options)),
    locked,
    recorder: new StepRecorder(options.onEvent),
    before,
    agentsBefore: agentsOutput(outputs),
    planned: () => planned,
    renderMode,
    unreachable,
    excluded,
    started: Date.now(),
    moving: new Set(legacy),
    state,
    settleJournal: async () => {
      if (journalKey && store) await store.remove([journalKey]);
    },
    store,
  };
}

/** Where an operation's warnings go: the caller's handler, else stderr. */
function warnerOf(options: OperationOptions): (message: string) => void {
  return options.onWarning ?? ((m: string) => console.error(m));
}

/** The URN of the stack's root resource in an exported deployment, if it has one yet. */
function stackRootUrn(deployment: { resources?: { type: string; urn: string }[] } | undefined): string | undefined {
  return deployment?.resources?.find((r) => r.type === "pulumi:pulumi:Stack")?.urn;
}

/**
 * Operations a killed update left in flight (recorded in the state when checkpoints are on) are
 * resolved before anything else runs, never dropped silently: each is named in a warning; a pending
 * create (the object may or may not exist) is cleared, and the next update creates it again, which
 * the Kubernetes provider's server-side apply turns into an upsert of the same object; a pending
 * update or delete is settled by refreshing that resource from its cluster.
 */
async function resolvePendingOperations(s: Session, options: OperationOptions): Promise<void> {
  const pending = s.state.pending;
  if (!pending.length) return;
  const warn = warnerOf(options);
  warn(
    `warning: stack ${options.stack}: an earlier update was interrupted with ${pending.length} operation(s) in flight; resolving them first:\n` +
      pending
        .map(
          (p) =>
            `  ${p.type} ${p.resource.urn}: ${p.type === "creating" ? "cleared; this update creates it again (an existing object is adopted)" : "refreshed from its cluster"}`,
        )
        .join("\n"),
  );
  const inState = new Set<string>(s.state.resources.map((r) => r.urn));
  const root = stackRootUrn(s.state);
  const targets = [...new Set(pending.filter((p) => p.type !== "creating" && inState.has(p.resource.urn)).map((p) => p.resource.urn))];
  await s.locked(() =>
    s.stack.refresh({
      signal: stopSignal,
      clearPendingCreates: true,
      target: root ? [root, ...targets] : undefined,
      exclude: s.excluded,
      onOutput: options.onOutput,
    }),
  );
}

/**
 * destroy runs no program, so the crash journal is swept here: once the state is empty, everything an
 * interrupted update recorded is owned by nothing (core/journal.ts; kept objects are never swept).
 */
async function sweepAfterDestroy(s: Session, options: OperationOptions): Promise<void> {
  if (!s.store || s.renderMode) return;
  const entries = await s.store.list();
  if (!entries.length) return;
  const clusters = (await s.config()).clusters;
  const warn = warnerOf(options);
  // The state is empty after a destroy: everything recorded on a reachable cluster is a candidate.
  await settleEarlier(
    entries,
    s.store,
    writerId(),
    (m) => warn(`warning: stack ${options.stack}: ${m}`),
    {
      inState: new Set(),
      planned: new Set(),
      readable: (c) => clusters.some((x) => x.name === c) && !s.unreachable.has(c),
      clusters,
    },
    readObjects,
  );
}

/** The configuration the program will see: the caller's, else the stack's (secrets decrypted by the CLI). */
async function configOf(stack: Stack, options: OperationOptions): Promise<StackConfig> {
  if (options.config) return options.config;
  const all = await stack.getAllConfig();
  return configFromValues((key) => all[key]?.value, options.stack);
}

/** "N bundle deployment(s) failed: ..." with one line per cause (core/desired/failures.ts). */
export function failuresNote(failed: DeploymentFailure[]): string {
  return `${failed.length} bundle deployment(s) failed, each alone:\n${describeFailures(failed)
    .map((l) => `  ${l}`)
    .join("\n")}`;
}

/** "N bundle deployment(s) held ..." with one line per cause: not failures, each keeps what it has. */
export function heldNote(held: DeploymentFailure[]): string {
  return `${held.length} bundle deployment(s) held, each keeping what it has:\n${describeFailures(held)
    .map((l) => `  ${l}`)
    .join("\n")}`;
}

function unreachableNote(s: Session): string {
  return [...s.unreachable].map(([c, why]) => `cluster ${c} is unreachable (${why})`).join("; ");
}

function base(options: OperationOptions, s: Session, changes: Record<string, number> | undefined): OperationResult {
  return {
    stack: options.stack,
    changes: changes ?? {},
    groups: groupSteps(s.recorder.steps, s.recorder.failedUrns, s.moving),
    before: s.before,
    durationMs: Date.now() - s.started,
  };
}

/** What a stack of an earlier version's first `up` of this version does besides what the preview lists. */
function movingNote(s: Session): string | undefined {
  if (!s.moving.size) return undefined;
  const bundleObjects = [...s.moving].filter((urn) => urn.includes(`${BUNDLE_DEPLOYMENT_TYPE}$`)).length;
  const setups = s.moving.size - bundleObjects;
  const moves = [
    ...(bundleObjects ? [`those ${bundleObjects} resource(s) into one BundleDeployment per bundle and cluster`] : []),
    ...(setups ? [`the ${setups} resource(s) of the clusters' agents and namespaces into one ClusterSetup per cluster`] : []),
  ];
  return (
    `this stack was deployed by an earlier version, one engine resource per Kubernetes object: the next \`up\` moves ${moves.join(", and ")}, ` +
    "in the state only: no object is created, changed or deleted for it, and the preview lists only what changes besides"
  );
}

/** What an operation's metrics read of its session (automation/metrics/report.ts). */
function watched(m: RunFacts, s: Session): Session {
  m.config = async () => (s.planned()?.config ?? (await s.config())).metrics;
  m.engine = () => s.recorder.changes;
  return s;
}

export async function preview(options: OperationOptions): Promise<PreviewResult> {
  return withMetrics("preview", options, (m) => previewOnce(options, m));
}

async function previewOnce(options: OperationOptions, m: RunFacts): Promise<PreviewResult> {
  const s = watched(m, await open(options, "read", true));
  throwIfStopped();
  const result = await withoutStackTraces(() =>
    s.stack.preview({
      signal: stopSignal,
      onOutput: options.onOutput,
      onEvent: s.recorder.onEvent,
      suppressOutputs: !options.showOutputs,
      expectNoChanges: options.expectNoChanges,
      refresh: options.refresh,
      diff: true,
      exclude: s.excluded,
    }),
  ).catch((err) => {
    throw readFailure("preview", options, s, err);
  });
  const state = s.planned();
  if (!state) throw new Error(`preview of stack ${options.stack} ran no plan`);
  const r = base(options, s, result.changeSummary);
  const report = { stack: options.stack, groups: r.groups, before: s.before, state, unreachable: s.unreachable, facts: reportFacts(state, s.before) };
  const notices = [await journalNotice(options), movingNote(s)].filter((n): n is string => !!n);
  for (const n of notices) warnerOf(options)(`warning: stack ${options.stack}: ${n}`);
  const summaryMarkdown = notices.map((n) => `> **Warning:** ${n}\n\n`).join("") + renderSummaryMarkdown(report);
  return {
    ...r,
    state,
    facts: report.facts,
    prunes: prunesOf(report),
    summaryMarkdown,
    unreachable: s.unreachable,
    takenAt: new Date().toISOString(),
    failures: state.failures.list().filter((f) => !f.held),
    held: state.failures.list().filter((f) => f.held),
    outcomes: pairOutcomes({
      entries: state.plan.entries,
      failures: state.failures.list().filter((f) => !f.held),
      held: state.failures.list().filter((f) => f.held),
      groups: r.groups,
    }),
  };
}

/**
 * The crash journal's sweep happens in the next `up`, outside the engine's plan, so a preview (a pull
 * request's) says when there is something for it to look at.
 */
async function journalNotice(options: OperationOptions): Promise<string | undefined> {
  if (isRenderMode(options)) return undefined;
  const entries = (await journalStore(resolveBackend(options), PROJECT_NAME, options.stack)?.list()) ?? [];
  if (!entries.length) return undefined;
  const objects = entries.reduce((n, e) => n + e.entry.objects.length, 0);
  return (
    `the crash journal holds ${entries.length} update(s) that did not complete (${entries.map((e) => e.entry.writer).join("; ")}), ` +
    `${objects} object(s) in all: the next \`up\` deletes those that are then neither in the state nor in the plan and still carry their bundle's labels; ` +
    "those deletions are not part of this preview"
  );
}

/**
 * fleet.yaml correctDrift.enabled, mapped onto the engine: Fleet's agent re-applies a drifted object
 * of such a bundle on its own; here `up` first refreshes the objects of the deployments that have it
 * (as recorded by the last update), so the update that follows diffs them against the cluster and
 * re-applies what was edited by hand. Other bundles' drift is left alone, and reported by `status`,
 * until `up --refresh`. A cluster outside its maintenance window is not refreshed: Fleet's agent
 * clears drift correction off schedule, so a hand edit there stays until the window opens.
 */
async function correctDrift(s: Session, options: OperationOptions): Promise<void> {
  if (options.refresh) return; // everything is refreshed anyway
  const drifting = Object.entries(s.before).filter(([, r]) => r.correctDrift);
  if (!drifting.length) return;
  const outside = await clustersOutsideWindowsAt(await s.config(), options.deploy?.now ?? new Date());
  // A BundleDeployment an earlier version registered is still named by its legacy key until this update renames it.
  const keys = new Set(
    drifting.flatMap(([key]) => {
      const pair = parseDeploymentKey(key);
      return outside.has(pair.cluster) ? [] : [key, legacyKey(pair)];
    }),
  );
  if (!keys.size) return;
  const excluded = new Set(s.excluded);
  const targets = s.state.resources
    .filter((r) => r.type === BUNDLE_DEPLOYMENT_TYPE && keys.has(r.urn.split("::").pop()!) && !excluded.has(r.urn))
    .map((r) => r.urn);
  if (!targets.length) return;
  const root = stackRootUrn(s.state);
  await s.locked(() => s.stack.refresh({ signal: stopSignal, target: root ? [root, ...targets] : targets, onOutput: options.onOutput }));
}

export async function up(options: OperationOptions): Promise<UpResult> {
  return withMetrics("up", options, (m) => upOnce(options, m));
}

async function upOnce(options: OperationOptions, m: RunFacts): Promise<UpResult> {
  const s = watched(m, await open(options, "up", true));
  try {
    await resolvePendingOperations(s, options);
    await s.locked(() => markRetained(s.stack, [...s.moving]));
    await correctDrift(s, options);
    const outputs = await withoutStackTraces(() =>
      s.locked(() =>
        upWithoutReadBack(s.stack, {
          signal: stopSignal,
          onOutput: options.onOutput,
          onEvent: s.recorder.onEvent,
          suppressOutputs: !options.showOutputs,
          expectNoChanges: options.expectNoChanges,
          refresh: options.refresh,
          continueOnError: options.continueOnError ?? false,
          exclude: s.excluded,
        }),
      ),
    );
    phase("engine finished");
    m.pairs = pairsAfterUp({
      entries: s.planned()?.plan.entries ?? [],
      failures: s.planned()?.failures.list() ?? [],
      states: statesOutput(outputs),
      records: deploymentsOutput(outputs),
      unreachable: s.unreachable,
    });
    await s.settleJournal();
    const r = base(options, s, s.recorder.changes);
    if (s.unreachable.size)
      throw new ClustersUnreachableError(`${unreachableNote(s)}: it was left out of the update, the other clusters were updated`, s.unreachable);
    const after = deploymentsOutput(outputs);
    const events = deployEvents(r.groups, s.before, after);
    // Broken bundles and refused or unready pairs failed alone: everything else was deployed; the update
    // still fails, naming each.
    const all = s.planned()?.failures.list() ?? [];
    const held = all.filter((f) => f.held);
    const rendered = all.filter((f) => !f.held);
    const failedKeys = new Set(rendered.filter((f) => f.cluster).map(deploymentKey));
    const failed = [...rendered, ...pairFailures(statesOutput(outputs), after).filter((f) => !failedKeys.has(deploymentKey(f)))];
    const setups = setupFailures(outputs);
    const states = statesOutput(outputs);
    const outcomes = pairOutcomes({
      entries: s.planned()?.plan.entries ?? [],
      failures: failed,
      held,
      groups: r.groups,
      ready: (key) => states[key]?.state === "Ready",
    });
    await notifyAfterUp(
      { stack: options.stack, config: s.planned()?.config.notifications, backend: resolveBackend(options), warn: warnerOf(options) },
      { statesBefore: statesOutput(s.state.outputs), statesAfter: statesOutput(outputs), before: s.before, after, failures: rendered, deploys: events },
    );
    if (failed.length || setups.length) {
      const notes = [
        ...(setups.length ? [`${setups.length} cluster setup(s) (namespaces and agent) failed, each alone:\n${setups.map((x) => `  ${x}`).join("\n")}`] : []),
        ...(failed.length ? [failuresNote(failed)] : []),
      ];
      await failedUps(options).write({ failed: failed.filter((f) => f.cluster).map(deploymentKey), message: notes.join("\n") });
      // A rollout stops where a pair failed or is not ready; the clusters after it wait (WaitApplied).
      const stopping = failed.filter((f) => !f.reason.startsWith("WaitApplied"));
      const stops = rolloutHoldMessages(s.planned()?.rollouts?.values() ?? [], (b) =>
        stopping.filter((f) => f.gitRepo === b.gitRepo && f.bundle === b.bundle).map((f) => f.cluster),
      );
      throw new BundlesFailedError(
        `up of stack ${options.stack} deployed everything else, but ${stops.map((x) => `${x}\n`).join("")}${notes.join("\n")}` +
          (held.length ? `\n${heldNote(held)}` : ""),
        events,
        r.groups,
        failed,
        outcomes,
      );
    }
    await failedUps(options).clear();
    return { ...r, events, held, outcomes, outputs: Object.fromEntries(Object.entries(outputs).map(([k, o]) => [k, o.secret ? "[secret]" : o.value])) };
  } catch (err) {
    if (err instanceof StackLockedError) throw err; // nothing ran: no deployment failed
    if (err instanceof BundlesFailedError) throw err; // the engine succeeded; the failed bundles are recorded above
    const e = failure("up", options, s, err as Error);
    const onFailedCluster = (s.planned()?.plan.entries ?? []).filter((x) => e.groups.failedClusters.includes(x.cluster)).map(deploymentKey);
    const failed = [...new Set([...[...e.groups.deployments.values()].filter((d) => d.failed).map((d) => d.key), ...onFailedCluster])].sort();
    await failedUps(options).write({ failed, message: e.message });
    throw e;
  }
}

export async function destroy(options: OperationOptions): Promise<UpResult> {
  const s = await open(options, "destroy");
  try {
    await resolvePendingOperations(s, options);
    const result = await withoutStackTraces(() =>
      s.locked(() =>
        s.stack.destroy({ signal: stopSignal, onOutput: options.onOutput, onEvent: s.recorder.onEvent, continueOnError: options.continueOnError ?? true }),
      ),
    );
    await sweepAfterDestroy(s, options);
    const r = base(options, s, result.summary.resourceChanges);
    return { ...r, events: deployEvents(r.groups, s.before, {}), held: [], outcomes: [] };
  } catch (err) {
    if (err instanceof StackLockedError) throw err;
    throw failure("destroy", options, s, err as Error);
  }
}

export async function refresh(options: OperationOptions): Promise<OperationResult> {
  const s = await open(options, "refresh");
  await resolvePendingOperations(s, options);
  const result = await withoutStackTraces(() =>
    s.locked(() => s.stack.refresh({ signal: stopSignal, onOutput: options.onOutput, onEvent: s.recorder.onEvent, expectNoChanges: options.expectNoChanges })),
  ).catch((err) => {
    throw readFailure("refresh", options, s, err);
  });
  return base(options, s, result.summary.resourceChanges);
}

/**
 * Fleet's status of every planned bundle deployment: a refresh-preview reads the clusters (readiness,
 * drift) without changing anything; the last failed update (if any) marks its deployments ErrApplied.
 * In render mode there is no cluster to read: the states come from the records and the plan alone.
 */
export async function status(options: OperationOptions): Promise<StatusReport> {
  return withMetrics("status", options, (m) => statusOnce(options, m));
}

async function statusOnce(options: OperationOptions, m: RunFacts): Promise<StatusReport> {
  const s = watched(m, await open(options, "read", true));
  throwIfStopped();
  await withoutStackTraces(() =>
    s.stack.preview({ signal: stopSignal, onOutput: options.onOutput, onEvent: s.recorder.onEvent, refresh: !s.renderMode, exclude: s.excluded }),
  ).catch((err) => {
    throw readFailure("status", options, s, err);
  });
  const state = s.planned();
  if (!state) throw new Error(`status of stack ${options.stack}: the program ran no plan`);
  const failed = new Set<string>((await failedUps(options).read())?.failed ?? []);
  const groups = groupSteps(s.recorder.steps, s.recorder.failedUrns, s.moving);
  const report = computeStatus(options.stack, state, s.before, reportFacts(state, s.before), groups, failed, s.unreachable, {
    agents: s.agentsBefore,
    probed: !s.renderMode,
    takenAt: new Date().toISOString(),
    nonReady: s.renderMode ? undefined : await nonReadyByDeployment(groups, state.plan.entries),
  });
  await notifyAfterStatus(
    { stack: options.stack, config: state.config.notifications, backend: resolveBackend(options), warn: warnerOf(options) },
    report.deployments,
    s.before,
    statesOutput(s.state.outputs),
  );
  m.pairs = pairsOfStatus(report.deployments, s.before);
  return report;
}

/** Deployments whose last `up` failed, kept in the stack's backend until an `up` succeeds (for ErrApplied). */
function failedUps(options: OperationOptions): FailedUpStore {
  return failedUpStore(resolveBackend(options), PROJECT_NAME, options.stack);
}

/** An engine command of an operation that deploys nothing failed: worded, the CLI's output kept as the cause. */
function readFailure(op: string, options: OperationOptions, s: Session, err: unknown): unknown {
  return err instanceof StackLockedError ? err : worded(err, `${op} of stack ${options.stack} failed`, s.recorder.errors, programErrorOf(s.stack));
}

/** The deploys that did complete before the failure, with the plan's ids (the outputs were not written). */
function failure(op: string, options: OperationOptions, s: Session, err: Error): OperationError {
  const groups = groupSteps(s.recorder.steps, s.recorder.failedUrns, s.moving);
  groups.failedClusters = [...new Set([...groups.failedClusters, ...s.unreachable.keys()])].sort();
  const failed = [
    ...[...groups.deployments.values()].filter((d) => d.failed).map((d) => `bundle deployment ${d.key}`),
    ...[...groups.agents.values()].filter((a) => a.failed).map((a) => `agent on ${a.cluster}`),
  ].sort();
  const completed: GroupedSteps = {
    ...groups,
    deployments: new Map([...groups.deployments].filter(([, d]) => !d.failed && !groups.failedClusters.includes(d.cluster))),
  };
  const state = s.planned();
  const planned: Record<string, DeploymentRecord> = {};
  for (const e of state?.plan.entries ?? []) {
    planned[deploymentKey(e)] = deploymentRecord(e, state!.sources.get(e.gitRepo)?.commit ?? "", 0);
  }
  const where = groups.failedClusters.length ? ` on cluster${groups.failedClusters.length > 1 ? "s" : ""} ${groups.failedClusters.join(", ")}` : "";
  const alone = state?.failures?.list().filter((f) => !f.held) ?? [];
  const failedDeployments = [...groups.deployments.values()].filter((d) => d.failed);
  const stops = rolloutHoldMessages(state?.rollouts?.values() ?? [], (b) =>
    failedDeployments.filter((d) => d.gitRepo === b.gitRepo && d.bundle === b.bundle).map((d) => d.cluster),
  );
  const why = engineFailureText(err, s.recorder.errors, programErrorOf(s.stack));
  const message =
    `${op} of stack ${options.stack} failed${where}${failed.length ? ` (${failed.join(", ")})` : ""}:${stops.length || why.includes("\n") ? "\n" : " "}${stops.map((x) => `${x}\n`).join("")}${why}` +
    (alone.length ? `\nand ${failuresNote(alone)}` : "");
  const outcomes = pairOutcomes({
    entries: state?.plan.entries ?? [],
    failures: [...alone, ...failedDeployments.map((d) => ({ gitRepo: d.gitRepo, bundle: d.bundle, cluster: d.cluster, message: "", reason: "" }))],
    held: state?.failures?.list().filter((f) => f.held) ?? [],
    groups,
  });
  return new OperationError(message, deployEvents(completed, s.before, planned), groups, err, outcomes);
}

/**
 * `npm run cancel`: removes the stack's lock by hand. Only a lock a pulumi-fleet lease that is over
 * accounts for (engine/stack-lease.ts) is removed without forceUnlock, and none while a command holds
 * the stack's lease. Returns what was removed.
 */
export async function cancel(options: OperationOptions): Promise<string[]> {
  const s = await open(options);
  // Only a command that takes the lock reveals its holders: an empty refresh of the stack's root.
  const root = stackRootUrn(s.state);
  try {
    await s.stack.refresh({ target: root ? [root] : undefined, exclude: s.excluded });
    return [];
  } catch (err) {
    const holders = lockHolders((err as Error).message ?? "");
    if (!holders) throw err;
    const leases = stackLeaseStore(resolveBackend(options), PROJECT_NAME, options.stack);
    const book = await leases.read();
    const now = Date.now();
    const current = liveLease(book, now);
    const running = current && !provenGone(current.proc) ? current : undefined;
    // A holder proven gone here is over, as the next up would find it (engine/stack-lease.ts takeLease).
    const seen = current && !running ? { ...book!, current: { ...current, diedAt: now } } : book;
    const live = running ? [leaseHolder(running, leases.where), ...holders] : holders.filter((h) => !leftoverProof(h, seen, now));
    if (live.length && !options.forceUnlock) throw new StackLockedError(options.stack, live);
    await removeLocks(s.stack, holders);
    return holders.map(describeHolder);
  }
}
