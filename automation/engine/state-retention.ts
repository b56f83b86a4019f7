/**
 * How much of a stack's history a DIY backend (file, PostgreSQL) keeps: the decision, a value from the
 * listing of the stack's two folders and the operator's setting. The Pulumi CLI (pkg/backend/diy at
 * v3.259.0, state.go addToHistory and backupStack) writes per update, and never removes:
 *  - .pulumi/history/<project>/<stack>/<stack>-<unix ns>.history.json: the update's entry (kind, result,
 *    times, changes, config), what `pulumi stack history` lists, small;
 *  - beside it <stack>-<unix ns>.checkpoint.json: a full copy of the state the update left;
 *  - .pulumi/backups/<project>/<stack>/<stack>.<unix ns>.json: another full copy of the same state,
 *    unless PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS (or PULUMI_DISABLE_CHECKPOINT_BACKUPS) is set;
 * each may end in .gz or .zst (PULUMI_DIY_BACKEND_GZIP). Kept: the newest `updates` entries, the newest
 * `copies` checkpoint copies and the newest `copies` backups. Anything else in those folders (a name of
 * another form) is left as it is. The state itself (.pulumi/stacks) is never in the listing.
 */
import { positiveNumber } from "../../core/base/operator-env";

export interface Retention {
  /** History entries kept (`pulumi stack history`): at least 1, which the history mark, the shards' skip and the CLI's latest config read. */
  updates: number;
  /** Full copies of the state kept: checkpoint copies in the history, and backups each. */
  copies: number;
}

export const RETENTION_DEFAULTS: Retention = { updates: 10, copies: 3 };

/** The operator's setting (PULUMI_FLEET_HISTORY_UPDATES, PULUMI_FLEET_STATE_COPIES): a value that is not a positive whole number is an error naming it. */
export function retentionOf(env: NodeJS.ProcessEnv = process.env): Retention {
  const whole = (name: string, fallback: number) => {
    const n = positiveNumber(env, name, fallback);
    if (!Number.isInteger(n)) throw new Error(`${name}=${JSON.stringify(env[name])}: expected a whole number, 1 or more`);
    return n;
  };
  return { updates: whole("PULUMI_FLEET_HISTORY_UPDATES", RETENTION_DEFAULTS.updates), copies: whole("PULUMI_FLEET_STATE_COPIES", RETENTION_DEFAULTS.copies) };
}

/** File names (no folder) in the stack's history folder and in its backups folder. */
export interface StackFolders {
  history: string[];
  backups: string[];
}

const COMPRESSED = "(?:\\.gz|\\.zst)?";
const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The names this rule drops, per folder: never a name it does not recognise as this stack's entry, copy or backup. */
export function toDrop(stack: string, listing: StackFolders, keep: Retention): StackFolders {
  const name = escaped(stack);
  const entry = new RegExp(`^${name}-(\\d+)\\.history\\.json${COMPRESSED}$`);
  const copy = new RegExp(`^${name}-(\\d+)\\.checkpoint\\.json${COMPRESSED}$`);
  const backup = new RegExp(`^${name}\\.(\\d+)\\.json${COMPRESSED}$`);
  return {
    history: [...beyondNewest(listing.history, entry, keep.updates), ...beyondNewest(listing.history, copy, keep.copies)],
    backups: beyondNewest(listing.backups, backup, keep.copies),
  };
}

/** The names matching `form` other than the newest `kept` by their time (ns since the epoch, compared as integers). */
function beyondNewest(names: string[], form: RegExp, kept: number): string[] {
  const timed = names.flatMap((n) => {
    const m = form.exec(n);
    return m ? [{ n, t: BigInt(m[1]) }] : [];
  });
  timed.sort((a, b) => (a.t === b.t ? (a.n < b.n ? 1 : -1) : a.t < b.t ? 1 : -1));
  return timed
    .slice(Math.max(kept, 1))
    .map((x) => x.n)
    .sort();
}
