/**
 * The migration's act (core/migrate/migrate.ts decides): the state exported, migrated and imported
 * again under the stack's lock, before the update that completes the move. Only `up` runs it;
 * preview and status run the pure part in memory (migratedView) to say what the next `up` moves, and
 * compute their desired state from the state it would leave.
 */
import { Stack } from "@pulumi/pulumi/automation";
import { Migration, planMigration } from "../../core/migrate/migrate";
import { ExportedState } from "../../core/migrate/state-shape";
import { CURRENT_LAYOUT, layoutOf } from "../../core/migrate/layouts";
import { StackState, stateOf } from "./deployed-objects";
import { Adoptions, pairAdoptions, retiringPairs, setupAdoptions } from "../../core/migrate/adoptions";
import { DesiredState } from "../../core/desired/types";

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

/** A state read, seen through the migration in memory (preview, status, the program's inputs). */
export interface MigratedView {
  migration?: Migration;
  /** The state as the migration leaves it: what the desired state is computed from, so it reads only the current layout. */
  state: StackState;
  /** The name the engine's state still holds each renamed pair under (the program's aliases until an `up` imports the migration). */
  namesInState: Record<string, string>;
}

/**
 * The state as the migration would leave it, decided in memory from a state read (nothing imported):
 * the same StackState when the state is of the current layout. `configured`: the stack's clusters, read only for an earlier layout.
 */
export async function migratedView(read: StackState, configured: () => Promise<ReadonlySet<string>>): Promise<MigratedView> {
  if (layoutOf(read.resources) === CURRENT_LAYOUT) return { state: read, namesInState: {} };
  const migration = planMigration({ deployment: { resources: read.resources, pending_operations: read.pending } }, { configured: await configured() });
  return { migration, state: migration.changed ? stateOf(migration.state) : read, namesInState: migration.aliases };
}

/**
 * What the program's pairs and setups adopt of an earlier version's resources the state (as the
 * migration leaves it) holds, given the desired state computed from it: one value (core/migrate/adoptions.ts).
 */
export function adoptionsFor(state: StackState, desired: DesiredState, configured: ReadonlySet<string>, leftOut?: ReadonlySet<string>): Adoptions {
  const pairs = pairAdoptions(state.deployed);
  return {
    setups: setupAdoptions(state.legacySetups),
    pairs,
    retiring: retiringPairs(pairs, new Set(desired.deployments.map((d) => d.key)), configured, leftOut),
  };
}
