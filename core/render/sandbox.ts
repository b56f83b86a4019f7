/**
 * GitRepo content is evaluated only by `fleet-render --sandbox` (tools/fleet-render/sandbox.go): an
 * empty environment, a seccomp filter that refuses every path, socket and program, and limits on each
 * job's time, the process's memory and each result's size. A template that loops forever or a values
 * file that expands to gigabytes makes the sandbox end itself, writing on stderr which job it was
 * running; this module turns that into an error for that job alone and runs the others again, so
 * one bundle hitting a limit never takes the other bundles' results with it. The jobs of one GitRepo
 * also share one time limit (runIsolating), so many looping bundles cost it once.
 *
 * The limits are the operator's (environment of `up`/`preview`/`render`), never the content's.
 */
import { runInGroup } from "../child-group";
import { positiveNumber } from "../operator-env";
import { childCommand, stopSignal } from "../stop-signal";

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
   * and counted across the batch's runs (PULUMI_FLEET_GITREPO_RENDER_SECONDS, default 300): N looping
   * bundles cost this once, where the per-job limit alone cost N times it, one after the other.
   */
  gitRepoSeconds: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { jobSeconds: 120, memoryMiB: 2048, outputMiB: 64, totalOutputMiB: 256, gitRepoSeconds: 300 };

export function sandboxLimits(env: NodeJS.ProcessEnv = process.env): SandboxLimits {
  const d = DEFAULT_SANDBOX_LIMITS;
  return {
    jobSeconds: positiveNumber(env, "PULUMI_FLEET_RENDER_TIMEOUT_SECONDS", d.jobSeconds),
    memoryMiB: Math.floor(positiveNumber(env, "PULUMI_FLEET_RENDER_MEMORY_MIB", d.memoryMiB)),
    outputMiB: Math.floor(positiveNumber(env, "PULUMI_FLEET_RENDER_OUTPUT_MIB", d.outputMiB)),
    totalOutputMiB: Math.floor(positiveNumber(env, "PULUMI_FLEET_RENDER_TOTAL_OUTPUT_MIB", d.totalOutputMiB, 400)),
    gitRepoSeconds: positiveNumber(env, "PULUMI_FLEET_GITREPO_RENDER_SECONDS", d.gitRepoSeconds),
  };
}

