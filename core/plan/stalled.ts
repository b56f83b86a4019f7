/**
 * Stalled (Fleet's condition word; issue 56 item 2): a pair that failed `stalledAfter` times in a row with
 * the same inputs is not applied again until its inputs, its cluster's access or an explicit `--retry`
 * change. Each retry of such a pair costs a full apply and says the same words; a Stalled one costs
 * nothing and stays ErrApplied in every report. Pure decisions: the record of consecutive failures
 * (kept per stack, automation/engine/stalled-store.ts), which pairs it stalls, and the record after an `up`.
 */
import { sha256Hex, stableJson } from "../base/hash";
import { FleetError } from "../base/errors";
import { ClusterConfig } from "../config/stack";
import { clusterOfKey, deploymentKey } from "../model/keys";
import { PlanEntry } from "../targeting/plan";
import { DeploymentFailure, StallFacts } from "./failures";

/** The default of the stack's `stalledAfter`: a transient refusal (a webhook not up yet, a CRD racing its objects) heals within two tries. */
export const DEFAULT_STALLED_AFTER = 3;

/** One pair's run of consecutive failures with the same inputs. */
export interface FailureRun extends StallFacts {
  /** The digest of what decides its apply (pairInputs). */
  inputs: string;
}

/** Per stack: deployment key -> its run of failures. */
export interface StalledRecord {
  pairs: Record<string, FailureRun>;
}

/** Which Stalled pairs `--retry` tries again: every one, or those deployment keys. */
export type RetrySelector = true | readonly string[];

/**
 * The cluster's access as a digest: the kubeconfig (its credentials) and the context, never the
 * credentials themselves. New credentials may be the fix, so they end a run of failures.
 */
export function accessDigest(c: Pick<ClusterConfig, "kubeconfig" | "context"> | undefined): string {
  return sha256Hex(stableJson({ kubeconfig: c?.kubeconfig ?? "", context: c?.context ?? "" }));
}

/**
 * What decides a pair's apply, as one digest: its deploymentId (its content and options, hashed once by
 * the plan), the two options Fleet leaves out of it (diff, correctDrift), and its cluster's access.
 */
export function pairInputs(e: Pick<PlanEntry, "deploymentId" | "options">, access: string): string {
  return sha256Hex(stableJson({ deploymentId: e.deploymentId, diff: e.options.diff, correctDrift: e.options.correctDrift, access }));
}

/** The stack's setting, checked: 0 never stalls. */
export function stalledAfterOf(value: number | undefined): number {
  return value ?? DEFAULT_STALLED_AFTER;
}

/** The one phrasing of a Stalled pair: stable across runs (no count that grows), so a notification's memory sends it once. */
export function stalledMessage(after: number, run: StallFacts): string {
  return (
    `Stalled after ${after} failures with the same inputs (since ${run.since}): not applied, \`--retry\` tries again; ` +
    `a new commit, options or cluster credentials end it. Last failure: ${run.reason}`
  );
}

/**
 * The command line's `--retry` (every Stalled pair) and `--retry-pair CLUSTER/GITREPO/BUNDLE` (one, as
 * status names it; repeatable) as one selector; undefined when neither is given.
 */
export function retrySelector(all: boolean | undefined, pairs: readonly string[] | undefined): RetrySelector | undefined {
  for (const key of pairs ?? [])
    if (key.split("/").length !== 3 || key.split("/").some((part) => !part))
      throw new FleetError(`${JSON.stringify(key)} is not a bundle deployment: name it CLUSTER/GITREPO/BUNDLE, as \`status\` lists it`, {
        field: "--retry-pair",
      });
  if (all) return true;
  return pairs?.length ? pairs : undefined;
}

/** A pair `--retry` names, or every pair for a bare `--retry`. */
export function retries(selector: RetrySelector | undefined, key: string): boolean {
  return selector === true || (!!selector && selector.includes(key));
}

/**
 * The pairs planned now that are Stalled: their run of failures reached `after` with the inputs they have
 * now, and `--retry` does not name them. `inputsOf` gives a pair's inputs now.
 */
