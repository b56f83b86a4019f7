/**
 * The CLI's lock that a stopped command's own CLI left behind. The Pulumi CLI (pkg/backend/diy at
 * v3.259.0) takes the stack's lock before its update installs its SIGINT handler (backend.go: Lock,
 * then apply's NewScope), and holds it between a preview and its update: a SIGINT in those windows ends
 * it by Go's default action, with the lock left. So after a stop, once the CLI has exited, the locks
 * taken on this host during this command's lease by processes that are gone are that CLI's: removed
 * there and then, so that neither the next pulumi-fleet command nor a plain `pulumi` command finds
 * one. Any other lock is left (locks.ts decides those).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Backend } from "./backend";
import { isPostgresUrl, pulumiKeyPrefix, withClient } from "./postgres-table";
import { LeaseWindow, SLACK_MS } from "./stack-lease";

export interface StackLock {
  /** The lock object's key in the backend (a file path for a file backend). */
  key: string;
  pid: number;
  hostname: string;
  timestamp: string;
}

/** The locks `lease`'s command left: taken on its host while it held the stack, by a process now gone. */
export function ownLeftovers(locks: StackLock[], lease: LeaseWindow, now: number, alive: (pid: number) => boolean): StackLock[] {
  return locks.filter((l) => {
    const taken = Date.parse(l.timestamp);
    return l.hostname === lease.host && taken >= lease.startedAt - SLACK_MS && taken <= now + SLACK_MS && !alive(l.pid);
  });
}

export interface StackLockStore {
  list(): Promise<StackLock[]>;
  remove(keys: string[]): Promise<void>;
}

/** Where a DIY backend keeps the stack's locks: the project layout, and the layout before projects. */
function lockPrefixes(project: string, stack: string): string[] {
  return [`.pulumi/locks/organization/${project}/${stack}/`, `.pulumi/locks/${stack}/`];
}

function parsed(key: string, data: unknown): StackLock | undefined {
  const d = (typeof data === "string" ? JSON.parse(data) : data) as Partial<StackLock>;
  return typeof d?.pid === "number" && typeof d.hostname === "string" && typeof d.timestamp === "string"
    ? { key, pid: d.pid, hostname: d.hostname, timestamp: d.timestamp }
    : undefined;
}

/** The stack's locks in a file or PostgreSQL backend; undefined for any other (the next command judges them). */
export function stackLockStore(backend: Backend, project: string, stack: string): StackLockStore | undefined {
  const prefixes = lockPrefixes(project, stack);
  if (backend.fileDir) {
    const root = backend.fileDir;
    return {
      list: async () =>
        prefixes.flatMap((p) => {
          const dir = path.join(root, p);
          if (!fs.existsSync(dir)) return [];
          return fs
            .readdirSync(dir)
            .filter((f) => f.endsWith(".json"))
            .flatMap((f) => {
              try {
                return [parsed(path.join(dir, f), fs.readFileSync(path.join(dir, f), "utf8"))].filter((l): l is StackLock => !!l);
              } catch {
                return []; // removed meanwhile, or not a lock
              }
            });
        }),
      remove: async (keys) => keys.forEach((k) => fs.rmSync(k, { force: true })),
    };
  }
  if (isPostgresUrl(backend.url)) {
    const table = new URL(backend.url).searchParams.get("table") || "pulumi_state";
    // The CLI's keys start with the URL's database name (postgres-table.ts pulumiKeyPrefix).
    const keyPrefixes = prefixes.map((p) => pulumiKeyPrefix(backend.url) + p);
    return {
      list: () =>
        withClient(backend.url, async (c) => {
          const { rows } = await c.query(
            `select key, data from ${c.escapeIdentifier(table)} where ${keyPrefixes.map((_, i) => `starts_with(key, $${i + 1})`).join(" or ")}`,
            keyPrefixes,
          );
          return rows.map((r) => parsed(r.key, r.data)).filter((l): l is StackLock => !!l);
        }),
      remove: (keys) => withClient(backend.url, async (c) => void (await c.query(`delete from ${c.escapeIdentifier(table)} where key = any($1)`, [keys]))),
    };
  }
  return undefined;
}
