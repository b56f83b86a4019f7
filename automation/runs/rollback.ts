/**
 * Rollback and redeploy as runs of their own (issue 56 item 4; docs/cli.md "Rollback and redeploy"):
 *  - rollback: an earlier successful run's commits and settings (credentials and pauses as they are now:
 *    settings.ts) previewed, confirmed, pinned, then deployed by an `up` recorded as kind "rollback". Each
 *    GitRepo is pinned to its recorded commit for this run only: the stack file and git history are
 *    untouched. The pin holds the watcher until `--unpin` or a plain `up` (the next commit wins).
 *  - redeploy: what is deployed re-applied, every pair refreshed first (correct-drift.ts), so objects
 *    deleted or edited by hand come back: the latest run's commits and settings (the pinned run's while a
 *    rollback is pinned, which stays), recorded as kind "redeploy".
 * The steps run through `steps` so the command line prints them as `npm run preview` and `up` do.
 */
import * as ops from "../operations";
import { resolveBackend } from "../engine/backend";
import { recordsShared } from "../engine/stack-record-store";
import { PROJECT_NAME } from "../engine/stack";
import type { OperationOptions } from "../operation/results";
import { newRunId, pickRun, RunPin, RunRecord, RunRef, runsStore } from "./runs";
import { commitsText, reapplied } from "./reapply";

export interface RunSteps {
  preview(options: OperationOptions): Promise<unknown>;
  up(options: OperationOptions): Promise<unknown>;
}

/** The operations as they are, printing nothing (tests, users' scripts). */
export const QUIET_STEPS: RunSteps = { preview: ops.preview, up: ops.up };

export interface RollbackChoice {
  /** `--to RUN`; default the newest successful run of other commits or settings than the latest (runs.ts pickRun). */
  to?: string;
  /** Who rolls back (the pin says it). */
  who: string;
  /** After the preview: whether to go on (`--yes` answers yes). */
  confirm: () => Promise<boolean>;
  say: (line: string) => void;
}

export type RollbackEnd = { done: true; target: RunRecord; run: RunRef } | { done: false; target: RunRecord };

export async function rollback(options: OperationOptions, choice: RollbackChoice, steps: RunSteps = QUIET_STEPS): Promise<RollbackEnd> {
  const store = runsStore(resolveBackend(options), PROJECT_NAME, options.stack);
  const target = pickRun(await store.read(), options.stack, choice.to);
  const at = new Date();
  const run: RunRef = { id: newRunId(at), kind: "rollback", of: target.id };
  const applied = await reapplied(options, target, run, choice.say);
  choice.say(`rollback of stack ${options.stack} to run ${target.id} (${target.at}): ${commitsText(target)}; its preview first`);
  await steps.preview(applied);
  if (!(await choice.confirm())) return { done: false, target };
  if (!recordsShared(resolveBackend(options)))
    choice.say(
      `warning: stack ${options.stack}'s backend keeps the pin on this machine only (stack-record-store.ts): a CI job or watcher on another machine does not see it and deploys the current commits`,
    );
  // Pinned before the update: the watcher holds from now on, also if the update fails half-way.
  await store.update((r) => {
    // What the rollback replaces (a second rollback: what the first replaced): a plain up deploys again only once a GitRepo moved on from it.
    const over = r?.pin?.over ?? r?.runs.at(-1)?.commits ?? {};
    // Stamped when written, not when the rollback began: a plain up that began meanwhile (during the
    // preview or the question) must not count as "after the pin" and end it (runs.ts pinAfterRun).
    const pin: RunPin = { run: target, by: run.id, who: choice.who, at: new Date().toISOString(), over };
    return { runs: r?.runs ?? [], pin };
  });
  await steps.up(applied);
  return { done: true, target, run };
}

/** Removes the pin; returns it (undefined: there was none). */
export async function unpin(options: OperationOptions): Promise<RunPin | undefined> {
  let removed: RunPin | undefined;
  await runsStore(resolveBackend(options), PROJECT_NAME, options.stack).update((r) => {
    removed = r?.pin;
    return { runs: r?.runs ?? [] };
  });
  return removed;
}

export async function redeploy(options: OperationOptions, say: (line: string) => void, steps: RunSteps = QUIET_STEPS): Promise<RunRef> {
  const record = await runsStore(resolveBackend(options), PROJECT_NAME, options.stack).read();
  const source = record?.pin?.run ?? record?.runs.at(-1);
  const run: RunRef = { id: newRunId(new Date()), kind: "redeploy", ...(source ? { of: source.id } : {}) };
  if (!source) {
    say(`stack ${options.stack} has no recorded run: redeploying the current commits and stack file`);
    await steps.up({ ...options, run });
    return run;
  }
  say(`redeploy of stack ${options.stack}: run ${source.id}${record?.pin ? " (the pinned rollback's)" : ""} again, ${commitsText(source)}`);
  await steps.up(await reapplied(options, source, run, say));
  return run;
}
