/**
 * One git command of the git source: in a process group of its own, with exactly the environment it
 * is given, killed together with everything it started (ssh, remote helpers, index-pack) when its
 * deadline passes, its watch says so or the operation is stopped, and with its output bounded
 * (core/base/child-group.ts). Nothing of the group outlives it.
 */
import { runInGroup } from "../base/child-group";

/** ls-remote and ls-tree print one line per ref or file; more than this is not a repository we serve. */
export const MAX_GIT_OUTPUT_BYTES = 256 * 1024 * 1024;
const STDERR_KEPT_BYTES = 64 * 1024;

export interface GitRun {
  cwd: string;
  env: Record<string, string>;
  deadlineMs: number;
  /** What the deadline's expiry is called in the error (it names the operator's variable). */
  deadlineReason: string;
  /** Checked every 200 ms while git runs: a reason stops it (the fetch size bound). */
  watch?: () => string | undefined;
  /** For a transport with no low-speed limit of its own: no output (nor `progress`) for this long stops git. */
  idle?: { ms: number; reason: string; progress?: () => number };
  /** Written to git's standard input (update-ref --stdin). */
  input?: string;
}

/** A git command that failed; `stopped` when we ended it (deadline, watch, output bound, a stopped operation). */
export class GitFailure extends Error {
  constructor(
    readonly reason: string,
    readonly stopped: boolean,
  ) {
    super(reason);
  }
}

export async function runGit(args: string[], run: GitRun): Promise<string> {
  const r = await runInGroup("git", args, {
    cwd: run.cwd,
    env: run.env,
    input: run.input,
    name: `git ${args[0]}`,
    maxOutputBytes: MAX_GIT_OUTPUT_BYTES,
    stderrKeptBytes: STDERR_KEPT_BYTES,
    deadlineMs: run.deadlineMs,
    deadlineReason: run.deadlineReason,
    watch: run.watch,
    idleMs: run.idle?.ms,
    idleReason: run.idle?.reason,
    progress: run.idle?.progress,
  });
  if (r.stopped) throw new GitFailure(r.stopped, true);
  if (r.code === 0) return r.stdout.toString("utf8");
  throw new GitFailure(gitReason(r.stderr) || `git ${args[0]} exited with status ${r.code}`, false);
}

/** The lines of git's stderr that say what went wrong. */
export function gitReason(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l);
  const useful = lines.filter((l) => /^(fatal|error|remote|ssh|Permission|Host key|ERROR|Connection .* timed out)/i.test(l));
  const reason = (useful.length ? useful : lines).slice(0, 3).join("; ");
  // curl's low-speed limit and ssh's ConnectTimeout (git-env.ts): the operator's variables that set them.
  if (/Operation too slow/.test(reason)) return `${reason} (PULUMI_FLEET_GIT_LOW_SPEED_BYTES, PULUMI_FLEET_GIT_LOW_SPEED_SECONDS)`;
  return /^Connection .* timed out/im.test(reason) ? `${reason} (PULUMI_FLEET_GIT_LOW_SPEED_SECONDS)` : reason;
}
