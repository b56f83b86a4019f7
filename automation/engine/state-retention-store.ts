/**
 * The act of the history retention (state-retention.ts decides): the stack's history and backups folders
 * listed and pruned where the Pulumi CLI keeps them, on the two DIY backends whose layout is known here:
 *  - file backend: <state dir>/.pulumi/{history,backups}/<project>/<stack>/;
 *  - PostgreSQL backend: the rows of Pulumi's table (pkg/backend/diy/postgres/schema.sql: `key` text
 *    primary key, `data`, `updated_at`; table `pulumi_state` unless the URL's `table` says otherwise)
 *    whose key is that folder's path, after the CLI's prefix (the URL's database name: postgres-table.ts
 *    pulumiKeyPrefix), followed by a name with no further `/`.
 * Other backends (s3, gs, azblob: the same layout, but no client here; Pulumi Cloud: its own history) are
 * left as the CLI leaves them. Run by the operations after each engine command that writes history, while
 * they hold the stack's lease (automation/operation/session.ts): a failure is a warning, never the
 * operation's failure.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Backend } from "./backend";
import { isPostgresUrl, pulumiKeyPrefix, withClient } from "./postgres-table";
import { fileBackendPath } from "./stack";
import { lockHolders } from "./locks";
import { Retention, retentionOf, StackFolders, toDrop } from "./state-retention";

export interface StackFolderStore {
  list(): Promise<StackFolders>;
  remove(names: StackFolders): Promise<void>;
}

/** The stack's folders in a file or PostgreSQL backend; undefined for any other, or a stack name with an organization or project. */
export function stackFolderStore(backend: Backend, stack: string): StackFolderStore | undefined {
  if (backend.fileDir) {
    const history = fileBackendPath(backend.fileDir, "history", stack);
    const backups = fileBackendPath(backend.fileDir, "backups", stack);
    if (!history || !backups) return undefined;
    const names = (dir: string) => {
      try {
        return fs.readdirSync(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw err;
      }
    };
    return {
      list: async () => ({ history: names(history), backups: names(backups) }),
      // Each with the attributes file the CLI's file bucket (gocloud.dev fileblob) writes beside every object.
      remove: async (drop) => {
        for (const [dir, names] of [
          [history, drop.history],
          [backups, drop.backups],
        ] as const)
          for (const n of names) for (const f of [n, `${n}.attrs`]) fs.rmSync(path.join(dir, f), { force: true });
      },
    };
  }
  if (!isPostgresUrl(backend.url)) return undefined;
  const url = backend.url;
  const history = folderKey(url, "history", stack);
  const backups = folderKey(url, "backups", stack);
  if (!history || !backups) return undefined;
  const table = new URL(url).searchParams.get("table") || "pulumi_state";
  const under = (prefix: string, keys: string[]) =>
    keys.filter((k) => k.startsWith(prefix) && !k.slice(prefix.length).includes("/")).map((k) => k.slice(prefix.length));
  return {
    list: () =>
      withClient(url, async (c) => {
        const { rows } = await c.query(`select key from ${c.escapeIdentifier(table)} where starts_with(key, $1) or starts_with(key, $2)`, [history, backups]);
        const keys = rows.map((r) => r.key as string);
        return { history: under(history, keys), backups: under(backups, keys) };
      }),
    remove: (drop) =>
      withClient(url, async (c) => {
        const keys = [...drop.history.map((n) => history + n), ...drop.backups.map((n) => backups + n)];
        if (keys.length) await c.query(`delete from ${c.escapeIdentifier(table)} where key = any($1)`, [keys]);
      }),
  };
}

/** A folder's key prefix in Pulumi's PostgreSQL table: the CLI's prefix, then the file backend's path, relative, with a trailing `/`. */
function folderKey(url: string, kind: "history" | "backups", stack: string): string | undefined {
  const dir = fileBackendPath("", kind, stack);
  return dir && `${pulumiKeyPrefix(url)}${dir.split(path.sep).join("/")}/`;
}

/** Prunes the stack's history and backups to the retention; how many of each were removed. */
export async function pruneStackHistory(
  store: StackFolderStore,
  stack: string,
  keep: Retention = retentionOf(),
): Promise<{ history: number; backups: number }> {
  const drop = toDrop(stack, await store.list(), keep);
  if (drop.history.length || drop.backups.length) await store.remove(drop);
  return { history: drop.history.length, backups: drop.backups.length };
}

/**
 * Runs an engine command, then prunes the stack's history, whatever the command's result (a failed
 * update writes its entry too), except when the command did not get the CLI's lock (it wrote nothing,
 * and another holder is at work) or the operation is being stopped.
 */
export async function thenPruned<T>(run: () => Promise<T>, prune: () => Promise<void>, stopped: () => boolean): Promise<T> {
  let result: T;
  try {
    result = await run();
  } catch (err) {
    if (!stopped() && !lockHolders((err as Error)?.message ?? "")) await prune();
    throw err;
  }
  if (!stopped()) await prune();
  return result;
}
