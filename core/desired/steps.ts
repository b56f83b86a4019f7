/**
 * The decisions on the plan's deployments as one ordered pipeline. Each step judges the deployments the
 * steps before it left alive and returns what it fails or holds as a value (failures.ts Verdicts); those
 * are settled, with what depends on them on their cluster, before the next step judges. So a step never
 * sees a deployment an earlier one failed, and the order is the list's.
 */
import { PlanEntry } from "../targeting/plan";
import { FailedDeployments, Verdicts } from "../plan/failures";

export interface Step {
  /** What it decides, for the reader of the list. */
  name: string;
  judge: (alive: PlanEntry[]) => StepVerdicts | Promise<StepVerdicts>;
  /** Judged again after each settle until it fails or holds nothing (a decision that what it settles can change). */
  untilSettled?: true;
}

export interface StepVerdicts extends Verdicts {
  /** Deployments the step gives anew (a deploymentID with its valuesFrom digest): they replace the ones it judged, which stay as handed on. */
  renewed?: ReadonlyMap<PlanEntry, PlanEntry>;
}

/** The deployments still alive after every step, in plan order. */
export async function decideInSteps(entries: PlanEntry[], steps: Step[], failures: FailedDeployments): Promise<PlanEntry[]> {
  let alive = entries;
  for (const step of steps) {
    for (;;) {
      const verdicts = await step.judge(alive);
      const renewed = verdicts.renewed;
      alive = failures.settle(renewed ? alive.map((e) => renewed.get(e) ?? e) : alive, verdicts);
      if (!step.untilSettled || !verdicts.failed.length) break;
    }
  }
  return alive;
}
