/** destroy and refresh: the engine's own commands, with the crash journal swept after a destroy. */
import { deployEvents } from "../reports/deploy-events";
import { withoutStackTraces } from "../engine/stack-traces";
import { writerId } from "../engine/journal-store";
import { readObjects } from "../../core/desired/facts";
import { settleEarlier } from "../../core/desired/journal";
import { StackLockedError } from "../engine/locks";
import { stopSignal } from "../../core/base/stop-signal";
import { OperationOptions, OperationResult, UpResult } from "./results";
import { open, Session, warnerOf } from "./session";
import { failure, readFailure } from "./failure";
import { resolvePendingOperations } from "./pending";
import { withRefreshContents } from "./correct-drift";

/**
 * destroy runs no program, so the crash journal is swept here: once the state is empty, everything an
 * interrupted update recorded is owned by nothing (core/journal.ts; kept objects are never swept).
 */
async function sweepAfterDestroy(s: Session, options: OperationOptions): Promise<void> {
  if (!s.store || s.renderMode) return;
  const entries = await s.store.list();
  if (!entries.length) return;
  const clusters = (await s.config()).clusters;
  const warn = warnerOf(options);
  // The state is empty after a destroy: everything recorded on a reachable cluster is a candidate.
  await settleEarlier(
    entries,
    { journal: s.store, writer: writerId(), warn: (m) => warn(`warning: stack ${options.stack}: ${m}`) },
    {
      inState: new Set(),
      planned: new Set(),
      readable: (c) => clusters.some((x) => x.name === c) && !s.unreachable.has(c),
      clusters,
    },
    readObjects,
  );
}

export async function destroy(options: OperationOptions): Promise<UpResult> {
  const s = await open(options, "destroy");
  try {
    await resolvePendingOperations(s, options);
    const result = await withoutStackTraces(() =>
      s.locked(() =>
        s.stack.destroy({ signal: stopSignal, onOutput: options.onOutput, onEvent: s.recorder.onEvent, continueOnError: options.continueOnError ?? true }),
      ),
    );
    await sweepAfterDestroy(s, options);
    const r = s.result(result.summary.resourceChanges);
    return { ...r, events: deployEvents(r.groups, s.before, {}), held: [], outcomes: [] };
  } catch (err) {
    if (err instanceof StackLockedError) throw err;
    throw failure("destroy", options, s, err as Error);
  }
}

export async function refresh(options: OperationOptions): Promise<OperationResult> {
  const s = await open(options, "refresh");
  await resolvePendingOperations(s, options);
  const result = await withoutStackTraces(() =>
    s.locked(() =>
      withRefreshContents(s, true, () =>
        s.stack.refresh({ signal: stopSignal, onOutput: options.onOutput, onEvent: s.recorder.onEvent, expectNoChanges: options.expectNoChanges }),
      ),
    ),
  ).catch((err) => {
    throw readFailure("refresh", options, s, err);
  });
  return s.result(result.summary.resourceChanges);
}
