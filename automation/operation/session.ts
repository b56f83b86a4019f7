/**
 * An operation's session: the stack opened, what it holds read once (state, outputs, config), the
 * clusters probed, and the program's options; every operation (preview.ts, up.ts, status.ts, ...) starts here.
 */
import { Stack } from "@pulumi/pulumi/automation";
import { Migration, migrationNote, planMigration } from "../../core/migrate/migrate";
import { DeploymentRecord } from "../../core/desired/records";
import { configFromValues, FleetState } from "../../core/plan/pipeline";
import { StackConfig } from "../../core/config/stack";
import { unreachableClusters } from "../clusters/reachability";
import { resolveBackend } from "../engine/backend";
import { phase } from "../engine/timings";
import { JournalStore, journalStore, stateIdentities, writerId } from "../engine/journal-store";
import { JournalHooks } from "../../core/desired/facts";
import { readState, StackState } from "../engine/deployed-objects";
import { historyMark, startEarly } from "../engine/early-desired";
import { DeployOptions, EarlyDesired } from "../../core/desired/options";
import { PROJECT_NAME } from "../engine/stack";
import { stackLockStore } from "../engine/own-locks";
import { ensureKubernetesProvider, needsKubernetesProvider } from "../engine/toolchain";
import { withStackLock } from "../engine/locks";
import { stackLeaseStore } from "../engine/stack-lease";
import { isRenderMode, openStack, setProgram } from "../engine/stack";
import { worded } from "../reports/error-report";
import { AgentInfo } from "../reports/status";
import { groupSteps } from "../engine/steps";
import { StepRecorder } from "../engine/step-recorder";
import { RunFacts } from "../metrics/report";
import { stopSignal } from "../../core/base/stop-signal";
import { OperationOptions, OperationResult } from "./results";
import { EngineCommand, planScope, planWrites } from "./plan";
import { agentsOutput, deploymentsOutput } from "./outputs";

export interface Session {
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
  /** The state's migration from an earlier version's layout (core/migrate), undefined for a current state. */
  migration?: Migration;
  /** The state as the operation found it, before taking the stack's lock (readState). */
  state: StackState;
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
  let planned: FleetState | undefined;
  let unreachable = new Map<string, string>();
  const backend = resolveBackend(options);
  const store = journalStore(backend, PROJECT_NAME, options.stack);
  const writes = planWrites(op, options.stack, options.skipCheckpoints, store !== undefined);
  if (writes.warning) warnerOf(options)(writes.warning);
  let stack: Stack | undefined;
  let journalKey: string | undefined;
  const journal: JournalHooks | undefined =
    writes.journal && store
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
  stack = await openStack({ ...options, env: { ...options.env, ...(writes.skipCheckpoints ? { PULUMI_SKIP_CHECKPOINTS: "true" } : {}) }, deploy: undefined });
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
  // An earlier version's layout: what the migration moves, decided in memory (the act: up.ts, under the lock).
  const migration =
    state.legacy.length || needsKubernetesProvider(state.resources)
      ? planMigration({ deployment: { resources: state.resources } }, { configured: await clusterNames(config ?? configOf(stack, options)) })
      : undefined;
  // The engine of an up sees the migrated state (unless a killed update's operations are resolved first,
  // on the state as it is: pending.ts): the Kubernetes provider only where the migration leaves it a resource.
  const engineSees = op === "up" && migration && !state.pending.length ? (migration.state.deployment?.resources ?? []) : state.resources;
  if (needsKubernetesProvider(engineSees)) ensureKubernetesProvider(options.stack);
  const outputs = state.outputs;
  const before = deploymentsOutput(outputs);
  if (!renderMode) {
    unreachable = await unreachableClusters((await config!).clusters);
    if (unreachable.size) options.onUnreachable?.(unreachable);
  }
  phase("clusters probed");
  // The program's inputs, now known: what the state holds and the clusters left out.
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
    leftOut: new Set([...unreachable.keys(), ...(options.deploy?.leftOut ?? [])]),
    correctsDrift: true,
    journal,
    ...(op === "up" || op === "read" ? { deployed: state.deployed, legacySetups: state.legacySetups, carriedAccess: state.access } : {}),
    early: () => early?.(),
  };
  setProgram(stack, options.config, deploy);
  // The program's desired state, computed while the CLI starts (automation/engine/early-desired.ts).
  if (mark && config && options.deploy?.previous === undefined) early = startEarly({ config: await config, state, deploy, mark, markNow });
  const warn = warnerOf(options);
  const leases = stackLeaseStore(backend, PROJECT_NAME, options.stack);
  const locks = stackLockStore(backend, PROJECT_NAME, options.stack);
  const policy = { stack: options.stack, waitLock: options.waitLock, forceUnlock: options.forceUnlock, warn, leases, locks };
  const locked = <T>(run: () => Promise<T>) => withStackLock(stack, policy, run);
  const { excluded } = planScope({ urns: state.resources.map((r) => r.urn), unreachable });
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
    moving: new Set(migration?.moving),
    migration,
    state,
    settleJournal: async () => {
      if (journalKey && store) await store.remove([journalKey]);
    },
    store,
  };
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

export function base(options: OperationOptions, s: Session, changes: Record<string, number> | undefined): OperationResult {
  return {
    stack: options.stack,
    changes: changes ?? {},
    groups: groupSteps(s.recorder.steps, s.recorder.failedUrns, s.moving),
    before: s.before,
    durationMs: Date.now() - s.started,
  };
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

/** What a preview and an up give the engine alike: the stop, the output and events, the drift gate, the clusters left out. */
export function changeRun(s: Session, options: OperationOptions) {
  return {
    signal: stopSignal,
    onOutput: options.onOutput,
    onEvent: s.recorder.onEvent,
    suppressOutputs: !options.showOutputs,
    expectNoChanges: options.expectNoChanges,
    refresh: options.refresh,
    exclude: s.excluded,
  };
}
