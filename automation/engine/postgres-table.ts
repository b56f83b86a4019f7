/**
 * One connection to a PostgreSQL state backend with a table of pulumi-fleet's own beside Pulumi's
 * (the crash journal, the last failed `up`), created on first use (node-postgres).
 */
import { Client } from "pg";

/** One connection for `f`, ended whatever `f` does. */
export async function withClient<T>(url: string, f: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await f(client);
  } finally {
    await client.end();
  }
}

export async function withTable<T>(url: string, table: string, columns: string, f: (c: Client) => Promise<T>): Promise<T> {
  return withClient(url, async (client) => {
    try {
      await client.query(`create table if not exists ${table} (${columns})`);
    } catch (err) {
      // Two stacks (shards) creating it at the same moment: PostgreSQL's "if not exists" can still race.
      if (!["23505", "42P07"].includes((err as { code?: string }).code ?? "")) throw err;
    }
    return f(client);
  });
}

export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

/**
 * What the Pulumi CLI puts before every key in its PostgreSQL table: the URL's path (the database name,
 * `postgres://…/fleet` gives `fleet/`), as it prefixes any DIY bucket but a file backend's
 * (pkg/backend/diy/backend.go at v3.259.0: blob.PrefixedBucket of the URL's path).
 */
export function pulumiKeyPrefix(url: string): string {
  const dir = decodeURIComponent(new URL(url).pathname).replace(/^\/+/, "");
  return dir === "" || dir.endsWith("/") ? dir : `${dir}/`;
}
