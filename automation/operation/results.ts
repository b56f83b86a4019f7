/**
 * What the operations take and give back (the typed library scripts/fleet.ts and users' scripts call):
 * options, results, and the errors that still carry what did change.
 */
import { EngineEvent } from "@pulumi/pulumi/automation";
import { DeploymentRecord } from "../../core/desired/records";
import { FleetState } from "../../core/plan/pipeline";
import { DeployEvent } from "../reports/deploy-events";
import { Prune } from "../reports/preview-report";
import { DeploymentFailure, describeFailures } from "../../core/plan/failures";
import { StackOptions } from "../engine/stack";
import { DeployOptions } from "../../core/desired/options";
import { ReportFacts } from "../../core/desired/report-facts";
import { GroupedSteps } from "../engine/steps";
import type { PairOutcome } from "../reports/run-summary";
import type { RunPin, RunRef } from "../runs/runs";

export interface OperationOptions extends Omit<StackOptions, "deploy"> {
  /** The settings of the desired state the operation computes (core/desired/options.ts). */
  deploy?: DeployOptions;
  /** Wall times of computing the desired state the program was given and of registering it (benchmarks). */
  onProgramTimings?: (t: { planMs: number; registerMs: number }) => void;
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
  /** false: an `up` that only removes pairs runs in full all the same (automation/operation/prune-only.ts; tests compare the two). */
  pruneOnly?: boolean;
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
  /** up: the run it is (automation/runs/runs.ts), recorded with its commits and settings; default an ordinary up with a new id. */
  run?: RunRef;
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
  /** The update only removed pairs, and ran as the engine's targeted update of them (automation/operation/prune-only.ts). */
  pruneOnly?: { pairs: number; setups: number };
  /** One per bundle deployment whose objects changed; empty for a no-op. */
  events: DeployEvent[];
  /** Bundle deployments held, not failed (a maintenance window, --partition): each kept what it had. */
  held: DeploymentFailure[];
  /** Each pair once, with what happened to it (automation/reports/run-summary.ts tabulates them). */
  outcomes: PairOutcome[];
  /** The commit each GitRepo deployed was read at (the plan's), by GitRepo. */
  commits?: Record<string, string>;
  /** The stack's outputs the update wrote (secret ones as "[secret]"); up only. */
  outputs?: Record<string, unknown>;
  /** The run this up was, as recorded (automation/runs/runs.ts). */
  run?: RunRef;
  /** A rollback's pin this plain up removed (it deployed the current commits: the next commit wins). */
  unpinned?: RunPin;
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
