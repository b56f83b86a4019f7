/**
 * Where the crash journal (core/desired/journal.ts) lives: beside the state, in the same backend, so whoever
 * runs the next `up` of the stack (another checkout, another CI runner) finds it.
 *  - file backend: one file per entry in <state dir>/.pulumi-fleet-journal/<project>/<stack>/;
 *  - PostgreSQL backend: one row per entry in table pulumi_fleet_journal of the same database (node-postgres).
 * Other backends (s3, gs, azblob, Pulumi Cloud) have no journal here: their updates keep the engine's
 * checkpoint after every step (automation/operation/plan.ts), which needs none.
 * Only the program reads and writes it, while the engine holds the stack's lock.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import type { Client } from "pg";
import { isPostgresUrl, withTable } from "./postgres-table";
import { BUNDLE_DEPLOYMENT_TYPE } from "../../core/desired/types";
import { InventoryEntry } from "../../core/model/pair";
import { identityOf, JournalEntry } from "../../core/desired/journal";
import { clusterOfUrn } from "./steps";
import { Backend } from "./backend";

export interface JournalStore {
  /** Where it is, for messages. */
  where: string;
  /** Every entry, with the key that removes it. */
  list(): Promise<{ key: string; entry: JournalEntry }[]>;
  /** Adds an entry, durably, and returns its key. */
  add(entry: JournalEntry): Promise<string>;
  /** Removes these entries (each its own file or row, so an entry written meanwhile is never lost). */
  remove(keys: string[]): Promise<void>;
}

export function writerId(): string {
  return `${os.userInfo().username}@${os.hostname()} pid ${process.pid} at ${new Date().toISOString()}`;
}

/** The journal store of a stack on this backend, or undefined when the backend has none (see above). */
export function journalStore(backend: Backend, project: string, stack: string): JournalStore | undefined {
  if (backend.fileDir) return fileStore(path.join(backend.fileDir, ".pulumi-fleet-journal", project, stack));
  if (isPostgresUrl(backend.url)) return postgresStore(backend.url, project, stack);
  return undefined;
}

// Listed in the order written: the time, then this process's own count (two entries in one millisecond
// kept their order only by chance of their random suffix), then a random part against other processes.
let written = 0;
const newKey = () => `${Date.now()}-${process.pid}-${String(written++).padStart(8, "0")}-${randomBytes(4).toString("hex")}`;

function fileStore(dir: string): JournalStore {
  return {
    where: dir,
    async list() {
      if (!fs.existsSync(dir)) return [];
      return fs
        .readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .sort()
        .map((f) => ({ key: f, entry: JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")) as JournalEntry }));
    },
    async add(entry) {
      fs.mkdirSync(dir, { recursive: true });
      const key = `${newKey()}.json`;
      const tmp = path.join(dir, `${key}.tmp`);
      const fd = fs.openSync(tmp, "w");
      try {
        fs.writeSync(fd, JSON.stringify(entry));
        fs.fsyncSync(fd); // on disk before the engine applies anything
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, path.join(dir, key));
      const dirFd = fs.openSync(dir, "r");
      try {
        fs.fsyncSync(dirFd); // the rename itself survives a host crash
      } finally {
        fs.closeSync(dirFd);
      }
      return key;
    },
    async remove(keys) {
      for (const k of keys) fs.rmSync(path.join(dir, k), { force: true });
    },
  };
}

const TABLE = "pulumi_fleet_journal";

function postgresStore(url: string, project: string, stack: string): JournalStore {
  const withClient = <T>(f: (c: Client) => Promise<T>) =>
    withTable(url, TABLE, "project text not null, stack text not null, key text not null, entry jsonb not null, primary key (project, stack, key)", f);
  return {
    where: `table ${TABLE} of the state database`,
    list: () =>
      withClient(async (c) => {
        const r = await c.query(`select key, entry from ${TABLE} where project = $1 and stack = $2 order by key`, [project, stack]);
        return r.rows.map((row) => ({ key: row.key as string, entry: row.entry as JournalEntry }));
      }),
    add: (entry) =>
      withClient(async (c) => {
        const key = newKey();
        await c.query(`insert into ${TABLE} (project, stack, key, entry) values ($1, $2, $3, $4)`, [project, stack, key, JSON.stringify(entry)]);
        return key;
      }),
    remove: (keys) =>
      withClient(async (c) => {
        if (keys.length) await c.query(`delete from ${TABLE} where project = $1 and stack = $2 and key = any($3)`, [project, stack, keys]);
      }),
  };
}

/** identityOf (core/desired/journal.ts) of every Kubernetes object in an exported state: a BundleDeployment's inventory, and per-object resources. */
export function stateIdentities(deployment: { resources?: { urn: string; type: string; outputs?: Record<string, unknown> }[] } | undefined): Set<string> {
  const out = new Set<string>();
  for (const r of deployment?.resources ?? []) {
    const o = r.outputs;
    const cluster = clusterOfUrn(r.urn);
    if (r.type === BUNDLE_DEPLOYMENT_TYPE && cluster) {
      for (const id of (o?.inventory ?? []) as InventoryEntry[]) {
        out.add(
          identityOf({ cluster, apiVersion: id.group ? `${id.group}/${id.version}` : id.version, kind: id.kind, namespace: id.namespace, name: id.name }),
        );
      }
      continue;
    }
    // An earlier version's per-object resource: its outputs are the object.
    const object = o as { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } } | undefined;
    if (!r.type.startsWith("kubernetes:") || !cluster || !object?.apiVersion || !object.kind || !object.metadata?.name) continue;
    out.add(identityOf({ cluster, apiVersion: object.apiVersion, kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name }));
  }
  return out;
}
