/**
 * An `up`'s run recorded once the engine finished it with every cluster reached (up.ts): its commits and
 * settings (credentials left out), and the rollback's pin as the run leaves it (runs.ts pinAfterRun).
 * A record that cannot be written is a warning, never the update's failure: the update did deploy.
 */
import * as fs from "node:fs";
import * as YAML from "yaml";
import { configFromStackFile, StackConfig } from "../../core/config/stack";
import { resolveBackend } from "../engine/backend";
import { PROJECT_NAME, stackFileOf } from "../engine/stack";
import type { OperationOptions } from "../operation/results";
import { pinText, RunPin, RunRecord, RunRef, runsKept, runsStore, withRun } from "./runs";
import { securePaths, withoutCredentials } from "./settings";

export interface RunFacts {
  run: RunRef;
  /** When the run began (ISO 8601). */
  at: string;
  ok: boolean;
  commits: Record<string, string>;
  settings: StackConfig;
}

/** Records the run; returns the pin it removed, if any (said by the caller and here as a warning). */
/** Records the run; says what it ended (a pin a plain up's new commits ended) and whether a pin is left (undefined: not recorded). */
export async function recordRun(options: OperationOptions, f: RunFacts, warn: (message: string) => void): Promise<{ unpinned?: RunPin; pinned?: boolean }> {
  const record: RunRecord = { ...f.run, at: f.at, ok: f.ok, commits: f.commits, settings: withoutCredentials(f.settings, secretsOfStackFile(options)) };
  const store = runsStore(resolveBackend(options), PROJECT_NAME, options.stack);
  let unpinned: RunPin | undefined;
  let pinned = false;
  try {
    await store.update((before) => {
      const r = withRun(before, record, runsKept());
      unpinned = r.unpinned;
      pinned = r.next.pin !== undefined;
      return r.next;
    });
  } catch (err) {
    warn(
      `warning: stack ${options.stack}: run ${f.run.id} could not be recorded in ${store.where} (a rollback cannot go back to it): ${(err as Error).message}`,
    );
    return {};
  }
  if (unpinned)
    warn(
      `stack ${options.stack}: this up deployed the current commits, so it ended the rollback (${pinText(unpinned)}): the next commit wins, and the watcher deploys again`,
    );
  return { ...(unpinned ? { unpinned } : {}), pinned };
}

/** Where the stack file keeps Pulumi secrets (any field): none when it cannot be read (the up read its configuration another way). */
function secretsOfStackFile(options: OperationOptions): ReturnType<typeof securePaths> {
  const file = stackFileOf(options);
  try {
    return fs.existsSync(file) ? securePaths(configFromStackFile(YAML.parse(fs.readFileSync(file, "utf8")), file)) : [];
  } catch {
    return [];
  }
}
