/**
 * The exit codes of every command (docs/cli.md, "Exit codes"): one scheme, so a script or a CI job can
 * tell "something failed" from "a cluster could not be read, the rest was done" without reading text.
 * The decision is pure: the error a command ended with decides its code.
 */

export const EXIT = {
  /** Everything asked was done (pairs held by a maintenance window or --partition are no failure). */
  ok: 0,
  /** Something failed: a bundle deployment, a cluster's setup, the engine, the stack, a tool. */
  failed: 1,
  /** Wrong usage: an unknown option, a missing value, an option of another operation. */
  usage: 2,
  /** Nothing failed, but a cluster could not be read (its API server did not answer): it was left out, every other cluster was done. */
  clustersUnreachable: 3,
} as const;

/**
 * Thrown when the only thing wrong is that clusters could not be read: every other cluster was
 * previewed or updated. `clusters`: cluster -> why it could not be read.
 */
export class ClustersUnreachableError extends Error {
  constructor(
    message: string,
    readonly clusters: ReadonlyMap<string, string>,
  ) {
    super(message);
  }
}

/** The exit code of a command that ended with `err` (a signal's own code is decided by core/base/stop-signal.ts first). */
export function exitCodeOf(err: unknown): number {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ClustersUnreachableError) return EXIT.clustersUnreachable;
  }
  return EXIT.failed;
}
