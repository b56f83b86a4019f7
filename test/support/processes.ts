/**
 * The processes an operation may start (the engine CLI, its plugins, the renderer, the guard), found
 * by reading /proc: the tests check that none outlives its operation, even after a kill -9.
 */
import * as fs from "node:fs";
import * as path from "node:path";

export const ENGINE_PROGRAMS = new Set(["pulumi", "pulumi-resource-kubernetes", "pulumi-language-nodejs", "fleet-render", "proc-guard"]);
/** And what the tests start themselves: local clusters, the chart servers, PostgreSQL, Chromium. */
export const TEST_PROGRAMS = new Set([
  ...ENGINE_PROGRAMS,
  "chart-repo",
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kwok",
  "postgres",
  "chromium",
]);

export interface Proc {
  pid: number;
  command: string;
}

/**
 * The environment variable that names a test run: `npm test` sets it (scripts/test.sh), an e2e run by
 * hand gets one from its cluster fixture, local clusters started by hand one of their own; every
 * process a run starts inherits it, so a leftover check can leave another run's processes alone.
 */
export const TEST_RUN_VAR = "PULUMI_FLEET_TEST_RUN";

/** The test run a process belongs to, from its environment; undefined when it names none (or it cannot be read). */
export function testRunOf(pid: number): string | undefined {
  try {
    const prefix = `${TEST_RUN_VAR}=`;
    return fs
      .readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .find((v) => v.startsWith(prefix))
      ?.slice(prefix.length);
  } catch {
    return undefined;
  }
}

/**
 * Running processes whose program is one of an operation's, except those in `except`; with `run`, also
 * except those of another test run (a process that names no run counts: a sandbox clears its environment).
 */
export function engineProcesses(except: Set<number> = new Set(), programs: Set<string> = ENGINE_PROGRAMS, run?: string): Proc[] {
  const out: Proc[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || except.has(pid)) continue;
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (
        fs
          .readFileSync(`/proc/${pid}/stat`, "utf8")
          .replace(/^.*\) /, "")
          .startsWith("Z")
      )
        continue; // a zombie has ended
    } catch {
      continue; // ended meanwhile
    }
    if (!argv.length || !programs.has(path.basename(argv[0]))) continue;
    const other = run === undefined ? undefined : testRunOf(pid);
    if (other !== undefined && other !== run) continue;
    out.push({ pid, command: argv.join(" ").slice(0, 200) });
  }
  return out;
}

/** A process as it was seen: its start time (clock ticks since boot) tells it from a later one with the same pid. */
export interface SeenProc {
  pid: number;
  start: string;
  argv: string[];
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" "); // [0] is the state, [1] the ppid, [19] the start time
  } catch {
    return undefined;
  }
}

/** `root` and every process below it now (a subreaper's adopted children included). */
export function processTree(root: number): SeenProc[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    const f = Number.isInteger(pid) ? statFields(pid) : undefined;
    if (f) children.set(Number(f[1]), [...(children.get(Number(f[1])) ?? []), pid]);
  }
  const out: SeenProc[] = [];
  const visit = (pid: number) => {
    const f = statFields(pid);
    let argv: string[] = [];
    try {
      argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    } catch {
      return; // ended meanwhile
    }
    if (f) out.push({ pid, start: f[19], argv });
    for (const c of children.get(pid) ?? []) visit(c);
  };
  visit(root);
  return out;
}

/** Whether that very process (not a later one with its pid) still runs; a zombie has ended. */
export function stillRunning(p: SeenProc): boolean {
  const f = statFields(p.pid);
  return !!f && f[19] === p.start && f[0] !== "Z";
}
