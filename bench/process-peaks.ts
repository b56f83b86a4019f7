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
  /** Peak resident memory per role, MiB (a child's as last read before it ended). */
  peakMiB: Record<Role, number>;
  /**
   * CPU seconds (user + system) during the step, exact: this process's (the program), and that of every
   * descendant reaped during the step (the kernel adds a reaped child's time to its parent's, so the
   * Pulumi CLI's, the provider's and fleet-render's arrive here when they end; sampling them instead
   * missed the CLI's work after the program's last sample).
   */
  cpuS: { program: number; children: number };
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

/** Samples until stop() is called; stop() gives the peak memory per role and the CPU time of the step. */
export function samplePeaks(everyMs = 200): { stop: () => ProcessFigures } {
  fs.writeFileSync("/proc/self/clear_refs", "5"); // 5: reset this process's peak resident size to its current size
  const peaks: Record<Role, number> = { program: 0, pulumi: 0, "language host": 0, provider: 0, "fleet-render": 0, other: 0 };
  const cpuAtStart = process.cpuUsage();
  const reapedAtStart = reapedTicks();
  const sample = () => {
    for (const pid of [process.pid, ...descendants(process.pid)]) {
      const kib = Number(/VmHWM:\s+(\d+)/.exec(read(`/proc/${pid}/status`) ?? "")?.[1] ?? 0);
      const role = pid === process.pid ? "program" : roleOf(pid);
      peaks[role] = Math.max(peaks[role], Math.round(kib / 1024));
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
      return { peakMiB: peaks, cpuS };
    },
  };
}
