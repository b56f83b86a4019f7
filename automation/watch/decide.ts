/**
 * The watcher's decisions, pure (automation/watch/loop.ts gathers the facts and acts): which GitRepos
 * are due for a poll, whether to run `up`, and how long a failed `up` waits before it is tried again.
 *
 * - Each GitRepo is polled at its own pollingInterval (Fleet's 15 s by default); the loop sleeps until
 *   the earliest next poll, a retry, or the next look at the stack file.
 * - `up` runs when a polled commit or the stack file differs from what the last successful `up` had, and
 *   always once at start: the watcher cannot tell from the remote alone whether the clusters match the
 *   state (an `up` killed before the watcher started, a failed pair, a stack file edited while it was
 *   down), and an `up` with nothing to do costs seconds.
 * - A failed `up` is tried again with the same inputs after a backoff that doubles from the polling
 *   interval up to MAX_BACKOFF_MS and resets on success (a pair refused by a cluster may heal); new
 *   inputs run at once, since they may be the fix.
 * - While a rollback is pinned (`npm run rollback`, automation/runs/runs.ts) nothing runs: new commits wait.
 *   Once the pin is removed (`rollback --unpin`, or a plain `up`, where the next commit wins) an `up`
 *   runs at once: the clusters hold the rollback's commits, not those the watcher last deployed.
 */

/** The longest wait before a failed `up` is tried again (Fleet's CI example runs `up` every 5 minutes). */
export const MAX_BACKOFF_MS = 5 * 60_000;

/** What an `up` deploys: the commit of each polled GitRepo and the stack file's hash. */
export interface WatchInputs {
  commits: Record<string, string>;
  stackHash: string;
}

export interface WatchMemory {
  /** The inputs of the last successful `up` (undefined until one succeeded). */
  deployed?: WatchInputs;
  /** A rollback's pin was seen and is gone (its words): the current commits are deployed again. */
  unpinned?: string;
  /** Consecutive failed `up`s since the last success, the inputs of the last one, and when to try again. */
  failed?: { inputs: WatchInputs; failures: number; retryAt: number };
}

export type Decision = { run: true; reason: string } | { run: false; wait?: string };

/** A rollback in force, as the watcher says it. */
export interface WatchPin {
  stack: string;
  /** The run rolled back to, who pinned it and when. */
  run: string;
  who: string;
  at: string;
}

/** What the watcher says while it holds. */
export function heldText(pin: WatchPin): string {
  return `held: rolled back to run ${pin.run} by ${pin.who} at ${pin.at}; \`npm run rollback -- --stack ${pin.stack} --unpin\` to resume`;
}

/** The memory as a pin leaves it: once one seen is gone, the next decision deploys the current commits. */
export function afterPin(memory: WatchMemory, before: WatchPin | undefined, now: WatchPin | undefined): WatchMemory {
  return before && !now ? { ...memory, unpinned: `the rollback to run ${before.run} was unpinned` } : memory;
}

/** The wait before the next try after `failures` consecutive failures: the base doubled each time, capped. */
export function backoffMs(failures: number, baseMs: number, maxMs = MAX_BACKOFF_MS): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
}

/**
 * What differs between two sets of inputs, in words; empty when nothing does. Only GitRepos polled now
 * count; with `knownOnly`, only those `before` had a commit for (the rest the up read itself).
 */
export function changes(before: WatchInputs | undefined, now: WatchInputs, knownOnly = false): string[] {
  if (!before) return [];
  const out: string[] = [];
  if (before.stackHash !== now.stackHash) out.push("the stack file changed");
  for (const [repo, commit] of Object.entries(now.commits).sort()) {
    const was = before.commits[repo];
    if (knownOnly && was === undefined) continue;
    if (was !== commit) out.push(`gitRepo ${repo} is at ${short(commit)}${was ? ` (was ${short(was)})` : ""}`);
  }
  return out;
}

export function decideUp(memory: WatchMemory, now: WatchInputs, at: number, pin?: WatchPin): Decision {
  if (pin) return { run: false, wait: heldText(pin) };
  const failed = memory.failed;
  if (failed) {
    // Polls are independent (loop.ts): a GitRepo whose first answer came after the failed up began is no new input.
    const news = changes(failed.inputs, now, true);
    if (news.length) return { run: true, reason: news.join("; ") };
    if (at >= failed.retryAt) return { run: true, reason: `trying again after ${failed.failures} failed up(s) with these inputs` };
    return { run: false, wait: `the last up failed; trying again in ${Math.ceil((failed.retryAt - at) / 1000)} s` };
  }
  if (memory.unpinned) return { run: true, reason: `${memory.unpinned}: deploying the current commits` };
  if (!memory.deployed) return { run: true, reason: "first run: bringing the stack up to date" };
  const news = changes(memory.deployed, now);
  return news.length ? { run: true, reason: news.join("; ") } : { run: false };
}

/**
 * The memory after an `up` with `inputs`: on success, what it deployed (`resolved`: the commits the `up`
 * itself read, which may be newer than the poll's), on failure one more failure and its retry time.
 */
export function afterUp(
  memory: WatchMemory,
  inputs: WatchInputs,
  outcome: { ok: true; resolved: Record<string, string> } | { ok: false },
  at: number,
  baseMs: number,
): WatchMemory {
  if (outcome.ok) return { deployed: { stackHash: inputs.stackHash, commits: { ...inputs.commits, ...outcome.resolved } } };
  const failures = (memory.failed?.failures ?? 0) + 1;
  return { ...memory, failed: { inputs, failures, retryAt: at + backoffMs(failures, baseMs) } };
}

/** GitRepo name -> when it is next polled (epoch ms). */
export type PollSchedule = Record<string, number>;

/** The schedule for the GitRepos watched now (name -> interval): a new one is due at once, a dropped one goes. */
export function reschedule(schedule: PollSchedule, intervals: Record<string, number>, at: number): PollSchedule {
  return Object.fromEntries(
    Object.keys(intervals)
      .sort()
      .map((name) => [name, schedule[name] ?? at]),
  );
}

export function duePolls(schedule: PollSchedule, at: number): string[] {
  return Object.keys(schedule)
    .filter((name) => schedule[name] <= at)
    .sort();
}

/** After polling `polled` at `at`: each next due one interval later. */
export function polled(schedule: PollSchedule, names: string[], intervals: Record<string, number>, at: number): PollSchedule {
  return { ...schedule, ...Object.fromEntries(names.map((n) => [n, at + intervals[n]])) };
}

/** When the loop wakes next: the earliest poll, the retry of a failed `up`, or the next look at the stack file. */
export function wakeAt(schedule: PollSchedule, memory: WatchMemory, stackCheckAt: number): number {
  return Math.min(stackCheckAt, ...Object.values(schedule), ...(memory.failed ? [memory.failed.retryAt] : []));
}

function short(commit: string): string {
  return /^[0-9a-f]{40}$/.test(commit) ? commit.slice(0, 12) : commit;
}

/** The GitRepos the watcher polls (name -> interval): not paused (nothing of theirs deploys) and not disablePolling. */
export function pollIntervals(
  repos: { name: string; paused: boolean; disablePolling?: boolean; pollingInterval?: number }[],
  defaultMs: number,
): Record<string, number> {
  return Object.fromEntries(repos.filter((r) => !r.paused && !r.disablePolling).map((r) => [r.name, r.pollingInterval ?? defaultMs]));
}
