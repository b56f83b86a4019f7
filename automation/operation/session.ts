/**
 * An operation's session: the stack opened, what it holds read once (state, outputs, config), the
 * clusters probed, and the program's options; every operation (preview.ts, up.ts, status.ts, ...) starts here.
 */
import { Stack } from "@pulumi/pulumi/automation";
import { Migration, migrationNote } from "../../core/migrate/migrate";
import { adoptionsFor } from "../engine/migrate-state";
import { migratedView } from "../engine/migrate-state";
import { DeploymentRecord } from "../../core/desired/records";
import type { DesiredState } from "../../core/desired/types";
import { configFromValues, FleetState } from "../../core/plan/pipeline";
import { ClusterConfig, StackConfig } from "../../core/config/stack";
import { unreachableClusters } from "../clusters/reachability";
import { observe, Offline, offlineOf, SeenRecord, seenStore, unreachableWithOffline } from "../clusters/observed";
import { Backend, resolveBackend } from "../engine/backend";
import { phase } from "../engine/timings";
import { JournalStore, journalStore, stateIdentities, writerId } from "../engine/journal-store";
import { JournalHooks } from "../../core/desired/facts";
import { providerConfigDecrypted, readState, StackState } from "../engine/deployed-objects";
import { historyMark, stillHolds } from "../engine/history-mark";
import { DesiredRun } from "./desired";
import { decidePruneOnly, pruneOnlyScope } from "./prune-only";
import { stackProviderName } from "../../core/desired/types";
import { programCodeHash } from "../engine/program-code";
import type { PruneOnly } from "../../core/desired/prune-only";
import { PROJECT_NAME } from "../engine/stack";
import { readStalled } from "./stalled";
import { stackLockStore } from "../engine/own-locks";
import { ensureKubernetesProvider, needsKubernetesProvider } from "../engine/toolchain";
import { withStackLock } from "../engine/locks";
import { pruneStackHistory, stackFolderStore, thenPruned } from "../engine/state-retention-store";
import { stackLeaseStore } from "../engine/stack-lease";
import { isRenderMode, openStack } from "../engine/stack";
import { registerMsOf, setProgram } from "../engine/inline-program";
import { worded } from "../reports/error-report";
import { AgentInfo } from "../reports/status";
import { groupSteps } from "../engine/steps";
import { StepRecorder } from "../engine/step-recorder";
import { RunFacts } from "../metrics/report";
import { stopSignal } from "../../core/base/stop-signal";
import { OperationOptions, OperationResult } from "./results";
import { computesEarly, driftRefreshed, EngineCommand, planDesired, planScope, planWrites } from "./plan";
import { agentsOutput, deploymentsOutput } from "./outputs";

export interface Session {
  stack: Stack;
  /** The stack's configuration, read once (with the state when the operation probes clusters). */
  config: () => Promise<StackConfig>;
  /** Runs an engine command that takes the stack lock (locks.ts). */
  locked: <T>(run: () => Promise<T>) => Promise<T>;
  recorder: StepRecorder;
  /** The records and outputs before: of the state the program's desired state was computed from (else as the operation found it). */
  readonly before: Record<string, DeploymentRecord>;
  readonly outputsBefore: StackState["outputs"];
  /** The stack's `summary.agents` output before the operation. */
  agentsBefore: Record<string, AgentInfo>;
  /** The plan of the desired state the program was given: as deployed once it is computed, the checked plan if it failed after. */
  planned: () => FleetState | undefined;
  /** The desired state the program was given, once computed. */
  desired: () => DesiredState | undefined;
  /** How long computing the desired state the program was given took, once it has (benchmarks). */
  computeMs: () => number | undefined;
  renderMode: boolean;
  /** Clusters whose API server did not answer (cluster -> reason, with since when it is Offline), left out of this operation. */
  unreachable: Map<string, string>;
  /** The unreachable clusters' Offline states: since when, last seen (clusters/observed.ts). */
  offline: ReadonlyMap<string, Offline>;
  /** The stack's record of when each cluster last answered, after this operation's probe; undefined in render mode. */
  seen?: SeenRecord;
  /** URNs of the unreachable clusters' resources in the state: the engine's exclude list. */
  excluded: string[];
  started: number;
  /** After an update the engine finished: its crash journal entry is no longer needed (core/journal.ts). */
  settleJournal: () => Promise<void>;
  /** The stack's crash journal, where the backend keeps one. */
  store?: JournalStore;
  /** An earlier version's per-object resources this operation moves into their BundleDeployments. */
  moving: Set<string>;
  /** The BundleDeployments the migration an `up` imported renamed (old URN -> new URN: core/migrate/renames.ts). */
  renames: ReadonlyMap<string, string>;
  /** The state's migration from an earlier version's layout (core/migrate), undefined for a current state. */
  migration?: Migration;
  /** The state as the operation found it, before taking the stack's lock (readState). */
  state: StackState;
  /** What a preview and an up give the engine alike: the stop, the output and events, the drift gate, the clusters left out. */
  changeRun: ChangeRun;
  /** The operation's result so far: its changes, its steps grouped, the records before, its duration. */
  result: (changes: Record<string, number> | undefined) => OperationResult;
  /**
   * An `up` that only removes pairs (prune-only.ts), decided from the early desired state: its engine
   * targets, handed to the program with it; undefined when the update runs in full.
   */
  pruneOnly: () => Promise<PruneOnly | undefined>;
  /** The decided prune-only update's targets, if the stack's history has not moved since: else the full update runs. */
  pruneOnlyTargets: () => string[] | undefined;
  /** Whether the engine ran the prune-only update (pruneOnlyTargets gave it targets, and the program did not refuse them). */
  pruneOnlyTaken: () => boolean;
  /** Whether the program refused a prune-only update because the stack changed after it was decided: the up runs again, in full. */
  pruneOnlyAbandoned: () => boolean;
}

