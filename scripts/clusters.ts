/**
 * `npm run clusters -- up [--count N] [--dir D] [--skip-memory] | down [--dir D] | status [--dir D]`: local Kubernetes
 * clusters on loopback (automation/clusters/local-clusters.ts) to try pulumi-fleet against, or to run the
 * live end-to-end tests by hand. `up` prints each cluster's kubeconfig path, the startup time and memory.
 */
import { parseCommand, runMain, UsageError } from "./cli";
import {
  DEFAULT_CLUSTERS_DIR,
  isRunning,
  readLocalClusters,
  residentMemory,
  startLocalClusters,
  stopLocalClusters,
} from "../automation/clusters/local-clusters";

const MiB = 1024 * 1024;

const SPEC = {
  usage: "npm run clusters -- <up|down|status> [--count N] [--dir D] [--skip-memory]",
  summary: "Local Kubernetes clusters on loopback (etcd, API server, controllers, kwok) built from tools/.",
  positionals: ["OPERATION"],
  options: {
    count: { type: "string" as const, value: "N", help: "up: how many clusters (default 3)" },
    dir: { type: "string" as const, value: "D", help: `where their state lives (default ${DEFAULT_CLUSTERS_DIR})` },
    "skip-memory": { type: "boolean" as const, help: "up: return once they are ready, without the memory figure (it waits 5 s for a steady state)" },
  },
};

async function main(): Promise<void> {
  const {
    values: v,
    positionals: [op],
  } = parseCommand(process.argv.slice(2), SPEC);
  const baseDir = v.dir ?? DEFAULT_CLUSTERS_DIR;
  if (v.count !== undefined && op !== "up") throw new UsageError("--count applies to up only");
  if (v["skip-memory"] && op !== "up") throw new UsageError("--skip-memory applies to up only");
  if (op === "up") {
    const count = Number(v.count ?? 3);
    if (!Number.isInteger(count) || count < 1) throw new UsageError(`--count must be a positive integer, got ${v.count}`);
    const state = await startLocalClusters({ count, baseDir });
    for (const c of state.clusters) console.log(`${c.name}  ${c.server}  kubeconfig ${c.kubeconfig}`);
    if (v["skip-memory"]) {
      console.log(`${state.clusters.length} clusters ready in ${(state.startupMs / 1000).toFixed(1)} s`);
      return;
    }
    // Let the controllers settle before reading memory: the figure is a steady state, not a start spike.
    await new Promise((r) => setTimeout(r, 5000));
    const mem = residentMemory(state);
    console.log(
      `${state.clusters.length} clusters ready in ${(state.startupMs / 1000).toFixed(1)} s; resident memory ${(mem.total / MiB).toFixed(0)} MiB ` +
        `(${Object.entries(mem.byComponent)
          .map(([k, v]) => `${k} ${(v / MiB).toFixed(0)}`)
          .join(", ")})`,
    );
    return;
  }
  if (op === "down") {
    await stopLocalClusters(baseDir);
    console.log(`local clusters in ${baseDir} stopped and removed`);
    return;
  }
  if (op === "status") {
    const state = readLocalClusters(baseDir);
    if (!state) {
      console.log(`no local clusters in ${baseDir}`);
      process.exitCode = 1;
      return;
    }
    for (const c of state.clusters) {
      const procs = Object.entries(c.pids).map(([comp, pid]) => `${comp} ${isRunning(pid) ? "up" : "DOWN"}`);
      console.log(`${c.name}  ${c.server}  ${procs.join(", ")}  kubeconfig ${c.kubeconfig}`);
    }
    console.log(`resident memory ${(residentMemory(state).total / MiB).toFixed(0)} MiB`);
    return;
  }
  throw new UsageError(`unknown operation '${op}'`);
}

runMain(SPEC, main);
