/** Operations a killed update left in flight, resolved before an operation runs (up, destroy, refresh). */
import { stopSignal } from "../../core/base/stop-signal";
import { OperationOptions } from "./results";
import { Session, stackRootUrn, warnerOf } from "./session";
import { withRefreshContents } from "./correct-drift";

/**
 * Operations a killed update left in flight (recorded in the state when checkpoints are on) are
 * resolved before anything else runs, never dropped silently: each is named in a warning; a pending
 * create (the object may or may not exist) is cleared, and the next update creates it again, which
 * the Kubernetes provider's server-side apply turns into an upsert of the same object; a pending
 * update or delete is settled by refreshing that resource from its cluster.
 */
export async function resolvePendingOperations(s: Session, options: OperationOptions): Promise<void> {
  const pending = s.state.pending;
  if (!pending.length) return;
  const warn = warnerOf(options);
  warn(
    `warning: stack ${options.stack}: an earlier update was interrupted with ${pending.length} operation(s) in flight; resolving them first:\n` +
      pending
        .map(
          (p) =>
            `  ${p.type} ${p.resource.urn}: ${p.type === "creating" ? "cleared; this update creates it again (an existing object is adopted)" : "refreshed from its cluster"}`,
        )
        .join("\n"),
  );
  const inState = new Set<string>(s.state.resources.map((r) => r.urn));
  const root = stackRootUrn(s.state);
  const targets = [...new Set(pending.filter((p) => p.type !== "creating" && inState.has(p.resource.urn)).map((p) => p.resource.urn))];
  // A refresh has no program to register the contents its pairs compare with: handed over (correct-drift.ts).
  await s.locked(() =>
    withRefreshContents(s, true, () =>
      s.stack.refresh({
        signal: stopSignal,
        clearPendingCreates: true,
        target: root ? [root, ...targets] : undefined,
        exclude: s.excluded,
        onOutput: options.onOutput,
      }),
    ),
  );
}
