/**
 * `npm test` leaves no process running: run with `--snapshot FILE` before the tests (the engine
 * processes already running are someone else's), and with `--check FILE` after them, which fails
 * naming every process of the engine (CLI, plugins, renderer, guard) or of the tests (local clusters,
 * chart servers, PostgreSQL, Chromium) started since and still running, unless it names another test
 * run (test/support/processes.ts TEST_RUN_VAR: two runs on one machine). A guard's
 * grace period is 10 s, so the check waits up to 20 s for them to end.
 */
import * as fs from "node:fs";
import { engineProcesses, TEST_PROGRAMS, TEST_RUN_VAR } from "../test/support/processes";

async function main(): Promise<void> {
  const [mode, file] = process.argv.slice(2);
  if (mode === "--snapshot" && file) {
    fs.writeFileSync(file, JSON.stringify(engineProcesses(new Set(), TEST_PROGRAMS).map((p) => p.pid)));
    return;
  }
  if (mode !== "--check" || !file) throw new Error("usage: check-leftovers.ts --snapshot FILE | --check FILE");
  const before = new Set<number>(JSON.parse(fs.readFileSync(file, "utf8")));
  // Another test run's processes on the same machine (they name their own run) are not this run's leftovers.
  const run = process.env[TEST_RUN_VAR];
  const deadline = Date.now() + 20_000;
  let left = engineProcesses(before, TEST_PROGRAMS, run);
  while (left.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    left = engineProcesses(before, TEST_PROGRAMS, run);
  }
  if (left.length) {
    console.error(`check-leftovers: ${left.length} process(es) the tests started are still running:\n${left.map((p) => `  ${p.pid} ${p.command}`).join("\n")}`);
    process.exit(1);
  }
  console.log("check-leftovers: no process of the tests is left running");
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
