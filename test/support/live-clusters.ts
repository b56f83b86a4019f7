/**
 * Mocha global fixture for the end-to-end run (scripts/test.sh passes it with --require): three local
 * clusters (automation/clusters/local-clusters.ts) started once before all e2e files and stopped after, data in
 * a temporary directory. Tests get them with liveClusters(). A start failure fails the run: no skip.
 */
import * as os from "node:os";
import * as path from "node:path";
import * as fs from "node:fs";
import { TEST_RUN_VAR } from "./processes";
import { LocalClusters, readLocalClusters, residentMemory, startLocalClusters, stopLocalClusters } from "../../automation/clusters/local-clusters";

export const LIVE_CLUSTER_NAMES = ["live-1", "live-2", "live-3"];
const ENV_KEY = "PULUMI_FLEET_TEST_CLUSTERS_DIR";

export async function mochaGlobalSetup(): Promise<void> {
  const baseDir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-live-"));
  process.env[ENV_KEY] = baseDir;
  // An e2e run by hand is a test run of its own: what it starts names it (test/support/processes.ts).
  process.env[TEST_RUN_VAR] ??= `e2e ${baseDir}`;
  // However mocha ends, the clusters' processes must not outlive it. A SIGTERM (a CI runner's timeout,
  // `kill`) ends Node without "exit" handlers unless it is turned into an exit.
  process.once("SIGTERM", () => process.exit(143));
  process.once("exit", () => {
    const state = readLocalClusters(baseDir);
    for (const c of state?.clusters ?? [])
      for (const pid of Object.values(c.pids))
        try {
          process.kill(-pid!, "SIGKILL");
        } catch {
          /* gone */
        }
  });
  const state = await startLocalClusters({ names: LIVE_CLUSTER_NAMES, baseDir });
  await new Promise((r) => setTimeout(r, 3000));
  const mem = residentMemory(state);
  console.log(
    `  live clusters: ${state.clusters.length} started in ${(state.startupMs / 1000).toFixed(1)} s, ` +
      `resident memory ${(mem.total / 2 ** 20).toFixed(0)} MiB (${baseDir})`,
  );
}

export async function mochaGlobalTeardown(): Promise<void> {
  const baseDir = process.env[ENV_KEY];
  if (!baseDir) return;
  const state = readLocalClusters(baseDir);
  if (state) console.log(`  live clusters: resident memory at the end ${(residentMemory(state).total / 2 ** 20).toFixed(0)} MiB`);
  await stopLocalClusters(baseDir);
}

/** The running clusters of this test run (started by the global fixture). */
export function liveClusters(): LocalClusters {
  const baseDir = process.env[ENV_KEY];
  const state = baseDir ? readLocalClusters(baseDir) : undefined;
  if (!state) throw new Error("no live clusters: run the e2e tests with --require test/support/live-clusters.fixture.js (scripts/test.sh does)");
  return state;
}