export interface ChangeRun {
  signal: AbortSignal;
  onOutput?: (text: string) => void;
  onEvent: StepRecorder["onEvent"];
  suppressOutputs: boolean;
  expectNoChanges?: boolean;
  refresh?: boolean;
  exclude: string[];
}

export async function open(options: OperationOptions, op: EngineCommand = "read", runsProgram = false): Promise<Session> {
  try {
    return await openSession(options, op, runsProgram);
  } catch (err) {
    throw worded(err, `stack ${options.stack}`);
  }
}

async function openSession(options: OperationOptions, op: EngineCommand, runsProgram: boolean): Promise<Session> {
  phase("operation called");
  let unreachable = new Map<string, string>();
  let offline = new Map<string, Offline>();
  let seen: SeenRecord | undefined;
  const backend = resolveBackend(options);
  const store = journalStore(backend, PROJECT_NAME, options.stack);
  const writes = planWrites(op, options.stack, options.skipCheckpoints, store !== undefined);
  const warn = warnerOf(options);
  if (writes.warning) warn(writes.warning);
  let journalKey: string | undefined;
  const stack = await openStack({
    ...options,
    env: { ...options.env, ...(writes.skipCheckpoints ? { PULUMI_SKIP_CHECKPOINTS: "true" } : {}) },
    deploy: undefined,
  });
  phase("workspace and stack selected");
  const journal: JournalHooks | undefined =
    writes.journal && store
      ? {
          list: () => store.list(),
          add: (e) => store.add(e),
          remove: (keys) => store.remove(keys),
          stateIdentities: async () => stateIdentities((await stack.exportStack()).deployment),
          writer: writerId(),
          onRecorded: (key) => {
            journalKey = key;
          },
          warn: (m) => warn(`warning: stack ${options.stack}: ${m}`),
        }
      : undefined;
  const markNow = () => historyMark(backend.fileDir, options.stack);
  const mark = runsProgram ? markNow() : undefined;
  const renderMode = isRenderMode(options);
  // The stack's config (its clusters, to probe) is read beside the state: two CLI calls at once.
  let config = options.config || !renderMode ? configOf(stack, options) : undefined;
  config?.catch(() => undefined); // awaited below; a failure is reported there
  const readConfig = () => (config ??= configOf(stack, options));
  const clusterNames = async () => new Set((await readConfig()).clusters.map((c) => c.name));
  // What the state holds, for the deployments this run leaves as they are (core/desired/state.ts
  // deployedAsBefore), and the outputs the last update left: one read of the state.
  const state = await readState(stack, async () => (config ? clusterNames() : undefined), backend.fileDir);
  phase("state read");
  // An earlier version's layout: what the migration moves, decided in memory (the act: up.ts, under the lock).
  const { migration, state: view } = await migratedView(state, clusterNames);
  // The engine of an up sees the migrated state (unless a killed update's operations are resolved first,
  // on the state as it is: pending.ts): the Kubernetes provider only where the migration leaves it a resource.
  const engineSees = op === "up" && migration && !state.pending.length ? (migration.state.deployment?.resources ?? []) : state.resources;
  if (needsKubernetesProvider(engineSees)) await ensureKubernetesProvider(options.stack);
  if (!renderMode) {
    const clusters = (await config!).clusters;
    ({ unreachable, offline, seen } = await probedAndObserved(backend, options, clusters));
    if (unreachable.size) options.onUnreachable?.(unreachable);
  }
  phase("clusters probed");
  const leases = stackLeaseStore(backend, PROJECT_NAME, options.stack);
  const locks = stackLockStore(backend, PROJECT_NAME, options.stack);
  const policy = { stack: options.stack, waitLock: options.waitLock, forceUnlock: options.forceUnlock, warn, leases, locks };
  const { excluded } = planScope({ urns: engineSees.map((r) => r.urn), unreachable });
  // The desired state the program registers, computed by the operation from what it read (desired.ts).
  const deploy = { ...planDesired(options.deploy, unreachable), ...(runsProgram ? { stalled: await readStalled(options) } : {}) };
  // Computed from the state as the migration leaves it (in memory; an up imported it already), so core reads only the current layout.
  const runOf = async (read: StackState) => {
    const seen = await migratedView(read, clusterNames);
    return { run: new DesiredRun({ config: await readConfig(), state: seen.state, deploy, ...(journal ? { journal } : {}) }), namesInState: seen.namesInState };
  };
  // Started now, while the CLI starts, where the program can tell whether it still holds (a history mark)
  // and nothing this operation does first writes history (pending operations, a move, its own refresh).
  // The records before: of the state the program's desired state was computed from, once it was given one.
  const beforeOf = memoized((read: StackState) => deploymentsOutput(read.outputs));
  const writesFirst =
    op === "up" &&
    (state.pending.length > 0 || !!migration?.changed || driftRefreshed(beforeOf(state), options.refresh, options.run?.kind === "redeploy").length > 0);
  const early = computesEarly(runsProgram, mark, writesFirst) ? await runOf(state).catch(() => undefined) : undefined;
  let given: DesiredRun | undefined;
  const code = runsProgram ? programCodeHash() : undefined;
  let decided: PruneOnly | undefined;
  let abandoned = false;
  let taken = false;
  if (runsProgram) {
    // Decided once the engine runs the program, under its lock: the early computation if the stack's
    // history is unchanged since its state was read, else one from the state read now.
    setProgram(stack, options.config, async () => {
      const holds = early !== undefined && stillHolds(mark, markNow());
      // A prune-only update was decided on the early state: on any other its targets may not be all that changes.
      if (decided && !holds) {
        abandoned = true;
        decided = undefined;
        throw new Error("the stack changed after this update read it: it runs again, in full");
      }
      const { run, namesInState } = holds ? early! : await runOf(await readState(stack, clusterNames, backend.fileDir));
      given = run;
      const desired = await run.forProgram();
      if (journal) await run.recordJournal(desired);
      const adoptions = adoptionsFor(run.inputs.state, desired, new Set((await readConfig()).clusters.map((c) => c.name)), deploy.leftOut);
      return {
        ...deploy,
        desired,
        carriedAccess: run.inputs.state.access,
        namesInState,
        adoptions,
        registeredBy: code,
        ...(decided ? { pruneOnly: decided } : {}),
      };
    });
  }
  const decidePrune = async (): Promise<PruneOnly | { why: string }> => {
    const outOfScope = pruneOnlyScope({
      up: op === "up" && code !== undefined,
      early: early !== undefined,
      refresh: !!options.refresh,
      leftOut: excluded.length + (deploy.leftOut?.size ?? 0),
      migration: !!migration || state.pending.length > 0,
      abandoned,
      off: options.pruneOnly === false,
    });
    if (outOfScope) return { why: outOfScope };
    const inputs = early!.run.inputs;
    return decidePruneOnly({
      stack: options.stack,
      fileDir: backend.fileDir,
      code: code!,
      state: inputs.state,
      desired: () => early!.run.forProgram().catch(() => undefined),
      namesInState: early!.namesInState,
      adoptions: async (desired) => adoptionsFor(inputs.state, desired, await clusterNames(), deploy.leftOut),
      // Any failure to decrypt leaves it encrypted: the full update runs, and reports a wrong passphrase itself.
      decrypted: () => providerConfigDecrypted(stack, stackProviderName(options.stack)).catch(() => undefined),
    });
  };
  const recorder = new StepRecorder(options.onEvent);
  const started = Date.now();
  const session: Session = {
    stack,
    config: readConfig,
    // Each engine command that writes history is followed, still holding the stack's lease, by the history's retention.
    locked: (run) =>
      withStackLock(stack, policy, () =>
        thenPruned(
          run,
          () => prunedHistory(backend, options),
          () => stopSignal.aborted,
        ),
      ),
    recorder,
    get before() {
      return beforeOf(given?.inputs.state ?? view);
    },
    get outputsBefore() {
      return (given?.inputs.state ?? view).outputs;
    },
    agentsBefore: agentsOutput(state.outputs),
    planned: () => given?.settled?.fleet ?? given?.planned,
    desired: () => given?.settled,
    computeMs: () => given?.computeMs,
    renderMode,
    unreachable,
    offline,
    seen,
    excluded,
    started,
    moving: new Set(migration?.moving),
    renames: new Map(),
    migration,
    state,
    settleJournal: async () => {
      if (journalKey && store) await store.remove([journalKey]);
    },
    store,
    changeRun: {
      signal: stopSignal,
      onOutput: options.onOutput,
      onEvent: recorder.onEvent,
      suppressOutputs: !options.showOutputs,
      expectNoChanges: options.expectNoChanges,
      refresh: options.refresh,
      exclude: excluded,
    },
    pruneOnly: async () => {
      decided = undefined;
      const r = await decidePrune();
      phase("chose the update: " + ("why" in r ? `in full (${r.why})` : `prune only (${r.removed.length} pairs, ${r.setups.length} setups)`));
      return "why" in r ? undefined : (decided = r);
    },
    pruneOnlyTargets: () => {
      // Checked again just before the engine starts (under the operation's own lock): if the history moved, the full update runs.
      if (decided && !stillHolds(mark, markNow())) decided = undefined;
      taken = decided !== undefined;
      return decided?.targets;
    },
    pruneOnlyTaken: () => taken && !abandoned,
    pruneOnlyAbandoned: () => abandoned,
    result: (changes) => ({
      stack: options.stack,
      changes: changes ?? {},
      // The moves as the migration under the lock decided them (up.ts migrateUnderLock), not as read at open.
      groups: groupSteps(recorder.steps, recorder.failedUrns, session.moving),
      before: beforeOf(given?.inputs.state ?? view),
      durationMs: Date.now() - started,
    }),
  };
  return session;
}

