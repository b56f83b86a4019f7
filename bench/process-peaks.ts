/**
 * Peak resident memory of this process and its descendants while a step runs, by role (the program,
 * which the operations run inline in this process; the Pulumi CLI; the fleet provider; fleet-render):
 * each process's VmHWM (its own high-water mark, kept by the kernel) read from /proc every `everyMs`,
 * the largest per role kept. This process's mark is reset at the start (clear_refs), so a step's
 * figure is its own. A child that grows in its last interval before exiting is under-read by that growth.
 */
import * as fs from "node:fs";

export type Role = "program" | "pulumi" | "language host" | "provider" | "fleet-render" | "other";

function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined; // the process ended between the listing and the read
  }
}

function roleOf(pid: number): Role {
  const argv = (read(`/proc/${pid}/cmdline`) ?? "").split("\0");
  const exe = (argv[0] ?? "").split("/").pop() ?? "";
  if (exe.startsWith("pulumi-resource-")) return "provider";
  if (exe === "pulumi-language-nodejs") return "language host";
  if (exe === "pulumi") return "pulumi";
  if (exe.startsWith("fleet-render")) return "fleet-render";
  if (exe === "node") return "program"; // a program run by the language host, not inline
  return "other";
}

/** Every process whose parent chain reaches `root` (the guard and plugins re-parent within the tree). */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = read(`/proc/${name}/stat`);
    if (!stat) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(root);
  return out;
}

export interface ProcessFigures {
  /** Peak resident memory per role, MiB. */
  peakMiB: Record<Role, number>;
  /**
   * CPU seconds (user + system) per role during the step, a child's as last read before it ended (a
   * short-lived child may be missed); `total` is exact: this process's own and that of every descendant
   * reaped during the step (the kernel adds a reaped child's time to its parent's).
   */
  cpuS: Record<Role | "total", number>;
}

const TICK = 100; // USER_HZ on Linux: /proc/<pid>/stat counts CPU time in these

function cpuTicks(pid: number | "self", withReaped = false): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  const f = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  return f[11] + f[12] + (withReaped ? f[13] + f[14] : 0); // utime, stime (+ cutime, cstime: reaped children)
}

const perRole = (): Record<Role, number> => ({ program: 0, pulumi: 0, "language host": 0, provider: 0, "fleet-render": 0, other: 0 });

/**
 * Samples until stop() is called; stop() gives the peak memory and the CPU time per role. Only children
 * started during the step are counted for CPU (the bench starts none between steps).
 */
export function samplePeaks(everyMs = 200): { stop: () => ProcessFigures } {
  fs.writeFileSync("/proc/self/clear_refs", "5"); // 5: reset this process's peak resident size to its current size
  const peaks = perRole();
  const ticks = new Map<number, { role: Role; ticks: number }>();
  const cpuAtStart = process.cpuUsage();
  const allAtStart = cpuTicks("self", true)!;
  const sample = () => {
    for (const pid of [process.pid, ...descendants(process.pid)]) {
      const kib = Number(/VmHWM:\s+(\d+)/.exec(read(`/proc/${pid}/status`) ?? "")?.[1] ?? 0);
      const role = pid === process.pid ? "program" : roleOf(pid);
      peaks[role] = Math.max(peaks[role], Math.round(kib / 1024));
      const t = pid === process.pid ? undefined : cpuTicks(pid);
      if (t !== undefined) ticks.set(pid, { role, ticks: t });
    }
  };
  const timer = setInterval(sample, everyMs);
  sample();
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      const cpuS: Record<Role | "total", number> = { ...perRole(), total: (cpuTicks("self", true)! - allAtStart) / TICK };
      for (const { role, ticks: t } of ticks.values()) cpuS[role] += t / TICK;
      const own = process.cpuUsage(cpuAtStart);
      cpuS.program = (own.user + own.system) / 1e6;
      for (const r of Object.keys(cpuS) as (Role | "total")[]) cpuS[r] = +cpuS[r].toFixed(1);
      return { peakMiB: peaks, cpuS };
    },
  };
}
