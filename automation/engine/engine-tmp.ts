/**
 * A private temporary directory for the engine's processes (TMPDIR). The Kubernetes provider writes
 * each cluster's kubeconfig, credentials included, to a temporary file it never removes; left in the
 * shared /tmp they pile up, one per cluster per operation. Here they live in a 0700 directory of this
 * process, removed when it exits; directories of processes that died without cleaning up (kill -9)
 * are removed by the next run on this host.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const PREFIX = "pf-engine-";
let dir: string | undefined;

/** Whether a process exists (EPERM: it does, as another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Removes the directories of processes that are gone. */
function sweep(root: string): void {
  for (const name of fs.readdirSync(root)) {
    const pid = Number(/^pf-engine-(\d+)-/.exec(name)?.[1]);
    if (pid && pid !== process.pid && !processAlive(pid)) fs.rmSync(path.join(root, name), { recursive: true, force: true });
  }
}

/** This process's engine temporary directory (created on first use). */
export function engineTempDir(): string {
  if (dir && fs.existsSync(dir)) return dir;
  const root = os.tmpdir();
  sweep(root);
  dir = fs.mkdtempSync(path.join(root, `${PREFIX}${process.pid}-`));
  fs.chmodSync(dir, 0o700);
  const created = dir;
  process.once("exit", () => fs.rmSync(created, { recursive: true, force: true }));
  return dir;
}