/**
 * Every cluster probed (a TCP connect to its API server), as an operation does before it runs and the shard
 * decision before it leaves a shard out; the probe folded into the stack's record of when each cluster was
 * last seen, and the unreachable ones worded with it. The record is a report's memory, not the update's: a
 * failure to keep it is a warning.
 */
export async function probedAndObserved(backend: Backend, options: OperationOptions, clusters: ClusterConfig[]) {
  const probed = await unreachableClusters(clusters);
  const now = new Date();
  const names = clusters.map((c) => c.name);
  const record = await seenStore(backend, PROJECT_NAME, options.stack)
    .update((before) => observe(before, names, probed, now))
    .catch((err: Error) => {
      warnerOf(options)(`warning: stack ${options.stack}: could not keep when its clusters were last seen: ${err.message}`);
      return observe(undefined, names, probed, now);
    });
  const offline = offlineOf(record, probed, now);
  return { offline, seen: record, unreachable: unreachableWithOffline(probed, offline) };
}

/** The stack's history and backups pruned to the operator's retention (state-retention.ts): a failure is a warning. */
async function prunedHistory(backend: Backend, options: OperationOptions): Promise<void> {
  const folders = stackFolderStore(backend, options.stack);
  if (!folders) return;
  await pruneStackHistory(folders, options.stack).catch((err: Error) =>
    warnerOf(options)(`warning: stack ${options.stack}: its history and backups were not pruned (kept as they are): ${err.message}`),
  );
}

