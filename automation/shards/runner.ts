/**
 * Runs one operation on every shard of an environment, at most `parallel` at a time. Each shard runs
 * the operations in a process of its own (automation/shards/shard-process.ts, not the CLI): an engine,
 * a lock and a state of its own, and a heap of its own. One process could host them all (the Pulumi
 * SDK keeps each inline program's state apart), but a shard's crash or exhausted memory would then end
 * every shard, and the SDK hands an uncaught error of any inline program to every program running in
 * the process (automation/server.js installs process-wide handlers per run): a failed shard must not
 * fail the others. Their output is streamed line by line with the shard's name in front, and each hands
 * back its outcome for the merged report (automation/shards/reports.ts).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawn } from "node:child_process";
import * as readline from "node:readline";
import { engineMemoryEnv } from "../engine/cli-memory";
import { stopSignal } from "../../core/base/stop-signal";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { guarded } from "../engine/process-guard";
import type { OperationFlags, OperationOutcome, OperationRequest } from "../run-operation";
import type { ShardJob } from "./shard-process";
import { programCodeHash } from "../engine/program-code";

export interface ShardRun {
  shard: string;
  stack: string;
  exitCode: number;
  /** What the shard's process handed back (undefined if it died before). */
  result?: OperationOutcome;
  durationMs: number;
  /** When it finished (Date.now()), to tell when a change reached the clusters of one shard. */
  finishedAt: number;
  /** Left out, and why (automation/shards/inputs.ts): nothing ran. */
  skipped?: string;
}

export interface RunShardsOptions {
  op: OperationRequest["op"];
  /** `deploy`: this shard's decided inputs and commits (automation/shards/run.ts). */
  shards: { shard: string; stack: string; deploy?: OperationRequest["deploy"] }[];
  /** The settings every shard runs with; the reports' files are merged by the caller, never written per shard. */
  flags: Omit<OperationFlags, "html" | "summaryMd" | "eventsJson">;
  parallel: number;
  /** Each output line, already prefixed with the shard's name. */
  line: (text: string, stream: "stdout" | "stderr") => void;
}

export const SHARD_PROCESS = path.join(PROJECT_DIR, "automation", "shards", "shard-process.ts");

export async function runShards(o: RunShardsOptions): Promise<ShardRun[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-shards-"));
  const runs: ShardRun[] = new Array(o.shards.length);
  let next = 0;
  const worker = async () => {
    while (next < o.shards.length) {
      const i = next++;
      runs[i] = await runOne(o, o.shards[i], path.join(dir, String(i)));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.parallel, o.shards.length)) }, worker));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return runs;
}

function runOne(o: RunShardsOptions, s: RunShardsOptions["shards"][number], files: string): Promise<ShardRun> {
  const started = Date.now();
  const job: ShardJob = {
    request: { op: o.op, stack: s.stack, flags: o.flags, deploy: s.deploy, merged: true },
    outcomeFile: `${files}.outcome.json`,
    codeHash: programCodeHash(),
  };
  fs.writeFileSync(`${files}.job.json`, JSON.stringify(job));
  // Under proc-guard: should this process die, the shard's process and all it started end too.
  const [file, argv] = guarded(process.execPath, [path.join(PROJECT_DIR, "scripts", "run-ts.js"), SHARD_PROCESS, `${files}.job.json`]);
  // A stopped run passes the signal on (the guard forwards it); a shard not started yet is not started.
  // The shards running at once share the engine's memory limit (cli-memory.ts): each shard's engine takes the GOMEMLIMIT given here.
  const env = { ...process.env, GOMEMLIMIT: engineMemoryEnv(o.parallel).GOMEMLIMIT };
  const child = spawn(file, argv, { cwd: PROJECT_DIR, stdio: ["ignore", "pipe", "pipe"], env, signal: stopSignal, killSignal: "SIGTERM" });
  child.on("error", () => undefined); // the abort itself: the shard's exit is reported below
  const prefix = `[${s.shard}] `;
  const pipe = (stream: NodeJS.ReadableStream, name: "stdout" | "stderr") =>
    new Promise<void>((resolve) =>
      readline
        .createInterface({ input: stream, crlfDelay: Infinity })
        .on("line", (l) => o.line(prefix + l, name))
        .on("close", resolve),
    );
  const piped = Promise.all([pipe(child.stdout!, "stdout"), pipe(child.stderr!, "stderr")]);
  return new Promise((resolve) => {
    child.on("close", async (code, signal) => {
      await piped;
      let result: OperationOutcome | undefined;
      try {
        result = JSON.parse(fs.readFileSync(job.outcomeFile, "utf8"));
      } catch {
        result = undefined;
      }
      resolve({ shard: s.shard, stack: s.stack, exitCode: code ?? (signal ? 128 : 1), result, durationMs: Date.now() - started, finishedAt: Date.now() });
    });
  });
}
