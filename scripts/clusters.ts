/**
 * `npm run clusters -- up [--count N] [--dir D] | down [--dir D] | status [--dir D]`: local Kubernetes
 * clusters on loopback (automation/local-clusters.ts) to try pulumi-fleet against, or to run the
 * live end-to-end tests by hand. `up` prints each cluster's kubeconfig path, the startup time and memory.
 */
import { DEFAULT_CLUSTERS_DIR, isRunning, readLocalClusters, residentMemory, startLocalClusters, stopLocalClusters } from "../automation/local-clusters";

const MiB = 1024 * 1024;

function option(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  if (!argv[i + 1]) throw new Error(`${name} needs a value`);
  return argv[i + 1];
}

async function main(): Promise<void> {
  const [op, ...rest] = process.argv.slice(2);
  const baseDir = option(rest, "--dir") ?? DEFAULT_CLUSTERS_DIR;
  if (op === "up") {
    const count = Number(option(rest, "--count") ?? 3);
    if (!Number.isInteger(count) || count < 1) throw new Error(`--count must be a positive integer, got ${option(rest, "--count")}`);
    const state = await startLocalClusters({ count, baseDir });
    for (const c of state.clusters) console.log(`${c.name}  ${c.server}  kubeconfig ${c.kubeconfig}`);
    // Let the controllers settle before reading memory: the figure is a steady state, not a start spike.
    await new Promise((r) => setTimeout(r, 5000));
    const mem = residentMemory(state);
    console.log(`${state.clusters.length} clusters ready in ${(state.startupMs / 1000).toFixed(1)} s; resident memory ${(mem.total / MiB).toFixed(0)} MiB ` +
      `(${Object.entries(mem.byComponent).map(([k, v]) => `${k} ${(v / MiB).toFixed(0)}`).join(", ")})`);
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
  throw new Error("usage: clusters.ts up [--count N] [--dir D] | down [--dir D] | status [--dir D]");
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