export function sandboxArgs(l: SandboxLimits): string[] {
  return [
    "--sandbox",
    "--job-timeout",
    `${l.jobSeconds}s`,
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

type Limit = { kind: "time"; job: JobKey } | { kind: "memory" } | { kind: "gitRepo"; group: number };

/**
 * What a run of a group of jobs gave: the results, or which jobs were running when it ended, which had
 * finished, and the time each GitRepo (by index) had spent, in ms.
 */
export type GroupOutcome<R> =
  { ok: true; response: R } | { ok: false; limit?: Limit; running: JobKey[]; done?: JobKey[]; spentMs?: Map<number, number>; stderr: string };

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
  const running = new Set<JobKey>();
  const done: JobKey[] = [];
  const spentMs = new Map<number, number>();
  let limit: Limit | undefined;
  const other: string[] = [];
  for (const line of result.stderr.split("\n")) {
    let m: RegExpExecArray | null;
    if ((m = /^fleet-render-job (start|done) (.*)$/.exec(line))) {
      if (m[1] === "start") running.add(m[2]);
      else {
        running.delete(m[2]);
        done.push(m[2]);
      }
    } else if ((m = /^fleet-render-limit time (.*)$/.exec(line))) {
      limit = { kind: "time", job: m[1] };
    } else if ((m = /^fleet-render-limit group (\d+)$/.exec(line))) {
      limit = { kind: "gitRepo", group: Number(m[1]) };
    } else if ((m = /^fleet-render-group-used (\d+) (\d+)$/.exec(line))) {
      spentMs.set(Number(m[1]), Number(m[2]));
    } else if (/^fleet-render-limit memory /.test(line)) {
      limit = { kind: "memory" };
    } else if (line.trim()) {
      other.push(line);
    }
  }
  // Go's own "out of memory" (an allocation past the address-space limit, before the watchdog saw it).
  if (!limit && other.some((l) => /^fatal error: (runtime: )?out of memory|cannot allocate memory/.test(l))) limit = { kind: "memory" };
  return { ok: false, limit, running: [...running], done, spentMs, stderr: other.slice(0, 20).join("\n").slice(0, 4000) };
}

/** Each job's GitRepo, by index into the time each has left (seconds); undefined: no GitRepo limit. */
export interface JobGroups {
  of: (job: JobKey) => number | undefined;
  secondsLeft: number[];
}

/**
 * Runs `jobs` in the sandbox, in one process while nothing goes wrong. When the process ends early,
 * the job that hit the time limit gets an error and the others run again; when a GitRepo's jobs run
 * out of their shared time, each of them that had not finished gets an error and the others (its
 * finished ones too, with no GitRepo limit left to hit) run again; after a memory limit or a crash, the
 * jobs that were running each run alone (the one that hits it again gets the error) and the rest
 * together. A GitRepo's time spent is carried from run to run. `run` runs one group with the time each
 * GitRepo has left; `failed` records a job's error.
 */
export async function runIsolating<R>(
  jobs: JobKey[],
  run: (group: JobKey[], secondsLeft: number[]) => Promise<GroupOutcome<R>>,
  done: (response: R) => void,
  failed: (job: JobKey, reason: string) => void,
  limits: SandboxLimits,
  groups: JobGroups = { of: () => undefined, secondsLeft: [] },
): Promise<void> {
  const left = [...groups.secondsLeft];
  const exhausted = new Set<number>();
  const groupOf = (j: JobKey) => {
    const g = groups.of(j);
    return g === undefined || exhausted.has(g) ? undefined : g;
  };
  const queue: JobKey[][] = [jobs];
  while (queue.length) {
    const group = queue.shift()!;
    if (!group.length) continue;
    const outcome = await run(
      group,
      left.map((s, g) => (exhausted.has(g) ? Infinity : s)),
    );
    if (outcome.ok) {
      done(outcome.response);
      continue;
    }
    for (const [g, ms] of outcome.spentMs ?? []) left[g] -= ms / 1000;
    if (outcome.limit?.kind === "gitRepo") {
      const g = outcome.limit.group;
      const finished = new Set(outcome.done ?? []);
      const unfinished = new Set(group.filter((j) => groupOf(j) === g && !finished.has(j)));
      const reason = `rendering this GitRepo's jobs took longer than the limit of ${limits.gitRepoSeconds} s per GitRepo (PULUMI_FLEET_GITREPO_RENDER_SECONDS): stopped before this one finished`;
      for (const j of unfinished) failed(j, reason);
      exhausted.add(g); // its finished jobs run again without the GitRepo limit: they ended once already
      queue.push(group.filter((j) => !unfinished.has(j)));
      continue;
    }
    const members = new Set(group);
    const suspects = outcome.limit?.kind === "time" ? [outcome.limit.job] : outcome.running.filter((j) => members.has(j));
    if (!suspects.length) throw new Error(`fleet-render --sandbox failed with no job running: ${outcome.stderr}`);
    if (suspects.length === 1) {
      failed(suspects[0], limitReason(outcome, limits));
      queue.push(group.filter((j) => j !== suspects[0]));
    } else {
      queue.push(
        group.filter((j) => !suspects.includes(j)),
        ...suspects.map((j) => [j]),
      );
    }
  }
}

function limitReason(o: Extract<GroupOutcome<unknown>, { ok: false }>, l: SandboxLimits): string {
  if (o.limit?.kind === "time") return `rendering took longer than the limit of ${l.jobSeconds} s per job (PULUMI_FLEET_RENDER_TIMEOUT_SECONDS): stopped`;
  if (o.limit?.kind === "memory") return `rendering needed more than the limit of ${l.memoryMiB} MiB of memory (PULUMI_FLEET_RENDER_MEMORY_MIB): stopped`;
  return `the renderer crashed on this job: ${o.stderr.split("\n")[0].slice(0, 400)}`;
}
