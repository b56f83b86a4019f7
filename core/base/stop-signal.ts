/**
 * How an operation stops on SIGINT or SIGTERM, at any point: the one rule every long step follows.
 *
 * An entry point arms it (`stopOnSignals`, scripts/fleet.ts); the library alone (tests, users' scripts)
 * keeps Node's own handling. Armed, the first signal aborts `stopSignal`: the engine gets the SIGINT of
 * its own cancellation (the Automation API's `signal`), git and the renderer are killed with their
 * process groups (core/base/child-group.ts), no new step starts (`throwIfStopped`); the operation fails
 * through its usual path (locks released, journal and failure records written) and the process exits
 * 130 (SIGINT) or 143 (SIGTERM). If that takes longer than the grace period, or on a second signal, it
 * exits at once.
 *
 * This holds at any point because no long step blocks the event loop: every child runs asynchronously
 * (the renderer too: a render job looping until its time limit is killed on the signal). What is left
 * synchronous is short (reading a bounded checkout between renderer batches, planning in memory).
 * Letting the signal's default action end the process instead was tried and left the stack's lock and
 * a truncated state file (the engine CLI died at once when its parent did): do not.
 */

const STOP_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 };
const SIGNALS = Object.keys(STOP_CODES) as NodeJS.Signals[];

const controller = new AbortController();
/** Aborted on the first signal once armed; every long asynchronous step takes it. */
export const stopSignal: AbortSignal = controller.signal;

let armed: { wrapSpawn: SpawnWrapper } | undefined;
let stopCode: number | undefined;

/** Runs a program so that it does not outlive this process (proc-guard), given by the entry point. */
export type SpawnWrapper = (file: string, args: string[]) => [string, string[]];

/** The operation was stopped by a signal. */
export class StoppedError extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal}`);
  }
}

/**
 * Arms the rule for this process. `graceMs`: how long the first signal's orderly stop may take before
 * the process exits anyway (PULUMI_FLEET_STOP_GRACE_SECONDS, default 5 s: the guards' own grace
 * follows for what is still running).
 */
export function stopOnSignals(options: { wrapSpawn: SpawnWrapper; graceMs?: number; log?: (m: string) => void }): void {
  if (armed) return;
  armed = { wrapSpawn: options.wrapSpawn };
  const graceMs = options.graceMs ?? Number(process.env.PULUMI_FLEET_STOP_GRACE_SECONDS ?? 5) * 1000;
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopCode !== undefined) {
      log(`${signal} again: exiting now`);
      process.exit(stopCode);
    }
    stopCode = STOP_CODES[signal]!;
    process.exitCode = stopCode;
    log(`${signal}: stopping the operation (the engine cancels its update and releases the stack's lock; a second signal exits at once)`);
    controller.abort(new StoppedError(signal));
    setTimeout(() => {
      log(`${signal}: the operation did not stop within ${graceMs / 1000} s: exiting`);
      process.exit(stopCode);
    }, graceMs).unref();
  };
  for (const s of SIGNALS) process.on(s, onSignal);
}

/** The exit code of a stopped operation (130, 143), or undefined when no signal stopped it. */
export function stoppedCode(): number | undefined {
  return stopCode;
}

/** Throws StoppedError once stopped: called before a step starts (an aborted signal no longer reaches a new child). */
export function throwIfStopped(): void {
  if (stopSignal.aborted) throw stopSignal.reason;
}

/** `file args` as a child must run to end with this process, even when it exits at once (guarded by proc-guard once armed). */
export function childCommand(file: string, args: string[]): [string, string[]] {
  return armed ? armed.wrapSpawn(file, args) : [file, args];
}
