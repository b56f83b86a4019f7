/**
 * One git command of the git source: in a process group of its own, with exactly the environment it
 * is given, killed together with everything it started (ssh, remote helpers, index-pack) when its
 * deadline passes or its watch says so, and with its output bounded. Nothing of the group outlives it.
 */
import { spawn } from "node:child_process";
import { stopSignal } from "../stop-signal";

/** ls-remote and ls-tree print one line per ref or file; more than this is not a repository we serve. */
export const MAX_GIT_OUTPUT_BYTES = 256 * 1024 * 1024;
const STDERR_KEPT_BYTES = 64 * 1024;
const WATCH_INTERVAL_MS = 200;

export interface GitRun {
  cwd: string;
  env: Record<string, string>;
  deadlineMs: number;
  /** What the deadline's expiry is called in the error (it names the operator's variable). */
  deadlineReason: string;
  /** Checked every 200 ms while git runs: a reason stops it (the fetch size bound). */
  watch?: () => string | undefined;
  /** Written to git's standard input (update-ref --stdin). */
  input?: string;
}

/** A git command that failed; `stopped` when we ended it (deadline, watch, output bound). */
export class GitFailure extends Error {
  constructor(readonly reason: string, readonly stopped: boolean) {
    super(reason);
  }
}

export function runGit(args: string[], run: GitRun): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd: run.cwd, env: run.env, detached: true, stdio: [run.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    if (run.input !== undefined) {
      child.stdin!.on("error", () => undefined); // git may exit before reading it: its status says why
      child.stdin!.end(run.input);
    }
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = "";
    let stopped: string | undefined;
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
    const timer = setTimeout(() => stop(run.deadlineReason), run.deadlineMs);
    // A stopped operation (SIGTERM, SIGINT: core/stop-signal.ts) ends the git it waits for, helpers included.
    const onStop = () => stop("the operation was stopped");
    if (stopSignal.aborted) onStop();
    else stopSignal.addEventListener("abort", onStop);
    const watcher = run.watch && setInterval(() => {
      const reason = run.watch!();
      if (reason) stop(reason);
    }, WATCH_INTERVAL_MS);
    child.stdout!.on("data", (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_GIT_OUTPUT_BYTES) stop(`git ${args[0]} printed more than ${MAX_GIT_OUTPUT_BYTES / 1024 / 1024} MiB`);
      else out.push(chunk);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_KEPT_BYTES);
    });
    child.on("error", (err) => stop(`git could not be started: ${err.message}`));
    child.on("close", (code) => {
      clearTimeout(timer);
      stopSignal.removeEventListener("abort", onStop);
      if (watcher) clearInterval(watcher);
      killGroup(); // a helper git left behind
      if (stopped) reject(new GitFailure(stopped, true));
      else if (code === 0) resolve(Buffer.concat(out).toString("utf8"));
      else reject(new GitFailure(gitReason(stderr) || `git ${args[0]} exited with status ${code}`, false));
    });
  });
}

/** The lines of git's stderr that say what went wrong. */
export function gitReason(stderr: string): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter((l) => l);
  const useful = lines.filter((l) => /^(fatal|error|remote|ssh|Permission|Host key|ERROR)/i.test(l));
  return (useful.length ? useful : lines).slice(0, 3).join("; ");
}
