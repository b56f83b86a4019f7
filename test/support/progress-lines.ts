/**
 * What a CLI run printed to stderr besides its progress lines. Progress starts once a run is long
 * (automation/reports/progress.ts, 5 s): a run that took longer by the test's own clock, as a loaded
 * machine's can, may print them; one that took less may not. The test's clock runs from before the
 * process started, so it never reads shorter than the run's own.
 */
const PROGRESS_STARTS_MS = 5_000;
const PROGRESS_LINE = /^(progress|cluster) .*\n?/gm;

export function besidesProgress(stderr: string, elapsedMs: number): string {
  return elapsedMs < PROGRESS_STARTS_MS ? stderr : stderr.replace(PROGRESS_LINE, "");
}

/** spawnSync, timed. */
export function timed<T>(run: () => T): T & { elapsedMs: number } {
  const t0 = Date.now();
  const r = run();
  return Object.assign(r as object, { elapsedMs: Date.now() - t0 }) as T & { elapsedMs: number };
}
