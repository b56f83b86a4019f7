/**
 * GitRepo content is evaluated only by `fleet-render --sandbox` (tools/fleet-render/sandbox.go): an
 * empty environment, a seccomp filter that refuses every path, socket and program, and limits on each
 * job's time, its GitRepo's time, the process's memory and each result's size.
 *
 * Time is each GitRepo's own: its jobs run in a sandbox process of their own (at most `processes` at
 * once), and a job past its time, or past its GitRepo's shared time, gets an error while the process
 * goes on with the rest (tools/fleet-render/jobwatch.go). Nothing is run again for time, so N looping
 * bundles cost their GitRepo its time once, and another GitRepo's jobs are neither stopped nor queued
 * behind them. Only a memory limit (or a crash) ends a process early; then the jobs that were running
 * each run alone (the one that hits it again gets the error) and the rest of that GitRepo together.
 *
 * The limits are the operator's (environment of `up`/`preview`/`render`), never the content's.
 */
import { runInGroup } from "../base/child-group";
import { positiveNumber } from "../base/operator-env";
import { childCommand, stopSignal } from "../base/stop-signal";
import { settleLimited } from "../base/settle-limited";

export interface SandboxLimits {
  /** One job's time, seconds (PULUMI_FLEET_RENDER_TIMEOUT_SECONDS, default 120). */
  jobSeconds: number;
  /** The sandbox process's memory, MiB (PULUMI_FLEET_RENDER_MEMORY_MIB, default 2048). */
  memoryMiB: number;
  /** One job's result, MiB (PULUMI_FLEET_RENDER_OUTPUT_MIB, default 64). */
  outputMiB: number;
  /** All results of one batch, MiB (PULUMI_FLEET_RENDER_TOTAL_OUTPUT_MIB, default 256, at most 400: the response is read as one string). */
  totalOutputMiB: number;
  /**
   * The time one GitRepo's jobs of a batch may take together, seconds, spent while any of them runs
   * and counted across the batch's runs (PULUMI_FLEET_GITREPO_RENDER_SECONDS, default 20): the most a
   * GitRepo's content can hold a batch, and so everyone's `up`, whatever its number of jobs.
   */
  gitRepoSeconds: number;
  /** Sandbox processes at once, one GitRepo each (PULUMI_FLEET_RENDER_PROCESSES, default 2). */
  processes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  jobSeconds: 120,
  memoryMiB: 2048,
  outputMiB: 64,
  totalOutputMiB: 256,
  gitRepoSeconds: 20,
  processes: 2,
};

export function sandboxLimits(env: NodeJS.ProcessEnv = process.env): SandboxLimits {
  const d = DEFAULT_SANDBOX_LIMITS;
  return {
    jobSeconds: positiveNumber(env, "PULUMI_FLEET_RENDER_TIMEOUT_SECONDS", d.jobSeconds),
    memoryMiB: Math.floor(positiveNumber(env, "PULUMI_FLEET_RENDER_MEMORY_MIB", d.memoryMiB)),
    outputMiB: Math.floor(positiveNumber(env, "PULUMI_FLEET_RENDER_OUTPUT_MIB", d.outputMiB)),
    totalOutputMiB: Math.floor(positiveNumber(env, "PULUMI_FLEET_RENDER_TOTAL_OUTPUT_MIB", d.totalOutputMiB, 400)),
    gitRepoSeconds: positiveNumber(env, "PULUMI_FLEET_GITREPO_RENDER_SECONDS", d.gitRepoSeconds),
    processes: Math.floor(positiveNumber(env, "PULUMI_FLEET_RENDER_PROCESSES", d.processes, 64)),
  };
}

export function sandboxArgs(l: SandboxLimits): string[] {
  return [
    "--sandbox",
    "--job-timeout",
    `${l.jobSeconds}s`,
    "--gitrepo-seconds",
    String(l.gitRepoSeconds),
    "--memory-mib",
    String(l.memoryMiB),
    "--output-mib",
    String(l.outputMiB),
    "--total-output-mib",
    String(l.totalOutputMiB),
  ];
}

/** A job of a sandbox batch: its kind and id as the sandbox names them on stderr. */
export type JobKey = string; // `${kind} ${id}`

