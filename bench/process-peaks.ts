/**
 * Peak resident memory of a process (by default this one) and its descendants while a step runs, by role
 * (the program, which the operations run inline in the root process; the Pulumi CLI; the fleet provider; fleet-render):
 * each process's VmHWM (its own high-water mark, kept by the kernel) read from /proc every `everyMs`,
 * the largest per role kept. This process's mark is reset at the start (clear_refs), so a step's
 * figure is its own (a child root's is its own anyway). A child that grows in its last interval before
 * exiting is under-read by that growth.
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
  /** Peak resident memory per role, MiB (a child's as last read before it ended). */
  peakMiB: Record<Role, number>;
  /**
   * CPU seconds (user + system) during the step, exact: this process's (the program), and that of every
   * descendant reaped during the step (the kernel adds a reaped child's time to its parent's, so the
   * Pulumi CLI's, the provider's and fleet-render's arrive here when they end; sampling them instead
   * missed the CLI's work after the program's last sample).
   */
  cpuS: { program: number; children: number };
  /** CPU seconds per role of the root's descendants as last sampled (within one interval of their end): the split the exact total above cannot give. */
  sampledCpuS: Record<Role, number>;
}

const TICK = 100; // USER_HZ on Linux: /proc/<pid>/stat counts CPU time in these

/** This process's reaped children's CPU ticks (cutime + cstime). */
function reapedTicks(): number {
  const stat = read("/proc/self/stat")!;
  const f = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  return f[13] + f[14];
}

/** Per-process CPU ticks (utime + stime) from /proc/<pid>/stat. */
function ticksOf(pid: number): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]);
}

const noRoles = (): Record<Role, number> => ({ program: 0, pulumi: 0, "language host": 0, provider: 0, "fleet-render": 0, other: 0 });

/**
 * Samples until stop() is called; stop() gives the peak memory per role and the CPU time of the step.
 * `root`: this process (the operation runs inline in it) or a child running the operation (its role is the program's);
 * the exact CPU figures (`cpuS`) are this process's and its reaped children's.
 */
export function samplePeaks(everyMs = 200, root = process.pid): { stop: () => ProcessFigures } {
  if (root === process.pid) fs.writeFileSync("/proc/self/clear_refs", "5"); // 5: reset this process's peak resident size to its current size
  const peaks = noRoles();
  const ticks = new Map<number, { role: Role; ticks: number }>();
  const cpuAtStart = process.cpuUsage();
  const reapedAtStart = reapedTicks();
  const sample = () => {
    for (const pid of [root, ...descendants(root)]) {
      const kib = Number(/VmHWM:\s+(\d+)/.exec(read(`/proc/${pid}/status`) ?? "")?.[1] ?? 0);
      const role = pid === root ? "program" : roleOf(pid);
      peaks[role] = Math.max(peaks[role], Math.round(kib / 1024));
      const t = pid === root ? undefined : ticksOf(pid);
      if (t !== undefined) ticks.set(pid, { role, ticks: t });
    }
  };
  const timer = setInterval(sample, everyMs);
  sample();
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      const own = process.cpuUsage(cpuAtStart);
      const cpuS = { program: +((own.user + own.system) / 1e6).toFixed(1), children: +((reapedTicks() - reapedAtStart) / TICK).toFixed(1) };
      const sampledCpuS = noRoles();
      for (const { role, ticks: t } of ticks.values()) sampledCpuS[role] = +(sampledCpuS[role] + t / TICK).toFixed(2);
      return { peakMiB: peaks, cpuS, sampledCpuS };
    },
  };
}
