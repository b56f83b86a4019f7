/**
 * The record of a stack's last failed `up` (its deployments show ErrApplied in `status` until an `up`
 * succeeds), kept where the state is so that `status` on every machine agrees, as the crash journal is
 * (journal-store.ts):
 *  - file backend: <state dir>/last-failed-up.<stack>.json, beside the state;
 *  - PostgreSQL backend: one row per stack in table pulumi_fleet_failed_up of the same database;
 *  - other backends (s3, gs, azblob, Pulumi Cloud): this machine's own directory (backend.ts localDir),
 *    so there `status` on another machine does not see this machine's failed `up`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Backend } from "./backend";
import { isPostgresUrl, withTable } from "./postgres-table";

export interface FailedUp {
  /** The deployment keys (core/desired/keys.ts) whose last `up` failed. */
  failed: string[];
  /** What the failed `up` said, shortened. */
  message: string;
}

export interface FailedUpStore {
  /** Where it is, for messages. */
  where: string;
  read(): Promise<FailedUp | undefined>;
  write(record: FailedUp): Promise<void>;
  clear(): Promise<void>;
}

const MAX_MESSAGE = 2000;

export function failedUpStore(backend: Backend, project: string, stack: string): FailedUpStore {
  if (backend.fileDir) return fileStore(path.join(backend.fileDir, `last-failed-up.${stack}.json`));
  // Written by an earlier version on this machine: still read until the shared record replaces it.
  const local = fileStore(path.join(backend.localDir, `last-failed-up.${stack}.json`));
  if (isPostgresUrl(backend.url)) return postgresStore(backend.url, project, stack, local);
  return local;
}

function fileStore(file: string): FailedUpStore {
  return {
    where: file,
    read: async () => (fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as FailedUp) : undefined),
    write: async (r) => {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify({ ...r, message: r.message.slice(0, MAX_MESSAGE) }, null, 2));
    },
    clear: async () => fs.rmSync(file, { force: true }),
  };
}

const TABLE = "pulumi_fleet_failed_up";

function postgresStore(url: string, project: string, stack: string, legacy: FailedUpStore): FailedUpStore {
  const withClient = <T>(f: (c: import("pg").Client) => Promise<T>) =>
    withTable(url, TABLE, "project text not null, stack text not null, record jsonb not null, primary key (project, stack)", f);
  return {
    where: `table ${TABLE} of the state database`,
    read: async () => {
      const rows = await withClient((c) => c.query(`select record from ${TABLE} where project = $1 and stack = $2`, [project, stack]));
      return rows.rows.length ? (rows.rows[0].record as FailedUp) : legacy.read();
    },
    write: async (r) => {
      await withClient((c) =>
        c.query(`insert into ${TABLE} (project, stack, record) values ($1, $2, $3) on conflict (project, stack) do update set record = excluded.record`, [
          project,
          stack,
          JSON.stringify({ ...r, message: r.message.slice(0, MAX_MESSAGE) }),
        ]),
      );
      await legacy.clear();
    },
    clear: async () => {
      await withClient((c) => c.query(`delete from ${TABLE} where project = $1 and stack = $2`, [project, stack]));
      await legacy.clear();
    },
  };
}
