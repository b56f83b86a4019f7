/** An operation that failed, worded: what did change before the failure, and the record `status` reads. */
import { DeploymentRecord, deploymentRecord } from "../../core/desired/records";
import { deploymentKey } from "../../core/model/keys";
import { deployEvents } from "../reports/deploy-events";
import { resolveBackend } from "../engine/backend";
import { FailedUpStore, failedUpStore } from "../engine/failed-up-store";
import { rolloutHoldMessages } from "../../core/targeting/rollout-hold";
import { PROJECT_NAME } from "../engine/stack";
import { StackLockedError } from "../engine/locks";
import { programErrorOf } from "../engine/inline-program";
import { engineFailureText, worded } from "../reports/error-report";
import { GroupedSteps, groupSteps } from "../engine/steps";
import { pairOutcomes } from "../engine/pair-outcomes";
import { OperationOptions, OperationError, failuresNote } from "./results";
import { Session } from "./session";

/** Deployments whose last `up` failed, kept in the stack's backend until an `up` succeeds (for ErrApplied). */
export function failedUps(options: OperationOptions): FailedUpStore {
  return failedUpStore(resolveBackend(options), PROJECT_NAME, options.stack);
}

/** An engine command of an operation that deploys nothing failed: worded, the CLI's output kept as the cause. */
export function readFailure(op: string, options: OperationOptions, s: Session, err: unknown): unknown {
  return err instanceof StackLockedError ? err : worded(err, `${op} of stack ${options.stack} failed`, s.recorder.errors, programErrorOf(s.stack));
}

/** The deploys that did complete before the failure, with the plan's ids (the outputs were not written). */
export function failure(op: string, options: OperationOptions, s: Session, err: Error): OperationError {
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
