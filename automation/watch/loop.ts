/**
 * The watcher's loop (`npm run watch`): gather the facts (the stack file's hash, the due GitRepos'
 * remote commits), decide (decide.ts), act (`up`), sleep until the next thing is due. Each GitRepo's poll
 * is its own task: it starts when due and the loop decides again as soon as it answers, so one that hangs
 * (bounded by the poll timeout) delays no other GitRepo's detection; a hung GitRepo is not polled again
 * until its poll ends. `up`s run one at a time (the stack's one update), while polls go on. Everything outside
 * the process is a dependency (live.ts gives the real ones; unit tests give fakes), so the loop's
 * behaviour is tested without clocks, remotes or engines.
 */
import { DEFAULT_POLLING_INTERVAL_MS } from "../../core/config/polling";
import { GitRepoConfig } from "../../core/config/git-repo";
import {
  afterPin,
  afterUp,
  decideUp,
  duePolls,
  heldText,
  pollIntervals,
  PollSchedule,
  polled,
  reschedule,
  wakeAt,
  WatchInputs,
  WatchMemory,
  WatchPin,
} from "./decide";

/** How an `up` ended: what it read from each GitRepo on success; `locked`: it never ran (another update held the lock too long). */
export type UpOutcome = { ok: true; resolved: Record<string, string> } | { ok: false } | { locked: true };

export interface WatchDeps {
  now(): number;
  /** Resolves at `at`, when `wake` resolves (a poll answered), or at once when the watcher is stopped. */
  sleepUntil(at: number, wake: Promise<void>): Promise<void>;
  stopped(): boolean;
  /** The stack file's content hash (it is read at every wake: cheap). */
  stackHash(): string;
  /** The stack's configuration, secrets decrypted (for the GitRepos' credentials). */
  readConfig(): Promise<{ gitRepos: GitRepoConfig[] }>;
  /** The commit the GitRepo's branch or revision names on its remote now. */
  poll(repo: GitRepoConfig): Promise<string>;
  /** A rollback's pin on the stack, read at every wake (undefined: none). */
  pin?(): Promise<WatchPin | undefined>;
  /** Runs `up`; reports its own output and failure. */
  up(reason: string): Promise<UpOutcome>;
  log(line: string): void;
}

