/**
 * What the desired-state computation (state.ts) and the program (components/program.ts) are given
 * besides the stack's config: where to cache, what the operation already read, and its callbacks.
 */
import type { FleetState } from "../plan/pipeline";
import type { ClusterAccess, DesiredState } from "./types";
import type { DeployedBundle, DeployedObject, Facts, JournalHooks } from "./facts";
import type { PreviousDeployment } from "./previous";

export interface DesiredOptions {
  /** Git cache directory (default ~/.cache/pulumi-fleet). */
  cacheRoot?: string;
  /** Called with the checked plan before anything is rendered: the operations read it to explain a preview. */
  onPlanned?: (state: FleetState) => void;
  /** Called with the desired state once it is computed whole: the operations read its final plan, failures and rollouts. */
  onDesired?: (state: DesiredState) => void;
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
}

/** A desired state computed before the program ran, from the same config, facts and options. */
export interface EarlyDesired {
  facts: Facts;
  desired: () => Promise<DesiredState>;
}

/** What the program (components/program.ts) is given by the operations, scripts and tests. */
export interface DeployOptions extends DesiredOptions {
  /** What the last update deployed; read from the stack's own outputs when not given (null: a new stack). */
  previous?: PreviousDeployment | null;
  /** The crash journal (core/desired/journal.ts), given by the operations' `up` when the state is written once at the end. */
  journal?: JournalHooks;
  /** The objects the stack's state holds per bundle deployment, read by the operations before the engine runs (Facts.deployed). */
  deployed?: ReadonlyMap<string, DeployedBundle>;
  /** What an earlier version created per cluster as one resource per object (Facts.legacySetups), read with `deployed`. */
  legacySetups?: ReadonlyMap<string, DeployedObject[]>;
  /** The access of clusters no longer in the stack whose pairs the state still holds through the stack's provider (read with `deployed`). */
  carriedAccess?: Record<string, ClusterAccess>;
  /** The shard runner's fingerprint of this update's inputs (automation/shards/inputs.ts), kept as the output `inputs`. */
  inputs?: string;
  /**
   * The desired state the operation started computing while the CLI starts (automation/engine/early-desired.ts),
   * if it still holds when the program runs: the program registers it instead of computing its own. A
   * function, the one input that is not a value: whether the early result holds is known only once the
   * engine runs the program under the stack's lock (the stack's history unchanged since it was read).
   */
  early?: () => EarlyDesired | undefined;
  /** Wall times of the program's own work (benchmarks): computing the desired state, and registering every resource. */
  onProgramTimings?: (t: { planMs: number; registerMs: number }) => void;
}
