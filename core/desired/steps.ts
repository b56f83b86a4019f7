/**
 * The decisions on the plan's deployments as one ordered pipeline. Each step judges the deployments the
 * steps before it left alive and returns what it fails or holds as a value (failures.ts Verdicts); those
 * are settled, with what depends on them on their cluster, before the next step judges. So a step never
 * sees a deployment an earlier one failed. A step is one call, `await steps.judge(...)`, which returns
 * what the step produced: a later step that needs it takes it as an argument, so running it before is a
 * type error rather than a variable read before it was set.
 */
import { PlanEntry } from "../targeting/plan";
import { FailedDeployments, Verdicts } from "../plan/failures";

export interface StepVerdicts extends Verdicts {
  /** Deployments the step gives anew (a deploymentID with its valuesFrom digest): they replace the ones it judged, which stay as handed on. */
  renewed?: ReadonlyMap<PlanEntry, PlanEntry>;
}

/** What a step decided, and what it produced for the steps after it. */
export interface Judged<T> {
  verdicts: StepVerdicts;
  value: T;
}

/** A step that produces nothing for later steps. */
export const verdictsOnly = (verdicts: StepVerdicts): Judged<undefined> => ({ verdicts, value: undefined });

export class Steps {
  private alive: PlanEntry[];

  constructor(
    entries: PlanEntry[],
    private readonly failures: FailedDeployments,
  ) {
    this.alive = entries;
  }

  /** The deployments still alive after the steps so far, in plan order. */
  get entries(): PlanEntry[] {
    return this.alive;
  }

  /**
   * One step (`name` is for the reader of the list): judges the deployments alive and settles its
   * verdicts. `untilSettled`: judged again after each settle until it fails or holds nothing (a decision
   * that what it settles can change); the last judgement's value is returned.
   */
  async judge<T>(_name: string, judge: (alive: PlanEntry[]) => Judged<T> | Promise<Judged<T>>, untilSettled = false): Promise<T> {
    for (;;) {
      const { verdicts, value } = await judge(this.alive);
      const renewed = verdicts.renewed;
      this.alive = this.failures.settle(renewed ? this.alive.map((e) => renewed.get(e) ?? e) : this.alive, verdicts);
      if (!untilSettled || !verdicts.failed.length) return value;
    }
  }
}