export async function watchLoop(deps: WatchDeps): Promise<void> {
  let memory: WatchMemory = {};
  let schedule: PollSchedule = {};
  let repos: GitRepoConfig[] = [];
  let intervals: Record<string, number> = {};
  let configHash: string | undefined;
  let pin: WatchPin | undefined;
  const heads: Record<string, string> = {};
  const pollErrors = new Map<string, string>();
  const polling = new Set<string>();
  // When the last successful up began, per GitRepo it read: a poll begun before it answers with an older commit.
  const readByUpAt: Record<string, number> = {};
  let answered!: () => void;
  let wake = new Promise<void>((r) => (answered = r));
  const sleepUntil = async (until: number) => {
    await deps.sleepUntil(until, wake);
    wake = new Promise<void>((r) => (answered = r));
  };
  const startPoll = (name: string, startedAt: number) => {
    polling.add(name);
    void (async () => {
      try {
        const commit = await deps.poll(repos.find((r) => r.name === name)!);
        if (name in intervals && startedAt >= (readByUpAt[name] ?? -Infinity)) heads[name] = commit;
        if (pollErrors.delete(name)) deps.log(`gitRepo ${name}: its remote answers again`);
      } catch (err) {
        const why = (err as Error).message;
        // Said once per streak: a remote that is down would otherwise fill the log every interval.
        if (pollErrors.get(name) !== why && !deps.stopped()) deps.log(`gitRepo ${name}: poll failed (its last known commit stands): ${why}`);
        pollErrors.set(name, why);
      } finally {
        polling.delete(name);
        answered();
      }
    })();
  };
  // The backoff starts from the shortest polling interval; the stack file is looked at least as often as Fleet's default poll.
  const base = () => (Object.keys(intervals).length ? Math.min(...Object.values(intervals)) : DEFAULT_POLLING_INTERVAL_MS);
  const stackCheck = () => deps.now() + DEFAULT_POLLING_INTERVAL_MS;
  while (!deps.stopped()) {
    const at = deps.now();
    let stackHash = deps.stackHash();
    // A stack file that could not be read is read again after the backoff, or at once once edited.
    const waiting = memory.failed && memory.failed.inputs.stackHash === stackHash && at < memory.failed.retryAt;
    if (stackHash !== configHash && !waiting) {
      try {
        repos = (await deps.readConfig()).gitRepos;
        // Read again: the engine rewrites the file when it creates the stack (seen changing a folded block scalar's value).
        stackHash = deps.stackHash();
        intervals = pollIntervals(repos, DEFAULT_POLLING_INTERVAL_MS);
        schedule = reschedule(schedule, intervals, at);
        for (const name of Object.keys(heads)) if (!(name in intervals)) delete heads[name];
        configHash = stackHash;
      } catch (err) {
        if (deps.stopped()) break;
        deps.log(`the stack's configuration could not be read: ${(err as Error).message}`);
        // As a failed up: the same file is read again after the backoff, an edit at once.
        memory = afterUp(memory, { commits: { ...heads }, stackHash }, { ok: false }, deps.now(), base());
        if (configHash === undefined) {
          await sleepUntil(memory.failed!.retryAt);
          continue;
        }
        deps.log("going on with the configuration read before");
      }
    }
    // A GitRepo whose poll still runs is not polled twice: it is due again when its poll ends.
    const due = duePolls(schedule, at).filter((name) => !polling.has(name));
    for (const name of due) startPoll(name, at);
    schedule = polled(schedule, due, intervals, at);
    if (deps.stopped()) break;
    const inputs: WatchInputs = { commits: { ...heads }, stackHash };
    const pinNow = await readPin(deps, pin);
    memory = afterPin(memory, pin, pinNow);
    // Said once when it begins (or changes) and once when it ends, not at every wake.
    if (pinNow && (pinNow.run !== pin?.run || pinNow.at !== pin?.at)) deps.log(heldText(pinNow));
    if (pin && !pinNow) deps.log(`${memory.unpinned}: resuming`);
    pin = pinNow;
    const decision = decideUp(memory, inputs, deps.now(), pin);
    if (decision.run) {
      deps.log(`up: ${decision.reason}`);
      const upAt = deps.now();
      const outcome = await deps.up(decision.reason);
      if (deps.stopped()) break;
      if ("locked" in outcome) deps.log("the stack is still locked by another update; trying again");
      else memory = afterUp(memory, inputs, outcome, deps.now(), base());
      // What the up read is newer than the poll (a push in between): the next decision starts from it.
      if ("ok" in outcome && outcome.ok)
        for (const [name, commit] of Object.entries(outcome.resolved)) if (name in intervals) [heads[name], readByUpAt[name]] = [commit, upAt];
      if (memory.failed && !("locked" in outcome) && !outcome.ok) {
        deps.log(
          `up failed (${memory.failed.failures} in a row); the same inputs are tried again in ${Math.round((memory.failed.retryAt - deps.now()) / 1000)} s, new ones at once`,
        );
      }
      continue; // polls that fell due during the up run now
    }
    // A running poll wakes the loop when it ends (then it is due at once), not at its schedule.
    const notRunning = Object.fromEntries(Object.entries(schedule).filter(([name]) => !polling.has(name)));
    await sleepUntil(wakeAt(notRunning, memory, stackCheck()));
  }
}

/** The pin now; a read that fails keeps the last one known (said), so a store that blinks neither holds nor releases the watcher. */
async function readPin(deps: WatchDeps, last: WatchPin | undefined): Promise<WatchPin | undefined> {
  if (!deps.pin) return undefined;
  try {
    return await deps.pin();
  } catch (err) {
    deps.log(`the stack's rollback pin could not be read (${(err as Error).message}); going on as before`);
    return last;
  }
}