export function stalledPairs(
  alive: readonly PlanEntry[],
  record: StalledRecord | undefined,
  after: number,
  inputsOf: (e: PlanEntry) => string,
  retry?: RetrySelector,
): [PlanEntry, FleetError, StallFacts][] {
  if (after <= 0 || !record) return [];
  const out: [PlanEntry, FleetError, StallFacts][] = [];
  for (const e of alive) {
    const key = deploymentKey(e);
    const run = record.pairs[key];
    if (!run || run.failures < after || run.inputs !== inputsOf(e) || retries(retry, key)) continue;
    const facts = { failures: run.failures, since: run.since, reason: run.reason };
    out.push([e, new FleetError(stalledMessage(after, facts)), facts]);
  }
  return out;
}

/** The record with the pairs `--retry` names cleared: each gets `stalledAfter` fresh tries. */
export function retried(record: StalledRecord | undefined, selector: RetrySelector): StalledRecord {
  const pairs = Object.entries(record?.pairs ?? {}).filter(([key]) => !retries(selector, key));
  return { pairs: Object.fromEntries(pairs) };
}

/**
 * Whether a failure is the pair's own: one that waits for another pair (a dependsOn, its rollout stopped
 * at an earlier partition: field rolloutStrategy, which the reports call WaitApplied, reports/vocabulary.ts
 * failureState) heals when that one does, so it neither counts nor ends a run.
 */
export function ownFailure(f: DeploymentFailure): boolean {
  return !f.held && !!f.cluster && f.field !== "dependsOn" && f.field !== "rolloutStrategy" && !f.reason.startsWith("WaitApplied");
}

/** Whether an `up` failed only by Stalled pairs: trying the same inputs again cannot heal it (the watcher does not back off and retry it). */
export function onlyStalled(failures: readonly DeploymentFailure[]): boolean {
  return failures.length > 0 && failures.every((f) => f.stalled);
}

/** What an `up` did with each pair planned, for the record: its inputs, and why it failed (undefined: it succeeded). */
export interface UpAttempt {
  key: string;
  inputs: string;
  /** Its own failure's reason; undefined when it succeeded. */
  failed?: string;
  /** Not tried (held, Stalled, or waiting for another pair): its run stays as it was. */
  untouched?: boolean;
}

/**
 * The record after an `up`: a failure with the same inputs adds one to the pair's run, one with new inputs
 * starts a run, a success ends it; a pair not tried keeps its run; a pair no longer planned loses it.
 */
export function afterUp(record: StalledRecord | undefined, attempts: readonly UpAttempt[], now: string): StalledRecord {
  const pairs: Record<string, FailureRun> = {};
  for (const a of attempts) {
    const run = record?.pairs[a.key];
    if (a.untouched) {
      if (run) pairs[a.key] = run;
      continue;
    }
    if (a.failed === undefined) continue;
    pairs[a.key] =
      run && run.inputs === a.inputs
        ? { ...run, failures: run.failures + 1, reason: a.failed }
        : { inputs: a.inputs, failures: 1, since: now, reason: a.failed };
  }
  return { pairs };
}

/**
 * Each planned pair's attempt in an `up`: `inputs` holds every planned pair's (FleetState.pairInputs),
 * `failures` the plan's (held and Stalled ones included) before the provider's, the first per pair
 * counting. A pair on a cluster the `up` left out (unreachable) was not tried.
 */
export function upAttempts(inputs: ReadonlyMap<string, string>, failures: readonly DeploymentFailure[], leftOut: ReadonlySet<string> = new Set()): UpAttempt[] {
  const byKey = new Map<string, DeploymentFailure>();
  for (const f of failures) if (f.cluster && !byKey.has(deploymentKey(f))) byKey.set(deploymentKey(f), f);
  return [...inputs].map(([key, digest]) => {
    const f = byKey.get(key);
    const base = { key, inputs: digest };
    if (leftOut.has(clusterOfKey(key)) || (f && (f.stalled || !ownFailure(f)))) return { ...base, untouched: true };
    return f ? { ...base, failed: f.reason } : base;
  });
}
