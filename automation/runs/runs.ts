/**
 * The stack's runs (issue 56 item 4): one record per `up` the engine finished (the watcher's too), with
 * the commit each GitRepo deployed and the settings it used (credentials left out: settings.ts), so that
 * `npm run rollback` can re-apply an earlier one as a run of its own; and the rollback's pin, which holds
 * the watcher until a plain `up` or `rollback --unpin` removes it. The decisions are pure; the record is
 * kept where the state is (stack-record-store.ts), so every machine that runs the stack reads the same.
 */
import { FleetError } from "../../core/base/errors";
import { stableJson } from "../../core/base/hash";
import type { StackConfig } from "../../core/config/stack";
import { Backend } from "../engine/backend";
import { StackRecordStore, stackRecordStore } from "../engine/stack-record-store";

/** The shared vocabulary's run kinds: an ordinary `up` (the watcher's too), a rollback, a redeploy. */
export type RunKind = "up" | "rollback" | "redeploy";

/** What an operation and its reports say of the run they belong to. */
export interface RunRef {
  id: string;
  kind: RunKind;
  /** A rollback: the run whose commits and settings it re-applies. */
  of?: string;
}

export interface RunRecord extends RunRef {
  /** When the run began (ISO 8601). */
  at: string;
  /** false: some pairs failed alone (everything else deployed); such a run is not a rollback's target. */
  ok: boolean;
  /** The commit each GitRepo was deployed at (a plain directory's "dir-" content hash is not a commit: not re-applicable). */
  commits: Record<string, string>;
  /** The stack's settings as the run's program read them, credentials left out (settings.ts). */
  settings: StackConfig;
}

/** A rollback in force: the watcher holds until it is removed (decided in automation/watch/decide.ts). */
export interface RunPin {
  /** The run re-applied (a copy: retention may drop it from `runs`). */
  run: RunRecord;
  /** The rollback's own run id. */
  by: string;
  who: string;
  at: string;
  /** The commits the rollback replaced (the latest run's then): a GitRepo whose head moves on from its is the next commit, which wins. */
  over: Record<string, string>;
}

export interface StackRuns {
  /** Oldest first, at most runsKept(). */
  runs: RunRecord[];
  pin?: RunPin;
}

/** How many runs a stack keeps (the oldest dropped first): PULUMI_FLEET_RUNS_KEPT, default 20. */
export const DEFAULT_RUNS_KEPT = 20;

export function runsKept(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.PULUMI_FLEET_RUNS_KEPT;
  if (raw === undefined || raw === "") return DEFAULT_RUNS_KEPT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 2 || n > 1000) throw new Error(`PULUMI_FLEET_RUNS_KEPT must be a whole number from 2 to 1000 (got ${JSON.stringify(raw)})`);
  return n;
}

/** A run's id: its start time to the second, UTC, sortable as text, and two random characters against a same-second twin. */
export function newRunId(at: Date, random: () => number = Math.random): string {
  const t = at.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const tail = Math.floor(random() * 36 * 36)
    .toString(36)
    .padStart(2, "0");
  return `${t}-${tail}`;
}

/** The record with the run added (the oldest dropped past `kept`), and the pin as the run leaves it (pinAfterRun). */
export function withRun(record: StackRuns | undefined, run: RunRecord, kept: number): { next: StackRuns; unpinned?: RunPin } {
  const earlier = (record?.runs ?? []).filter((r) => r.id !== run.id);
  // A run that deploys what the latest did (a scheduled up, a watcher's look) replaces it: kept runs are releases, not ticks.
  const last = earlier.at(-1);
  const repeats = last !== undefined && last.kind === run.kind && last.ok === run.ok && sameRelease(last, run);
  const runs = [...(repeats ? earlier.slice(0, -1) : earlier), run].slice(-kept);
  const pin = pinAfterRun(record?.pin, run);
  return { next: { runs, ...(pin ? { pin } : {}) }, ...(record?.pin && !pin ? { unpinned: record.pin } : {}) };
}

/**
 * A plain `up` deploys the current commits: the next commit wins, and a pin set before it began is
 * removed. A rollback keeps the pin it set, and a redeploy while pinned re-applies the pinned run.
 */
export function pinAfterRun(pin: RunPin | undefined, run: Pick<RunRecord, "kind" | "at">): RunPin | undefined {
  if (!pin || run.kind !== "up") return pin;
  return Date.parse(pin.at) <= Date.parse(run.at) ? undefined : pin;
}

