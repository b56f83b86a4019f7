/**
 * The `inputs` a shard's last update recorded (automation/shards/inputs.ts), if that update was a
 * successful `up` and nothing is pending. A file backend's folders answer without the CLI (three CLI
 * starts per shard were most of a 20-shard no-op's 16 s): the newest history entry (what
 * `pulumi stack history` lists first) and the root resource's outputs in the checkpoint. Any other
 * backend, or a file layout this code does not read (zstd compression, a checkpoint in two forms),
 * asks the CLI as before.
 */
import { resolveBackend } from "../engine/backend";
import { journalStore } from "../engine/journal-store";
import { openStack, PROJECT_NAME, runCli } from "../engine/stack";
import { runsStore } from "../runs/runs";
import { newestHistoryEntry } from "../engine/history-mark";
import { checkpointInFiles } from "../engine/checkpoint-file";

export const INPUTS_OUTPUT = "inputs";

export async function lastRecorded(stack: string): Promise<string | undefined> {
  const backend = resolveBackend();
  const pending = await journalStore(backend, PROJECT_NAME, stack)
    ?.list()
    .then((l) => l.length > 0);
  if (pending) return undefined;
  // A rollback's pin: its up re-applies the pinned run, whatever the inputs (automation/runs/pinned-up.ts).
  if ((await runsStore(backend, PROJECT_NAME, stack).read())?.pin) return undefined;
  const inFiles = backend.fileDir ? recordedInFiles(backend.fileDir, stack) : undefined;
  return inFiles ? inFiles.fingerprint : recordedByCli(stack);
}

/** undefined: not answerable from the files; else what they say (`fingerprint` undefined: nothing usable recorded). */
export function recordedInFiles(fileDir: string, stack: string): { fingerprint?: string } | undefined {
  const entry = newestHistoryEntry(fileDir, stack);
  if (entry === undefined) return undefined;
  if (entry === "none" || entry.kind !== "update" || entry.result !== "succeeded") return {};
  const resources = checkpointInFiles(fileDir, stack);
  if (!resources || resources === "none") return undefined;
  const value = resources.find((r) => r.type === "pulumi:pulumi:Stack")?.outputs?.[INPUTS_OUTPUT];
  return { fingerprint: typeof value === "string" && value ? value : undefined };
}

/** As the CLI says it (opened read only: a stack not created yet has recorded nothing, and creating it here would take its lock outside any operation). */
async function recordedByCli(stack: string): Promise<string | undefined> {
  const opened = await openStack({ stack, existing: true }).catch(() => undefined);
  if (!opened) return undefined;
  const [last] = await opened.history(1);
  if (!last || last.kind !== "update" || last.result !== "succeeded") return undefined;
  try {
    return (await runCli(opened, ["stack", "output", INPUTS_OUTPUT, "--stack", stack, "--non-interactive"])).trim() || undefined;
  } catch {
    return undefined; // no such output: the last update was not started by the shard runner
  }
}
