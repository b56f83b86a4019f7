/**
 * The processes an operation may start (the engine CLI, its plugins, the renderer, the guard), found
 * by reading /proc: the tests check that none outlives its operation, even after a kill -9.
 */
import * as fs from "node:fs";
import * as path from "node:path";

export const ENGINE_PROGRAMS = new Set(["pulumi", "pulumi-resource-kubernetes", "pulumi-language-nodejs", "fleet-render", "proc-guard"]);
/** And what the tests start themselves: local clusters, the chart servers, PostgreSQL, Chromium. */
export const TEST_PROGRAMS = new Set([...ENGINE_PROGRAMS, "chart-repo", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "postgres", "chromium"]);

export interface Proc { pid: number; command: string }

/** Running processes whose program is one of an operation's, except those in `except`. */
export function engineProcesses(except: Set<number> = new Set(), programs: Set<string> = ENGINE_PROGRAMS): Proc[] {
  const out: Proc[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || except.has(pid)) continue;
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (fs.readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").startsWith("Z")) continue; // a zombie has ended
    } catch {
      continue; // ended meanwhile
    }
    if (argv.length && programs.has(path.basename(argv[0]))) out.push({ pid, command: argv.join(" ").slice(0, 200) });
  }
  return out;
}
