/**
 * The migration's act (core/migrate/migrate.ts decides): the state exported, migrated and imported
 * again under the stack's lock, before the update that completes the move. Only `up` runs it;
 * preview and status run the pure part in memory to say what the next `up` moves.
 */
import { Stack } from "@pulumi/pulumi/automation";
import { Migration, planMigration } from "../../core/migrate/migrate";
import { ExportedState } from "../../core/migrate/state-shape";

/**
 * Migrates the stack's state as it is now (exported again: the caller holds the lock, and what it
 * read before taking it may be stale). Imports only when the migration changed something.
 */
export async function migrateState(stack: Stack, configured: ReadonlySet<string>): Promise<Migration> {
  const exported = (await stack.exportStack()) as unknown as ExportedState;
  const migration = planMigration(exported, { configured });
  if (migration.changed) await stack.importStack(migration.state as never);
  return migration;
}
