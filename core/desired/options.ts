/**
 * What the desired-state computation (state.ts) and the program (components/program.ts) are given
 * besides the stack's config: values only. The operations compute the desired state themselves
 * (automation/operation/desired.ts) and hand the program the result; nothing the program is given
 * calls back into them.
 */
import type { FleetState } from "../plan/pipeline";
import type { PreviousDeployment } from "./previous";
import type { RetrySelector, StalledRecord } from "../plan/stalled";

export interface DesiredOptions {
  /** Git cache directory (default ~/.cache/pulumi-fleet). */
  cacheRoot?: string;
  /** Called with the checked plan before anything is rendered, by whoever computes the desired state (a failure's report reads it). */
  onPlanned?: (state: FleetState) => void;
  /** Set by automation/operation/session.ts, whose `up` refreshes correctDrift bundles first; a plain `pulumi up` warns instead. */
  correctsDrift?: boolean;
  /** Clusters the operation leaves out (unreachable, excluded from the engine): their objects' owners are not read. */
  leftOut?: ReadonlySet<string>;
  /** The commit to deploy per GitRepo, as the shard runner resolved it for every shard (a paused GitRepo keeps its own). */
  commits?: Record<string, string>;
  /** This update's time (default: now): a new deploymentId's `deployedAt` (records.ts), and when maintenance windows (stack `schedules`) are read; tests set it. */
  now?: Date;
  /** `up --partition NAME`: rollouts deploy their partitions up to NAME and hold the later ones (holds.ts). */
  partition?: string;
  /** Each pair's run of failures with the same inputs (automation/engine/stalled-store.ts): a run as long as the stack's `stalledAfter` is Stalled (core/plan/stalled.ts). */
  stalled?: StalledRecord;
}

/** What the operations' callers, scripts and tests set for an update: values. */
export interface DeployOptions extends Omit<DesiredOptions, "onPlanned"> {
  /** What the last update deployed; read from the stack's own outputs when not given (null: a new stack). */
  previous?: PreviousDeployment | null;
  /** The shard runner's fingerprint of this update's inputs (automation/shards/inputs.ts), kept as the output `inputs`. */
  inputs?: string;
  /** `up --retry`: the Stalled pairs tried again (every one, or those deployment keys; core/plan/stalled.ts). */
  retry?: RetrySelector;
}
