/**
 * One JSON record per stack, kept where the stack's state is so that every machine reads the same
 * (the last failed `up`, what the notifications last said):
 *  - file backend: <state dir>/<file>.<stack>.json beside the state, written whole or not at all
 *    (a temporary file renamed over the old);
 *  - PostgreSQL backend: one row per (project, stack) in a table of pulumi-fleet's own in the same
 *    database (postgres-table.ts), the record a jsonb column;
 *  - other backends (s3, gs, azblob, Pulumi Cloud): this machine's own directory (backend.ts localDir),
 *    so there another machine does not see it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Backend } from "./backend";
import { isPostgresUrl, withTable } from "./postgres-table";
import { withLock } from "../../core/source/lock";

export interface StackRecordStore<T> {
  /** Where it is, for messages. */
  where: string;
  /** undefined: nothing was ever written (or it was cleared). */
  read(): Promise<T | undefined>;
  write(record: T): Promise<void>;
  clear(): Promise<void>;
  /** Reads and rewrites the record as one step: no other update of it runs in between (on any machine that sees the store). */
  update(change: (record: T | undefined) => T): Promise<T>;
}

export interface StackRecordKind {
  /** The file's name before `.<stack>.json`. */
  file: string;
  /** The PostgreSQL table and its jsonb column (names an earlier version created: kept). */
  table: string;
  column: string;
  /**
   * With a PostgreSQL backend, a record an earlier version wrote in this machine's directory is still
   * read until the shared one is written, and removed then.
   */
  readsLocalBefore?: boolean;
}

export function stackRecordStore<T>(backend: Backend, project: string, stack: string, kind: StackRecordKind): StackRecordStore<T> {
  const name = `${kind.file}.${stack}.json`;
  if (backend.fileDir) return fileStore<T>(path.join(backend.fileDir, name));
  const local = fileStore<T>(path.join(backend.localDir, name));
  if (isPostgresUrl(backend.url)) return postgresStore<T>(backend.url, project, stack, kind, kind.readsLocalBefore ? local : undefined);
  return local;
}

/** Whether every machine that runs the stack reads the same records (file and PostgreSQL backends); else this machine's own. */
export function recordsShared(backend: Backend): boolean {
  return !!backend.fileDir || isPostgresUrl(backend.url);
}

function fileStore<T>(file: string): StackRecordStore<T> {
  const read = () => (fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as T) : undefined);
  const write = (record: T) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    fs.writeFileSync(temp, JSON.stringify(record, null, 2));
    fs.renameSync(temp, file);
  };
  return {
    where: file,
    read: async () => read(),
    write: async (record) => write(record),
    clear: async () => fs.rmSync(file, { force: true }),
    // Held for one read and one write: a holder that died mid-way is outlived by the lock's lease (core/source/lock.ts).
    update: (change) =>
      withLock(`${file}.lock`, async () => {
        const next = change(read());
        write(next);
        return next;
      }),
  };
}

function postgresStore<T>(url: string, project: string, stack: string, kind: StackRecordKind, before?: StackRecordStore<T>): StackRecordStore<T> {
  const { table, column } = kind;
  const withClient = <R>(f: (c: import("pg").Client) => Promise<R>) =>
    withTable(url, table, `project text not null, stack text not null, ${column} jsonb not null, primary key (project, stack)`, f);
  return {
    where: `table ${table} of the state database`,
    read: async () => {
      const rows = await withClient((c) => c.query(`select ${column} from ${table} where project = $1 and stack = $2`, [project, stack]));
      return rows.rows.length ? (rows.rows[0][column] as T) : before?.read();
    },
    write: async (record) => {
      await withClient((c) =>
        c.query(
          `insert into ${table} (project, stack, ${column}) values ($1, $2, $3) on conflict (project, stack) do update set ${column} = excluded.${column}`,
          [project, stack, JSON.stringify(record)],
        ),
      );
      await before?.clear();
    },
    clear: async () => {
      await withClient((c) => c.query(`delete from ${table} where project = $1 and stack = $2`, [project, stack]));
      await before?.clear();
    },
    // One transaction holding an advisory lock on (table, project, stack): PostgreSQL releases it with the transaction or the connection.
    update: (change) =>
      withClient(async (c) => {
        await c.query("begin");
        try {
          await c.query("select pg_advisory_xact_lock(hashtext($1))", [`${table}/${project}/${stack}`]);
          const rows = await c.query(`select ${column} from ${table} where project = $1 and stack = $2`, [project, stack]);
          const next = change(rows.rows.length ? (rows.rows[0][column] as T) : undefined);
          await c.query(
            `insert into ${table} (project, stack, ${column}) values ($1, $2, $3) on conflict (project, stack) do update set ${column} = excluded.${column}`,
            [project, stack, JSON.stringify(next)],
          );
          await c.query("commit");
          return next;
        } catch (err) {
          await c.query("rollback").catch(() => undefined);
          throw err;
        }
      }),
  };
}