/** Where an operation's warnings go: the caller's handler, else stderr. */
export function warnerOf(options: OperationOptions): (message: string) => void {
  return options.onWarning ?? ((m: string) => console.error(m));
}

/** The URN of the stack's root resource in an exported deployment, if it has one yet. */
export function stackRootUrn(deployment: { resources?: { type: string; urn: string }[] } | undefined): string | undefined {
  return deployment?.resources?.find((r) => r.type === "pulumi:pulumi:Stack")?.urn;
}

/** The configuration the program will see: the caller's, else the stack's (secrets decrypted by the CLI). */
export async function configOf(stack: Stack, options: OperationOptions): Promise<StackConfig> {
  if (options.config) return options.config;
  const all = await stack.getAllConfig();
  return configFromValues((key) => all[key]?.value, options.stack);
}

export function unreachableNote(s: Session): string {
  return [...s.unreachable].map(([c, why]) => `cluster ${c} is unreachable (${why})`).join("; ");
}

/** What a stack of an earlier version's first `up` of this version does besides what the preview lists. */
export function movingNote(s: Session): string | undefined {
  return s.migration && migrationNote(s.migration);
}

/** What an operation's metrics read of its session (automation/metrics/report.ts). */
export function watched(m: RunFacts, s: Session): Session {
  m.config = async () => (s.planned()?.config ?? (await s.config())).metrics;
  m.engine = () => s.recorder.changes;
  return s;
}

/** How long the program's desired state took to compute and to register (benchmarks: OperationOptions.onProgramTimings). */
export function programTimings(s: Session): { planMs: number; registerMs: number } {
  return { planMs: s.computeMs() ?? 0, registerMs: registerMsOf(s.stack) ?? 0 };
}

/** f, remembered for the last argument it was called with. */
function memoized<A, R>(f: (a: A) => R): (a: A) => R {
  let last: { a: A; r: R } | undefined;
  return (a) => (last?.a === a ? last.r : (last = { a, r: f(a) }).r);
}
