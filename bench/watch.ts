/**
 * `npm run bench -- watch [--commits 10]`: commits within a minute. One local cluster, `npm run watch`
 * as a service runs it (its own process, Fleet's default 15 s pollingInterval), and a bare git remote
 * the GitRepo tracks by branch. Each commit is pushed at a random point of the polling cycle (a wait
 * of 0 to 15 s after the previous deploy), so the figure is not one lucky phase; the time is from
 * `git push` returning to the object changed on the cluster (read every 100 ms). Writes
 * bench/results/watch.json.
 */
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { kubeGet } from "../automation/clusters/kube-client";
import { LocalCluster, startLocalClusters, stopLocalClusters } from "../automation/clusters/local-clusters";
import { toolchain } from "../automation/engine/toolchain";
import { DEFAULT_POLLING_INTERVAL_MS } from "../core/config/polling";
import { PROJECT_DIR } from "../core/base/project-dir";
import { arg, printTable, seconds, writeResult } from "./support";

const STACK = "bench-watch";
const NS = "bench-watch";
/** A commit not deployed within this is a failure of the benchmark, not a figure. */
const DEPLOY_LIMIT_MS = 5 * 60_000;

const manifest = (value: number) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\ndata:\n  value: "${value}"\n`;

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } }).trim();
}

async function deployedValue(cluster: LocalCluster): Promise<string | undefined> {
  return (await kubeGet(cluster, `/api/v1/namespaces/${NS}/configmaps/watched`).catch(() => undefined))?.data?.value;
}

async function until(cluster: LocalCluster, value: number, watcher: ChildProcess, output: () => string): Promise<void> {
  const deadline = performance.now() + DEPLOY_LIMIT_MS;
  while ((await deployedValue(cluster)) !== String(value)) {
    if (watcher.exitCode !== null) throw new Error(`the watcher exited (${watcher.exitCode}):\n${output().slice(-3000)}`);
    if (performance.now() > deadline) throw new Error(`commit ${value} was not deployed within ${DEPLOY_LIMIT_MS / 1000} s:\n${output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function watchBench(): Promise<void> {
  toolchain();
  const commits = Number(arg("commits") ?? 10);
  if (!Number.isInteger(commits) || commits < 1) throw new Error(`--commits must be a whole number of at least 1 (got ${arg("commits")})`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-watch-"));
  const live = await startLocalClusters({ names: ["w-000"], baseDir: path.join(work, "clusters") });
  let watcher: ChildProcess | undefined;
  try {
    const cluster = live.clusters[0];
    // The remote (bare, as a git server keeps it) and the clone commits are pushed from.
    const remote = path.join(work, "remote.git");
    const clone = path.join(work, "clone");
    git(work, "init", "-q", "--bare", "-b", "main", remote);
    git(work, "clone", "-q", remote, clone);
    git(clone, "config", "user.email", "bench@example.com");
    git(clone, "config", "user.name", "bench");
    git(clone, "checkout", "-q", "-b", "main");
    const push = (value: number) => {
      fs.mkdirSync(path.join(clone, "app"), { recursive: true });
      fs.writeFileSync(path.join(clone, "app", "fleet.yaml"), `defaultNamespace: ${NS}\n`);
      fs.writeFileSync(path.join(clone, "app", "cm.yaml"), manifest(value));
      git(clone, "add", "-A");
      git(clone, "commit", "-q", "-m", `value ${value}`);
      git(clone, "push", "-q", "origin", "main");
    };
    push(0);
    const stacks = path.join(work, "stacks");
    fs.mkdirSync(stacks);
    fs.writeFileSync(
      path.join(stacks, `Pulumi.${STACK}.yaml`),
      YAML.stringify(
        {
          config: {
            "pulumi-fleet:agent": { enabled: false },
            "pulumi-fleet:clusters": [{ name: cluster.name, kubeconfig: fs.readFileSync(cluster.kubeconfig, "utf8") }],
            "pulumi-fleet:gitRepos": [{ name: "watched", repo: `file://${remote}`, branch: "main", paths: ["app"], targets: [{ clusterSelector: {} }] }],
          },
        },
        { blockQuote: "literal" },
      ),
    );
    const { PULUMI_BACKEND_URL: _b, ...inherited } = process.env;
    let output = "";
    watcher = spawn(process.execPath, [path.join(PROJECT_DIR, "scripts/run-ts.js"), path.join(PROJECT_DIR, "scripts/watch.ts"), "--stack", STACK, "--quiet"], {
      cwd: PROJECT_DIR,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...inherited, PULUMI_FLEET_STACKS_DIR: stacks, PULUMI_FLEET_STATE_DIR: path.join(work, "state"), PULUMI_CONFIG_PASSPHRASE: STACK },
    });
    watcher.stdout!.on("data", (d) => (output += d));
    watcher.stderr!.on("data", (d) => (output += d));
    await until(cluster, 0, watcher, () => output);
    const rows: { commit: number; offsetS: number; pushToObjectS: number }[] = [];
    for (let i = 1; i <= commits; i++) {
      const offset = Math.random() * DEFAULT_POLLING_INTERVAL_MS;
      await new Promise((r) => setTimeout(r, offset));
      push(i);
      const t0 = performance.now();
      await until(cluster, i, watcher, () => output);
      rows.push({ commit: i, offsetS: seconds(offset), pushToObjectS: seconds(performance.now() - t0) });
      console.log(`commit ${i}: pushed ${seconds(offset)} s after the previous deploy, on the cluster ${rows[rows.length - 1].pushToObjectS} s after the push`);
    }
    const times = rows.map((r) => r.pushToObjectS).sort((a, b) => a - b);
    const mid = times.length >> 1;
    const median = times.length % 2 ? times[mid] : +((times[mid - 1] + times[mid]) / 2).toFixed(2);
    const summary = { commits, pollingIntervalS: DEFAULT_POLLING_INTERVAL_MS / 1000, minS: times[0], medianS: median, maxS: times[times.length - 1] };
    console.log("push to object changed on the cluster (npm run watch, default pollingInterval, 1 cluster, 1 bundle):");
    printTable(rows.map((r) => ({ commit: r.commit, "pushed after previous deploy s": r.offsetS, "push to object s": r.pushToObjectS })));
    printTable([{ commits, "polling interval s": summary.pollingIntervalS, "min s": summary.minS, "median s": summary.medianS, "max s": summary.maxS }]);
    console.log(`written ${writeResult("watch", { ...summary, rows, startupMs: live.startupMs })}`);
  } finally {
    if (watcher && watcher.exitCode === null) {
      watcher.kill("SIGTERM");
      await new Promise((r) => {
        watcher!.once("exit", r);
        setTimeout(r, 30_000);
      });
    }
    await stopLocalClusters(live.baseDir);
    fs.rmSync(work, { recursive: true, force: true });
  }
}