/** Why the sandbox gave up on a job and went on: its own time, or its GitRepo's. */
export type StoppedFor = "time" | "gitRepo";

/**
 * What a run of a group of jobs gave: the results (the jobs it gave up on carry their error), or, when
 * it ended early (memory, crash), which jobs were running, which it had given up on, and the time each
 * GitRepo (by index) had spent, in ms.
 */
export type GroupOutcome<R> =
  { ok: true; response: R } | { ok: false; memory: boolean; running: JobKey[]; stopped: Map<JobKey, StoppedFor>; spentMs: Map<number, number>; stderr: string };

/** Stdout of a run as spawnSync allowed it (the sandbox bounds its results far below: totalOutputMiB). */
export const MAX_RENDERER_OUTPUT_BYTES = 2 ** 31 - 1;

/** Runs the sandbox on one request; reads its job markers when it ends early. A stopped operation kills it (StoppedError). */
export async function runSandboxOnce<R>(binary: string, request: unknown, limits: SandboxLimits): Promise<GroupOutcome<R>> {
  const [file, args] = childCommand(binary, sandboxArgs(limits));
  const result = await runInGroup(file, args, {
    input: JSON.stringify(request),
    env: {}, // nothing of the runner's environment; the sandbox clears its own too
    name: "fleet-render",
    maxOutputBytes: MAX_RENDERER_OUTPUT_BYTES,
  });
  if (result.aborted) throw stopSignal.reason;
  if (result.stopped) throw new Error(`fleet-render could not run: ${result.stopped}`);
  if (result.code === 0) return { ok: true, response: JSON.parse(result.stdout.toString("utf8")) as R };
  return { ok: false, ...readMarkers(result.stderr) };
}

/** The job markers of tools/fleet-render/jobwatch.go on stderr; other lines are kept (shortened) for messages. */
export function readMarkers(stderr: string): Omit<Extract<GroupOutcome<unknown>, { ok: false }>, "ok"> {
  const running = new Set<JobKey>();
  const stopped = new Map<JobKey, StoppedFor>();
  const spentMs = new Map<number, number>();
  let memory = false;
  const other: string[] = [];
  for (const line of stderr.split("\n")) {
    let m: RegExpExecArray | null;
    if ((m = /^fleet-render-job (start|done) (.*)$/.exec(line))) {
      if (m[1] === "start") running.add(m[2]);
      else running.delete(m[2]);
    } else if ((m = /^fleet-render-job stopped (.*) (time|group)$/.exec(line))) {
      running.delete(m[1]);
      stopped.set(m[1], m[2] === "time" ? "time" : "gitRepo");
    } else if ((m = /^fleet-render-group-used (\d+) (\d+)$/.exec(line))) {
      spentMs.set(Number(m[1]), Number(m[2]));
    } else if (/^fleet-render-limit memory /.test(line)) {
      memory = true;
    } else if (line.trim()) {
      other.push(line);
    }
  }
  // Go's own "out of memory" (an allocation past the address-space limit, before the watchdog saw it).
  if (other.some((l) => /^fatal error: (runtime: )?out of memory|cannot allocate memory/.test(l))) memory = true;
  return { memory, running: [...running], stopped, spentMs, stderr: other.slice(0, 20).join("\n").slice(0, 4000) };
}

/** Where a job's outcome goes: its response, or why it failed. */
export interface JobSink<R> {
  done: (response: R) => void;
  failed: (job: JobKey, reason: string) => void;
}

/** Each job's GitRepo, by index into the time each has left (seconds); undefined: no GitRepo limit. */
export interface JobGroups {
  of: (job: JobKey) => number | undefined;
  secondsLeft: number[];
}

/** What follows a run that ended early: the jobs that fail, with why, and the groups of jobs to run next. */
export interface AfterEarlyEnd {
  failed: [JobKey, string][];
  next: JobKey[][];
}

/**
 * The decision after a run of `group` ended early: the jobs the sandbox had given up on fail with their
 * time limit (never run again: the same input hits it again); of the jobs that were running, a single
 * one fails with the memory limit or the crash, several each run alone next; the rest run together.
 */
