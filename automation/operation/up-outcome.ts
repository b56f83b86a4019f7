/**
 * What an `up`'s engine run left, decided once as a value from the plan and the outputs: every report
 * of the update reads this (the result or error, the deploy events, notifications, metrics, the failed-up
 * record), none works it out again.
 */
import { OutputMap } from "@pulumi/pulumi/automation";
import { DeploymentRecord, pairFailures } from "../../core/desired/records";
import { PairReport } from "../../core/model/pair";
import { deploymentKey } from "../../core/model/keys";
import { DeploymentFailure } from "../../core/plan/failures";
import { FleetState } from "../../core/plan/pipeline";
import { rolloutHoldMessages } from "../../core/targeting/rollout-hold";
import { DeployEvent, deployEvents } from "../reports/deploy-events";
import { pairOutcomes } from "../engine/pair-outcomes";
import { GroupedSteps } from "../engine/steps";
import type { PairOutcome } from "../reports/run-summary";
import { deploymentsOutput, setupFailures, statesOutput } from "./outputs";
import { failuresNote, heldNote } from "./results";

export interface UpOutcome {
  /** Each pair's record and state before and after. */
  before: Record<string, DeploymentRecord>;
  after: Record<string, DeploymentRecord>;
  statesBefore: Record<string, PairReport>;
  statesAfter: Record<string, PairReport>;
  /** One per bundle deployment whose objects changed. */
  events: DeployEvent[];
  /** The plan's failures that are not holds (broken bundles, refusals found before the engine). */
  planFailed: DeploymentFailure[];
  /** Those, and each pair the provider did not bring to Ready: the update fails naming each. */
  failed: DeploymentFailure[];
  /** Held, not failed (a maintenance window, --partition): each kept what it had. */
  held: DeploymentFailure[];
  /** Cluster setups (namespaces and agent) that failed, one line each. */
  setups: string[];
  /** Each pair once, with what happened to it. */
  outcomes: PairOutcome[];
  /** The commit each GitRepo was deployed at. */
  commits: Record<string, string>;
  /** When something failed alone: the failed-up record's message (status shows it), and the update's error. */
  failure?: { record: string; text: string };
}

export interface UpFacts {
  plan?: FleetState;
  groups: GroupedSteps;
  before: Record<string, DeploymentRecord>;
  /** The outputs the last update left, and this one's. */
  outputsBefore: OutputMap;
  outputs: OutputMap;
  stack: string;
}

export function upOutcome(f: UpFacts): UpOutcome {
  const after = deploymentsOutput(f.outputs);
  const statesAfter = statesOutput(f.outputs);
  const all = f.plan?.failures.list() ?? [];
  const held = all.filter((x) => x.held);
  const planFailed = all.filter((x) => !x.held);
  // Broken bundles and refused or unready pairs failed alone: everything else was deployed.
  const failedKeys = new Set(planFailed.filter((x) => x.cluster).map(deploymentKey));
  const failed = [...planFailed, ...pairFailures(statesAfter, after).filter((x) => !failedKeys.has(deploymentKey(x)))];
  const setups = setupFailures(f.outputs);
  return {
    before: f.before,
    after,
    statesBefore: statesOutput(f.outputsBefore),
    statesAfter,
    events: deployEvents(f.groups, f.before, after),
    planFailed,
    failed,
    held,
    setups,
    outcomes: pairOutcomes({
      entries: f.plan?.plan.entries ?? [],
      failures: failed,
      held,
      groups: f.groups,
      ready: (key) => statesAfter[key]?.state === "Ready",
    }),
    commits: Object.fromEntries([...(f.plan?.sources.values() ?? [])].map((x) => [x.gitRepo, x.commit])),
    ...(failed.length || setups.length ? { failure: failureOf(f, failed, held, setups) } : {}),
  };
}

/** The failed-up record's message (each failed setup and pair) and the update's error (also where each rollout stopped, and what was held). */
function failureOf(f: UpFacts, failed: DeploymentFailure[], held: DeploymentFailure[], setups: string[]): { record: string; text: string } {
  const notes = [
    ...(setups.length ? [`${setups.length} cluster setup(s) (namespaces and agent) failed, each alone:\n${setups.map((x) => `  ${x}`).join("\n")}`] : []),
    ...(failed.length ? [failuresNote(failed)] : []),
  ];
  // A rollout stops where a pair failed or is not ready; the clusters after it wait (WaitApplied).
  const stopping = failed.filter((x) => !x.reason.startsWith("WaitApplied"));
  const stops = rolloutHoldMessages(f.plan?.rollouts?.values() ?? [], (b) =>
    stopping.filter((x) => x.gitRepo === b.gitRepo && x.bundle === b.bundle).map((x) => x.cluster),
  );
  return {
    record: notes.join("\n"),
    text:
      `up of stack ${f.stack} deployed everything else, but ${stops.map((x) => `${x}\n`).join("")}${notes.join("\n")}` +
      (held.length ? `\n${heldNote(held)}` : ""),
  };
}
