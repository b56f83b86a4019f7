/**
 * The desired state an operation's program registers, computed by the operation itself from what it has
 * read (the stack's config, its state, the clusters probed): the program is handed the result as a value
 * (components/program.ts ProgramInputs) and every report reads the same one. An `up` starts it before it
 * holds the stack's lock, so it runs while the CLI starts, and keeps it under the lock only while the
 * stack's history is unchanged (automation/engine/history-mark.ts); otherwise it computes again from the
 * state read under the lock.
 */
import { compileHealthChecks } from "../../core/config/health-check-compile";
import { StackConfig } from "../../core/config/stack";
import { Facts, JournalHooks, liveFacts } from "../../core/desired/facts";
import { DeployOptions } from "../../core/desired/options";
import { DEPLOYMENTS_OUTPUT, previousFromOutputs, RECORD_OUTPUT } from "../../core/desired/previous";
import { desiredState } from "../../core/desired/state";
import { sweepAndRecord } from "../../core/desired/sweep";
import { DesiredState } from "../../core/desired/types";
import { FleetState } from "../../core/plan/pipeline";
import { StackState } from "../engine/deployed-objects";

/** What a computation of the desired state reads: values the operation has already gathered. */
export interface DesiredInputs {
  config: StackConfig;
  state: StackState;
  /** The caller's settings, with the operation's own (leftOut, correctsDrift). */
  deploy: DeployOptions;
  /** The crash journal, for an `up` that writes the state only at the end (plan.ts planWrites). */
  journal?: JournalHooks;
  /** The facts from the last outputs and the state (tests give their own; the operations the live ones). */
  factsOf?: (inputs: DesiredInputs) => Facts;
}

/** One computation: its result, and the checked plan as soon as it is known (kept when the rest fails, for the failure's report). */
export class DesiredRun {
  planned?: FleetState;
  /** The desired state, once computed. */
  settled?: DesiredState;
  /** How long the computation took, once it has settled (benchmarks). */
  computeMs?: number;
  readonly desired: Promise<DesiredState>;
  readonly facts: Facts;

  constructor(readonly inputs: DesiredInputs) {
    this.facts = (inputs.factsOf ?? stateFacts)(inputs);
    const started = performance.now();
    this.desired = desiredState(inputs.config, this.facts, { ...inputs.deploy, onPlanned: (p) => (this.planned = p) })
      .then((d) => (this.settled = d))
      .finally(() => {
        this.computeMs = performance.now() - started;
      });
    this.desired.catch(() => undefined); // read by the program, which reports it
  }

  /** What the program registers: the desired state once its health checks compile (before anything is registered: a broken expression stops there, naming the stack file and field). */
  forProgram(): Promise<DesiredState> {
    const ready = this.desired.then((d) => {
      compileHealthChecks(d.fleet.config.file, d.fleet.config.healthChecks);
      return d;
    });
    ready.catch(() => undefined); // the program rethrows it
    return ready;
  }

  /**
   * For an `up` with a crash journal: earlier updates' leftovers swept and this update's objects
   * recorded (sweep.ts). Run by the program's wrapper (automation/engine/inline-program.ts) once the
   * engine runs the program, under the engine's lock, before anything is registered: an engine that
   * never started the program records nothing.
   */
  recordJournal(d: DesiredState): Promise<void> {
    return sweepAndRecord(this.facts, d, this.inputs.deploy.leftOut);
  }
}

/** The live facts, with the last outputs as the state holds them (a caller's `previous` instead when given). */
function stateFacts(i: DesiredInputs): Facts {
  const { outputs } = i.state;
  const previous =
    i.deploy.previous !== undefined ? (i.deploy.previous ?? undefined) : previousFromOutputs(outputs[RECORD_OUTPUT]?.value, outputs[DEPLOYMENTS_OUTPUT]?.value);
  return liveFacts(async () => previous, i.journal, i.state.deployed);
}
