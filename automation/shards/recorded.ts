/**
 * The `inputs` a shard's last update recorded (automation/shards/inputs.ts), if that update was a
 * successful `up` and nothing is pending. A file backend's folders answer without the CLI (three CLI
 * starts per shard were most of a 20-shard no-op's 16 s): the newest history entry (what
 * `pulumi stack history` lists first) and the root resource's outputs in the checkpoint. Any other
 * backend, or a file layout this code does not read (zstd compression, a checkpoint in two forms),
 * asks the CLI as before.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { gunzipSync } from "node:zlib";
import { resolveBackend } from "../engine/backend";
import { journalStore } from "../engine/journal-store";
import { fileBackendPath, openStack, PROJECT_NAME, projectLayout, runCli } from "../engine/stack";
import { runsStore } from "../runs/runs";

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
  const historyDir = fileBackendPath(fileDir, "history", stack);
  const stateBase = fileBackendPath(fileDir, "stacks", stack);
  // A backend from before project folders (.pulumi/stacks/<stack>.json) is the CLI's to read.
  if (!historyDir || !stateBase || !projectLayout(fileDir)) return undefined;
  let names: string[];
  try {
    names = fs.readdirSync(historyDir);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? {} : undefined;
  }
  if (names.some((n) => n.endsWith(".zst"))) return undefined;
  // <stack>-<unix ns>.history.json[.gz]: names of one length until 2286, so the last in order is the newest.
  const newest = names
    .filter((n) => /\.history\.json(\.gz)?$/.test(n))
    .sort()
    .pop();
  if (!newest) return {};
  const entry = readJson(path.join(historyDir, newest)) as { kind?: string; result?: string } | undefined;
  if (!entry) return undefined;
  if (entry.kind !== "update" || entry.result !== "succeeded") return {};
  const resources = checkpointInFiles(fileDir, stack);
  if (!resources || resources === "none") return undefined;
  const value = resources.find((r) => r.type === "pulumi:pulumi:Stack")?.outputs?.[INPUTS_OUTPUT];
  return { fingerprint: typeof value === "string" && value ? value : undefined };
}

export interface CheckpointResource {
  urn?: string;
  type?: string;
  outputs?: Record<string, unknown>;
}

/**
 * A file backend's latest checkpoint of the stack, its resources: "none" when it has no state file (never
 * created, or removed), undefined when this code does not read that layout (before project folders, zstd,
 * the state in two forms): the CLI's to answer.
 */
export function checkpointInFiles(fileDir: string, stack: string): CheckpointResource[] | "none" | undefined {
  const stateBase = fileBackendPath(fileDir, "stacks", stack);
  if (!stateBase || !projectLayout(fileDir) || fs.existsSync(`${stateBase}.json.zst`)) return undefined;
  const states = [".json", ".json.gz"].map((ext) => stateBase + ext).filter((f) => fs.existsSync(f));
  if (states.length === 0) return "none";
  if (states.length > 1) return undefined;
  const state = readJson(states[0]) as { checkpoint?: { latest?: { resources?: CheckpointResource[] } | null } } | undefined;
  if (!state?.checkpoint) return undefined;
  return state.checkpoint.latest?.resources ?? [];
}

function readJson(file: string): unknown {
  try {
    const bytes = fs.readFileSync(file);
    return JSON.parse((file.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8"));
  } catch {
    return undefined;
  }
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
