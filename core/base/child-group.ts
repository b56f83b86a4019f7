/**
 * The one way a long-running child of an operation runs: asynchronously (the event loop, and so the
 * signal handlers of core/base/stop-signal.ts, keep running), in a process group of its own, and killed
 * with that whole group (SIGKILL) when the operation is stopped, when its deadline passes, when its
 * watch says so or when it prints more than its bound. Nothing of the group outlives the run.
 */
import { spawn } from "node:child_process";
import { stopSignal } from "./stop-signal";

const WATCH_INTERVAL_MS = 200;

export interface GroupRun {
  cwd?: string;
  /** Exactly the child's environment; absent: ours. */
  env?: Record<string, string>;
  /** Written to the child's standard input; absent: no standard input. */
  input?: string;
  /** What the child is called in `stopped` (default: its file). */
  name?: string;
  /** Standard output past this many bytes stops the child. */
  maxOutputBytes: number;
  /** Only the last this many bytes of standard error are kept; absent: all of it. */
  stderrKeptBytes?: number;
  deadlineMs?: number;
  /** What the deadline's expiry is called in `stopped`. */
  deadlineReason?: string;
  /** Checked every 200 ms while the child runs: a reason stops it. */
  watch?: () => string | undefined;
  /** No output, and no change of `progress`, for this long stops the child (a peer that went silent). */
  idleMs?: number;
  idleReason?: string;
  /** A measure of the child's work besides its output (bytes it wrote to disk), checked every 200 ms. */
  progress?: () => number;
}

/**
 * How the child ended: its status (null when killed by a signal), its output, and `stopped`: why we
 * ended it, if we did (`aborted` when because the operation was stopped).
 */
export interface GroupOutcome {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  stopped?: string;
  aborted?: boolean;
}

export const STOPPED_REASON = "the operation was stopped";

export function runInGroup(file: string, args: string[], run: GroupRun): Promise<GroupOutcome> {
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      cwd: run.cwd,
      env: run.env ?? process.env,
      detached: true,
      stdio: [run.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (run.input !== undefined) {
      child.stdin!.on("error", () => undefined); // the child may exit before reading it all: its status says why
      child.stdin!.end(run.input);
    }
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = "";
    let stopped: string | undefined;
    let aborted = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group is already gone
      }
    };
    const stop = (reason: string) => {
      if (stopped) return;
      stopped = reason;
      killGroup();
    };
    const timer = run.deadlineMs === undefined ? undefined : setTimeout(() => stop(run.deadlineReason ?? `no end after ${run.deadlineMs} ms`), run.deadlineMs);
    const onStop = () => {
      if (!stopped) aborted = true;
      stop(STOPPED_REASON);
    };
    if (stopSignal.aborted) onStop();
    else stopSignal.addEventListener("abort", onStop);
    let activeAt = Date.now();
    let lastProgress = run.progress?.();
    const watcher =
      (run.watch || run.idleMs !== undefined) &&
      setInterval(() => {
        const reason = run.watch?.();
        if (reason) return stop(reason);
        const progress = run.progress?.();
        if (progress !== lastProgress) [lastProgress, activeAt] = [progress, Date.now()];
        if (run.idleMs !== undefined && Date.now() - activeAt >= run.idleMs) stop(run.idleReason ?? `no output for ${run.idleMs} ms`);
      }, WATCH_INTERVAL_MS);
    child.stdout!.on("data", (chunk: Buffer) => {
      activeAt = Date.now();
      outBytes += chunk.length;
      if (outBytes > run.maxOutputBytes) stop(`${run.name ?? file} printed more than ${run.maxOutputBytes / 1024 / 1024} MiB`);
      else out.push(chunk);
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      activeAt = Date.now();
      stderr += chunk;
      if (run.stderrKeptBytes !== undefined && stderr.length > run.stderrKeptBytes) stderr = stderr.slice(-run.stderrKeptBytes);
    });
    child.on("error", (err) => stop(`${run.name ?? file} could not be started: ${err.message}`));
    child.on("close", (code) => {
      if (timer) clearTimeout(timer);
      stopSignal.removeEventListener("abort", onStop);
      if (watcher) clearInterval(watcher);
      killGroup(); // whatever the child left behind in its group
      resolve({ code, stdout: Buffer.concat(out), stderr, ...(stopped ? { stopped } : {}), ...(aborted ? { aborted } : {}) });
    });
  });
}