export function afterEarlyEnd(group: JobKey[], o: Extract<GroupOutcome<unknown>, { ok: false }>, l: SandboxLimits): AfterEarlyEnd {
  const members = new Set(group);
  const failed: [JobKey, string][] = [];
  for (const [j, why] of o.stopped) if (members.has(j)) failed.push([j, stoppedReason(why, l)]);
  const suspects = o.running.filter((j) => members.has(j) && !o.stopped.has(j));
  if (!suspects.length && !failed.length) throw new Error(`fleet-render --sandbox failed with no job running: ${o.stderr}`);
  if (suspects.length === 1) failed.push([suspects[0], crashReason(o, l)]);
  const settled = new Set(failed.map(([j]) => j));
  const rest = group.filter((j) => !settled.has(j) && !suspects.includes(j));
  return { failed, next: [rest, ...(suspects.length > 1 ? suspects.map((j) => [j]) : [])].filter((g) => g.length) };
}

/**
 * Runs `jobs` (one GitRepo's, or those with none) in the sandbox, in one process while nothing ends it
 * early, then as afterEarlyEnd decides. A GitRepo's time spent is carried from run to run. `run` runs
 * one group with the time each GitRepo has left; `failed` records a job's error.
 */
export async function runIsolating<R>(
  jobs: JobKey[],
  run: (group: JobKey[], secondsLeft: number[]) => Promise<GroupOutcome<R>>,
  { done, failed }: JobSink<R>,
  limits: SandboxLimits,
  secondsLeft: number[] = [],
): Promise<void> {
  const left = [...secondsLeft];
  const queue: JobKey[][] = [jobs];
  while (queue.length) {
    const group = queue.shift()!;
    if (!group.length) continue;
    const outcome = await run(group, [...left]);
    if (outcome.ok) {
      done(outcome.response);
      continue;
    }
    for (const [g, ms] of outcome.spentMs) left[g] = Math.max(0, left[g] - ms / 1000);
    const next = afterEarlyEnd(group, outcome, limits);
    for (const [j, reason] of next.failed) failed(j, reason);
    queue.push(...next.next);
  }
}

/** The jobs of each GitRepo apart (in order of first job), and those of none together. */
export function partitionByGitRepo(jobs: JobKey[], of: (job: JobKey) => number | undefined): JobKey[][] {
  const parts = new Map<number | undefined, JobKey[]>();
  for (const j of jobs) {
    const g = of(j);
    if (!parts.has(g)) parts.set(g, []);
    parts.get(g)!.push(j);
  }
  return [...parts.values()];
}

/**
 * Runs each GitRepo's jobs in sandbox processes of their own, at most `limits.processes` at once: one
 * GitRepo's looping jobs hold one process for at most its time, never another GitRepo's process.
 */
export async function runPerGitRepo<R>(
  jobs: JobKey[],
  run: (group: JobKey[], secondsLeft: number[]) => Promise<GroupOutcome<R>>,
  sink: JobSink<R>,
  limits: SandboxLimits,
  groups: JobGroups = { of: () => undefined, secondsLeft: [] },
): Promise<void> {
  const settled = await settleLimited(partitionByGitRepo(jobs, groups.of), limits.processes, (part) =>
    runIsolating(part, run, sink, limits, groups.secondsLeft),
  );
  const rejected = settled.find((r) => r.status === "rejected");
  if (rejected) throw rejected.reason;
}

function stoppedReason(why: StoppedFor, l: SandboxLimits): string {
  return why === "time"
    ? `rendering took longer than the limit of ${l.jobSeconds} s per job (PULUMI_FLEET_RENDER_TIMEOUT_SECONDS): stopped`
    : `rendering this GitRepo's jobs took longer than the limit of ${l.gitRepoSeconds} s per GitRepo (PULUMI_FLEET_GITREPO_RENDER_SECONDS): stopped before this one finished`;
}

function crashReason(o: Extract<GroupOutcome<unknown>, { ok: false }>, l: SandboxLimits): string {
  if (o.memory) return `rendering needed more than the limit of ${l.memoryMiB} MiB of memory (PULUMI_FLEET_RENDER_MEMORY_MIB): stopped`;
  return `the renderer crashed on this job: ${o.stderr.split("\n")[0].slice(0, 400)}`;
}