/**
 * The run `npm run rollback` re-applies: `--to RUN` (an id, or its unique beginning), else the newest
 * successful run of other commits or settings than the latest one. Never a run with failed pairs (its commits did not deploy everywhere).
 */
export function pickRun(record: StackRuns | undefined, stack: string, to?: string): RunRecord {
  const runs = record?.runs ?? [];
  if (to !== undefined) {
    const matches = runs.filter((r) => r.id.startsWith(to));
    if (matches.length !== 1)
      throw new FleetError(
        matches.length
          ? `--to ${to} names ${matches.length} runs (${matches.map((r) => r.id).join(", ")}): give more of the id`
          : `no run ${to} is recorded (the last ${runs.length}: ${runs.map((r) => r.id).join(", ") || "none"})`,
      );
    if (!matches[0].ok) throw new FleetError(`run ${matches[0].id} had pairs that failed, so its commits did not deploy everywhere: pick a successful run`);
    return matches[0];
  }
  // The release before the latest: a run that deployed the latest's commits and settings again is the same release.
  const latest = runs.at(-1);
  const target = runs
    .slice(0, -1)
    .reverse()
    .find((r) => r.ok && !sameRelease(r, latest!));
  if (!target)
    throw new FleetError(
      `stack ${stack} has no successful run of other commits or settings before its latest (${runs.length} recorded): a rollback needs an earlier up of this version to go back to`,
    );
  return target;
}

/** Whether two runs deployed the same commits with the same settings. */
export function sameRelease(a: Pick<RunRecord, "commits" | "settings">, b: Pick<RunRecord, "commits" | "settings">): boolean {
  return stableJson(a.commits) === stableJson(b.commits) && stableJson(a.settings) === stableJson(b.settings);
}

/** The GitRepos a run cannot pin: read from a plain directory (a content hash, no commit to go back to). */
export function unpinnable(run: RunRecord): string[] {
  return Object.entries(run.commits)
    .filter(([, c]) => c.startsWith("dir-"))
    .map(([name]) => name)
    .sort();
}

/** The commits a run re-applies: its own, but a plain directory's hash (read as it is now). */
export function pinnedCommits(run: RunRecord): Record<string, string> {
  return Object.fromEntries(Object.entries(run.commits).filter(([, c]) => !c.startsWith("dir-")));
}

/**
 * A plain `up` while pinned: the GitRepos whose head moved on since the rollback (the next commit wins:
 * that up deploys the current commits and ends the pin); none, and it re-applies the pinned run. A
 * GitRepo whose head is unknown (its remote did not answer) or that the rollback did not replace has no news.
 */
export function newCommits(pin: RunPin, heads: Record<string, string | undefined>): string[] {
  return Object.entries(heads)
    .filter(([name, head]) => head !== undefined && pin.over[name] !== undefined && head !== pin.over[name])
    .map(([name]) => name)
    .sort();
}

/** `npm run rollback -- --list`: one line per run, newest first, and the pin. */
export function runLines(record: StackRuns | undefined, stack: string): string[] {
  const runs = [...(record?.runs ?? [])].reverse();
  if (!runs.length) return [`stack ${stack} has no recorded run`];
  const commits = (r: RunRecord) =>
    Object.entries(r.commits)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, c]) => `${name}@${/^[0-9a-f]{40}$/.test(c) ? c.slice(0, 12) : c}`)
      .join(" ");
  return [
    ...(record?.pin ? [`pinned: ${pinText(record.pin)} (rollback run ${record.pin.by})`] : []),
    ...runs.map((r) => `${r.id}  ${r.kind.padEnd(8)}  ${r.at}  ${r.ok ? "ok    " : "failed"}  ${commits(r) || "-"}${r.of ? `  (of run ${r.of})` : ""}`),
  ];
}

/** What the watcher and a plain `up` say of a pin. */
export function pinText(pin: RunPin): string {
  return `rolled back to run ${pin.run.id} by ${pin.who} at ${pin.at}`;
}

export type RunsStore = StackRecordStore<StackRuns>;

export function runsStore(backend: Backend, project: string, stack: string): RunsStore {
  return stackRecordStore<StackRuns>(backend, project, stack, { file: "runs", table: "pulumi_fleet_runs", column: "record" });
}
