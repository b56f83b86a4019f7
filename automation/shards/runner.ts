/**
 * Runs one operation on every shard of an environment: each shard is its own `fleet.ts` process (an
 * engine, a lock and a state of its own; two inline programs cannot share one Node.js process, whose
 * Pulumi runtime is global), at most `parallel` at a time. Their output is streamed line by line with
 * the shard's name in front, and each writes its result as JSON for the merged report
 * (automation/shards/reports.ts). A failed shard does not stop the others.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawn } from "node:child_process";
import { stopSignal } from "../../core/stop-signal";
import * as readline from "node:readline";
import { PROJECT_DIR } from "../../core/pipeline";
import { guarded } from "../engine/process-guard";

export interface ShardRun {
  shard: string;
  stack: string;
  exitCode: number;
  /** What the shard's fleet.ts wrote with --result-json (undefined if it died before). */
  result?: ShardResult;
  durationMs: number;
  /** When it finished (Date.now()), to tell when a change reached the clusters of one shard. */
  finishedAt: number;
  /** Left out, and why (automation/shards/inputs.ts): nothing ran. */
  skipped?: string;
}

/** The --result-json of fleet.ts: the operation's result, or its error and what changed before it. */
export interface ShardResult {
  ok: boolean;
  error?: string;
  changes?: Record<string, number>;
  events?: import("../reports/deploy-events").DeployEvent[];
  summaryMarkdown?: string;
  prunes?: import("../reports/preview-report").Prune[];
  status?: import("../reports/status").StatusReport;
}

export interface RunShardsOptions {
  op: string;
  /** `args`: options for this shard only. */
  shards: { shard: string; stack: string; args?: string[] }[];
  /** fleet.ts options passed to every shard (without --stack). */
  args: string[];
  parallel: number;
  /** Each output line, already prefixed with the shard's name. */
  line: (text: string, stream: "stdout" | "stderr") => void;
}

export async function runShards(o: RunShardsOptions): Promise<ShardRun[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-shards-"));
  const runs: ShardRun[] = new Array(o.shards.length);
  let next = 0;
  const worker = async () => {
    while (next < o.shards.length) {
      const i = next++;
      runs[i] = await runOne(o, o.shards[i], path.join(dir, `${i}.json`));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.parallel, o.shards.length)) }, worker));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return runs;
}

function runOne(o: RunShardsOptions, s: RunShardsOptions["shards"][number], resultFile: string): Promise<ShardRun> {
  const started = Date.now();
  const args = [path.join(PROJECT_DIR, "scripts", "run-ts.js"), path.join(PROJECT_DIR, "scripts", "fleet.ts"), o.op, "--stack", s.stack, ...o.args, ...(s.args ?? []), "--result-json", resultFile];
  // Under proc-guard: should this process die, the shard's process and all it started end too.
  const [file, argv] = guarded(process.execPath, args);
  // A stopped run passes the signal on (the guard forwards it); a shard not started yet is not started.
  const child = spawn(file, argv, { cwd: PROJECT_DIR, stdio: ["ignore", "pipe", "pipe"], env: process.env, signal: stopSignal, killSignal: "SIGTERM" });
  child.on("error", () => undefined); // the abort itself: the shard's exit is reported below
  const prefix = `[${s.shard}] `;
  const pipe = (stream: NodeJS.ReadableStream, name: "stdout" | "stderr") =>
    new Promise<void>((resolve) => readline.createInterface({ input: stream, crlfDelay: Infinity }).on("line", (l) => o.line(prefix + l, name)).on("close", resolve));
  const piped = Promise.all([pipe(child.stdout!, "stdout"), pipe(child.stderr!, "stderr")]);
  return new Promise((resolve) => {
    child.on("close", async (code, signal) => {
      await piped;
      let result: ShardResult | undefined;
      try {
        result = JSON.parse(fs.readFileSync(resultFile, "utf8"));
      } catch {
        result = undefined;
      }
      resolve({ shard: s.shard, stack: s.stack, exitCode: code ?? (signal ? 128 : 1), result, durationMs: Date.now() - started, finishedAt: Date.now() });
    });
  });
}
