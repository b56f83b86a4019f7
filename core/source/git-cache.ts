/**
 * What the git cache keeps. Per URL: the object store holds only the commits whose trees are kept
 * (one pinned ref each; a fetch's other refs and every unreachable object are dropped after it), and
 * at most KEEP_TREES extracted trees. A URL's whole directory goes once no resolution has used it
 * for PULUMI_FLEET_GIT_CACHE_DAYS, under the same lock as a resolution.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { withLock } from "./lock";

export const KEEP_TREES = 8;
const PINNED = "refs/fleet/pinned/";
const USED_STAMP = "used";

export const pinnedRef = (commit: string) => `${PINNED}${commit}`;

/** Keeps the most recently used trees and returns their commits; older ones are re-extracted (or re-fetched) on demand. */
export function pruneTrees(trees: string): string[] {
  const entries = fs
    .readdirSync(trees)
    .filter((n) => /^[0-9a-f]{40}$/.test(n))
    .map((n) => ({ n, t: fs.statSync(path.join(trees, n)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const { n } of entries.slice(KEEP_TREES)) fs.rmSync(path.join(trees, n), { recursive: true, force: true });
  return entries.slice(0, KEEP_TREES).map((e) => e.n);
}

/** The refs to delete so that only the kept commits stay reachable (a pure decision). */
export function refsToDrop(refs: string[], keptCommits: string[]): string[] {
  const kept = new Set(keptCommits.map(pinnedRef));
  return refs.filter((r) => !kept.has(r));
}

/** Drops every ref but the kept commits' pins, then every object they do not reach. */
export async function pruneStore(git: (args: string[], input?: string) => Promise<string>, keptCommits: string[]): Promise<void> {
  const refs = (await git(["for-each-ref", "--format=%(refname)"])).split("\n").filter((r) => r);
  const drop = refsToDrop(refs, keptCommits);
  if (drop.length) await git(["update-ref", "--stdin"], drop.map((r) => `delete ${r}\n`).join(""));
  await git(["repack", "-a", "-d", "-q"]);
  await git(["prune", "--expire=now"]);
}

/** Bytes of the store's packs (a fetch writes one, see transfer.unpackLimit in git-env.ts). */
export function packBytes(store: string): number {
  const packs = path.join(store, "objects", "pack");
  let total = 0;
  for (const name of fs.existsSync(packs) ? fs.readdirSync(packs) : []) {
    try {
      total += fs.statSync(path.join(packs, name)).size;
    } catch {
      // renamed or removed by git meanwhile
    }
  }
  return total;
}

/** Marks a URL's directory as used now (the sweep's clock). */
export function markUsed(dir: string): void {
  fs.writeFileSync(path.join(dir, USED_STAMP), "");
}

/** When a resolution last used the directory: its stamp, or for a store older than stamps its newest tree. */
function lastUsedMs(dir: string): number {
  const mtime = (p: string) => {
    try {
      return fs.statSync(p).mtimeMs;
    } catch {
      return undefined;
    }
  };
  const stamp = mtime(path.join(dir, USED_STAMP));
  if (stamp !== undefined) return stamp;
  const trees = path.join(dir, "trees");
  const treeTimes = fs.existsSync(trees) ? fs.readdirSync(trees).map((n) => mtime(path.join(trees, n)) ?? 0) : [];
  return Math.max(0, ...treeTimes, mtime(path.join(dir, "repo.git")) ?? 0);
}

/**
 * Removes the directories of URLs no resolution used for `maxAgeMs`; one that is locked (in use) is
 * left for a later sweep. Returns the removed directories.
 */
export async function sweepUnusedStores(gitRoot: string, maxAgeMs: number, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of fs.existsSync(gitRoot) ? fs.readdirSync(gitRoot) : []) {
    const dir = path.join(gitRoot, name);
    try {
      if (!fs.statSync(dir).isDirectory() || now - lastUsedMs(dir) < maxAgeMs) continue;
      const stale = await withLock(
        path.join(dir, "lock"),
        async () => {
          if (now - lastUsedMs(dir) < maxAgeMs) return false; // used while we waited
          for (const entry of fs.readdirSync(dir)) if (entry !== "lock") fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
          return true;
        },
        0,
      );
      if (!stale) continue;
      fs.rmdirSync(dir); // fails, harmlessly, if a resolution started in it meanwhile
      removed.push(dir);
    } catch {
      // in use or already gone: a later sweep decides again
    }
  }
  return removed;
}
