/**
 * What an operation will do, decided from what it read (pure; session.ts gathers the facts and acts):
 * whether the engine writes the state once at the end and the operation keeps the crash journal for it,
 * which resources the engine leaves alone (those of clusters that did not answer), and what its desired
 * state is computed with. What an earlier version's resources become is the migration's (core/migrate).
 */
import { DeployOptions } from "../../core/desired/options";
import { clusterOfUrn } from "../engine/steps";

/** The engine command an operation runs: preview and status only read. */
export type EngineCommand = "up" | "destroy" | "refresh" | "read";

export interface WritePlan {
  /** PULUMI_SKIP_CHECKPOINTS: the state written once at the end. */
  skipCheckpoints: boolean;
  /** What the update may create is recorded in the crash journal before the program registers it (desired.ts, core/desired/journal.ts). */
  journal: boolean;
  /** Said before the update runs: an update written once at the end with nothing to recover its creations from. */
  warning?: string;
}

/**
 * The state written only at the end: the caller's choice, else yes for destroy and refresh (they create
 * nothing a crash could orphan) and for up where the backend keeps a crash journal.
 */
export function planWrites(op: EngineCommand, stack: string, callersChoice: boolean | undefined, backendKeepsJournal: boolean): WritePlan {
  if (op === "read") return { skipCheckpoints: false, journal: false }; // preview and status write no state
  const skipCheckpoints = callersChoice ?? (op !== "up" || backendKeepsJournal);
  const unguarded = op === "up" && skipCheckpoints && !backendKeepsJournal;
  return {
    skipCheckpoints,
    journal: op === "up" && skipCheckpoints && backendKeepsJournal,
    ...(unguarded
      ? {
          warning:
            `warning: stack ${stack}: the state is written only at the end and this backend keeps no crash journal: ` +
            'if this update is killed, objects it created may be left on the clusters owned by nothing (docs/state-and-recovery.md, "Crash journal")',
        }
      : {}),
  };
}

export interface ScopeFacts {
  /** The URNs of the stack's resources. */
  urns: string[];
  /** Clusters that did not answer (cluster -> why). */
  unreachable: ReadonlyMap<string, string>;
}

export interface Scope {
  /** The engine's exclude list: the resources of the clusters that did not answer. */
  excluded: string[];
}

export function planScope(f: ScopeFacts): Scope {
  const excluded = f.unreachable.size ? f.urns.filter((urn) => f.unreachable.has(clusterOfUrn(urn) ?? "")) : [];
  return { excluded };
}

/** The settings the operation's desired state is computed with: the caller's, with the clusters left out and drift corrected by `up` (correct-drift.ts). */
export function planDesired(callers: DeployOptions | undefined, unreachable: ReadonlyMap<string, string>): DeployOptions {
  return { ...callers, leftOut: new Set([...unreachable.keys(), ...(callers?.leftOut ?? [])]), correctsDrift: true };
}

/**
 * The pairs an `up` refreshes before its update (correct-drift.ts): those recorded with correctDrift.enabled
 * (a redeploy's: every pair, so what was deleted or edited by hand is re-applied), unless `--refresh`
 * refreshes everything anyway.
 */
export function driftRefreshed<R extends { correctDrift?: boolean }>(before: Record<string, R>, refresh: boolean | undefined, redeploy = false): [string, R][] {
  return refresh ? [] : Object.entries(before).filter(([, r]) => redeploy || r.correctDrift);
}

/**
 * Whether an operation computes its desired state before the engine runs its program (while the CLI
 * starts): only where the program can then tell whether it still holds (a file backend's history mark),
 * and not when the operation writes history itself before its update (its own refresh, pending
 * operations, a move), which would make it not hold anyway.
 */
export function computesEarly(runsProgram: boolean, mark: string | undefined, writesHistoryFirst: boolean): boolean {
  return runsProgram && mark !== undefined && !writesHistoryFirst;
}
