/**
 * What was last said about each pair (events.ts Memory), kept where the state is, as the last failed
 * `up` is (failed-up-store.ts), so that a `status` run by a schedule on another machine does not repeat
 * a drift event a first one sent:
 *  - file backend: <state dir>/notified.<stack>.json;
 *  - PostgreSQL backend: one row per stack in table pulumi_fleet_notified of the same database;
 *  - other backends: this machine's own directory (backend.ts localDir).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Backend } from "../engine/backend";
import { isPostgresUrl, withTable } from "../engine/postgres-table";
import { Memory } from "./events";

export interface MemoryStore {
  /** undefined: nothing was ever kept (notifications just turned on). */
  read(): Promise<Memory | undefined>;
  write(memory: Memory): Promise<void>;
}

const TABLE = "pulumi_fleet_notified";

export function memoryStore(backend: Backend, project: string, stack: string): MemoryStore {
  if (isPostgresUrl(backend.url)) {
    const withClient = <T>(f: (c: import("pg").Client) => Promise<T>) =>
      withTable(backend.url, TABLE, "project text not null, stack text not null, memory jsonb not null, primary key (project, stack)", f);
    return {
      read: async () => {
        const rows = await withClient((c) => c.query(`select memory from ${TABLE} where project = $1 and stack = $2`, [project, stack]));
        return rows.rows.length ? (rows.rows[0].memory as Memory) : undefined;
      },
      write: async (memory) => {
        await withClient((c) =>
          c.query(`insert into ${TABLE} (project, stack, memory) values ($1, $2, $3) on conflict (project, stack) do update set memory = excluded.memory`, [
            project,
            stack,
            JSON.stringify(memory),
          ]),
        );
      },
    };
  }
  const file = path.join(backend.fileDir ?? backend.localDir, `notified.${stack}.json`);
  return {
    read: async () => (fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as Memory) : undefined),
    write: async (memory) => {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(memory));
      fs.renameSync(`${file}.tmp`, file);
    },
  };
}
