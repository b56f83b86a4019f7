/**
 * `npm run bench -- startup [--runs 3]`: the wall time of a no-op `npm run up -- --stack local` (the
 * embedded default: the example fleet on 3 clusters, render mode), exactly as a user types it (npm,
 * scripts/setup.sh, TypeScript loading, the operation), and where it goes: the phases the operation
 * prints with PULUMI_FLEET_TIMINGS=1 (automation/engine/timings.ts), in ms since its process started. The
 * state goes to a temporary directory (PULUMI_FLEET_STATE_DIR). Writes bench/results/startup.json.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PROJECT_DIR } from "../core/base/project-dir";
import { arg, engineEnvArg, printTable, seconds, writeResult } from "./support";

function npmUp(env: NodeJS.ProcessEnv): { ms: number; phases: Record<string, number> } {
  const t = performance.now();
  const r = spawnSync("npm", ["run", "--silent", "up", "--", "--stack", "local", "--quiet"], { cwd: PROJECT_DIR, env, encoding: "utf8" });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`npm run up -- --stack local failed:\n${r.stdout}\n${r.stderr}`);
  const phases: Record<string, number> = {};
  for (const m of r.stderr.matchAll(/^timing (.+) (\d+) ms$/gm)) phases[m[1]] = Number(m[2]);
  return { ms, phases };
}

export async function startupBench(): Promise<void> {
  const runs = Number(arg("runs") ?? 3);
  const state = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-startup-"));
  const env = { ...process.env, PULUMI_FLEET_STATE_DIR: state, PULUMI_FLEET_TIMINGS: "1", ...engineEnvArg() };
  try {
    npmUp(env); // the first up creates the stack's resources
    const rows = Array.from({ length: runs }, (_, i) => ({ run: i + 1, ...npmUp(env) }));
    printTable(
      rows.map((r) => ({ run: r.run, "no-op npm run up s": seconds(r.ms), ...Object.fromEntries(Object.entries(r.phases).map(([k, v]) => [k, `${v}`])) })),
    );
    console.log("(phases: ms since the operation's process started; the rest of the wall time is npm and scripts/setup.sh before it, and exiting after)");
    console.log("goal: a no-op `npm run up` of the local stack within 4 s");
    console.log(`written ${writeResult("startup", { rows })}`);
  } finally {
    fs.rmSync(state, { recursive: true, force: true });
  }
}
