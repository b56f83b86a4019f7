/**
 * A cross-process lock on a directory of the git cache, so two runs at once (two stacks, a preview and
 * an up) never write the same clone concurrently. mkdir is atomic; the owner's pid lets a later run
 * break a lock left by a process that died.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { throwIfStopped } from "../stop-signal";

const POLL_MS = 50;

export async function withLock<T>(lockDir: string, fn: () => Promise<T>, timeoutMs = 10 * 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  fs.mkdirSync(path.dirname(lockDir), { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, "owner"), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        // The directory was removed as unused (git-cache.ts) while we waited: it is ours to create again.
        fs.mkdirSync(path.dirname(lockDir), { recursive: true });
        continue;
      }
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      if (isStale(lockDir)) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for lock ${lockDir}`);
      throwIfStopped();
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

function isStale(lockDir: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(lockDir, "owner"), "utf8"));
  } catch {
    // The owner may be between mkdir and writing its pid: stale only if that state is old.
    try {
      return Date.now() - fs.statSync(lockDir).mtimeMs > 30_000;
    } catch {
      return false;
    }
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}
