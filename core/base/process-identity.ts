/**
 * Who holds a lock, precisely enough to prove it gone (issue 53). A pid alone proves nothing: two
 * containers with one hostname have their own pids, and pids are reused. A process is known by its
 * kernel boot (boot_id), its pid namespace (the inode /proc/self/ns/pid names) and its pid with its start
 * time (field 22 of /proc/<pid>/stat). A waiter in the same boot and pid namespace sees the same
 * processes: there, a holder whose pid is gone, or now belongs to a process started at another time, is
 * proven gone. Anywhere else (another container, host or VM) nothing is proven; the lease decides.
 */
import * as fs from "node:fs";

export interface ProcessIdentity {
  boot: string;
  pidNs: string;
  pid: number;
  /** Start time in clock ticks since boot. */
  start: string;
}

function startOf(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** This process's identity (undefined where /proc says nothing: then nothing is ever proven by it). */
export function processIdentity(pid = process.pid): ProcessIdentity | undefined {
  try {
    const start = startOf(pid);
    if (start === undefined) return undefined;
    return { boot: fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(), pidNs: fs.readlinkSync("/proc/self/ns/pid"), pid, start };
  } catch {
    return undefined;
  }
}

/** Whether this process sees the processes of the one `id` names (same boot, same pid namespace): its pids mean the same here. */
export function seesProcessesOf(id: ProcessIdentity | undefined, here: ProcessIdentity | undefined = processIdentity()): boolean {
  return !!id && !!here && id.boot === here.boot && id.pidNs === here.pidNs;
}

/** Whether the process `id` names is proven gone, from here. */
export function provenGone(id: ProcessIdentity | undefined, here: ProcessIdentity | undefined = processIdentity()): boolean {
  return seesProcessesOf(id, here) && startOf(id!.pid) !== id!.start;
}
