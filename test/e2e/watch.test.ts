/**
 * `npm run watch` on a live cluster, as a service runs it (scripts/watch.ts as its own process, the
 * real engine): a git remote on disk tracked by branch with pollingInterval 1s; the watcher's first
 * `up` deploys it, a pushed commit changes the object on the cluster within a bound, and nothing runs
 * while nothing changes. SIGTERM while idle, and again during an `up`: the process exits 0 within
 * seconds, no process it started is left and the stack's lock is released. A sharded environment
 * runs one watcher per shard stack, each deploying its own clusters.
 */
import { expect } from "chai";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { eventually } from "../support/eventually";
import { tempDir, TestRepo } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";
import { processTree, SeenProc, stillRunning } from "../support/processes";

const STACK = "watch";
const NS = "watch-test";
/** From the push to the object changed: one poll (1 s) and one `up` of one bundle, with room for a busy machine. */
const DEPLOY_BOUND_MS = 60_000;
/** From SIGTERM to the process and everything it started gone. */
const STOP_BOUND_MS = 15_000;

const files = (value: string) => ({
  "app/fleet.yaml": `defaultNamespace: ${NS}\n`,
  "app/cm.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\ndata:\n  value: "${value}"\n`,
});

describe("npm run watch: commits deployed as they land, stopped cleanly by a signal (live cluster)", function () {
  this.timeout(15 * 60_000);
  const work = tempDir("pf-watch-");
  const stacksDir = path.join(work, "stacks");
  const stateDir = path.join(work, "state");
  const repo = new TestRepo(files("1"));
  const { PULUMI_BACKEND_URL: _b, PULUMI_FLEET_STATE_DIR: _s, ...inherited } = process.env;
  const env = { ...inherited, PULUMI_FLEET_STACKS_DIR: stacksDir, PULUMI_FLEET_STATE_DIR: stateDir, PULUMI_CONFIG_PASSPHRASE: STACK };
  let cluster: LocalCluster;
  const value = async () => (await kubeGet(cluster, `/api/v1/namespaces/${NS}/configmaps/watched`))?.data?.value as string | undefined;
  const lockFiles = () =>
    (fs.existsSync(stateDir) ? (fs.readdirSync(stateDir, { recursive: true }) as string[]) : []).filter(
      (f) => f.split(path.sep).includes("locks") && f.endsWith(".json"),
    );
  const figures: Record<string, string> = {};

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
    cluster = liveClusters().clusters[0];
    fs.mkdirSync(stacksDir, { recursive: true });
    fs.writeFileSync(
      path.join(stacksDir, `Pulumi.${STACK}.yaml`),
      YAML.stringify({
        config: {
          "pulumi-fleet:agent": { enabled: false },
          "pulumi-fleet:clusters": [{ name: cluster.name, kubeconfig: fs.readFileSync(cluster.kubeconfig, "utf8") }],
          "pulumi-fleet:gitRepos": [
            { name: "watched", repo: repo.url(), branch: "master", paths: ["app"], pollingInterval: "1s", targets: [{ clusterSelector: {} }] },
          ],
        },
      }),
    );
  });

  after(async function () {
    this.timeout(5 * 60_000);
    console.log(`      watch figures: ${JSON.stringify(figures)}`);
    await ops.destroy({ stack: STACK, stateDir, stackConfigDir: stacksDir, env: { PULUMI_CONFIG_PASSPHRASE: STACK } });
    if (await kubeGet(cluster, `/api/v1/namespaces/${NS}`)) await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/${NS}`);
    fs.rmSync(work, { recursive: true, force: true });
  });

  /** The watcher as a service runs it; its output is collected, and every process it started is remembered. */
  function startWatcher(stack = STACK) {
    const child = spawn(process.execPath, ["scripts/run-ts.js", "scripts/watch.ts", "--stack", stack, "--quiet"], {
      cwd: PROJECT_DIR,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const w = {
      child,
      stack,
      output: "",
      seen: new Map<string, SeenProc>(),
      exited: undefined as unknown as Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
    };
    child.stdout!.on("data", (d) => (w.output += d));
    child.stderr!.on("data", (d) => (w.output += d));
    w.exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
    const timer = setInterval(() => {
      for (const p of processTree(child.pid!)) w.seen.set(`${p.pid}/${p.start}`, p);
    }, 100);
    child.on("exit", () => clearInterval(timer));
    return w;
  }

  async function untilOutput(w: ReturnType<typeof startWatcher>, pattern: RegExp, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pattern.test(w.output)) {
      if (w.child.exitCode !== null || Date.now() > deadline) throw new Error(`the watcher never printed ${pattern}:\n${w.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** After a failed check: a SIGTERM first (a SIGKILL mid-update would leave a lock to the next test), then SIGKILL for what is left. */
  async function cleanUp(w: ReturnType<typeof startWatcher>): Promise<void> {
    if (w.child.exitCode === null && w.child.signalCode === null) {
      w.child.kill("SIGTERM");
      await Promise.race([w.exited, new Promise((r) => setTimeout(r, 30_000))]);
    }
    for (const p of w.seen.values()) if (stillRunning(p)) process.kill(p.pid, "SIGKILL");
  }

  /** SIGTERM to the watcher's own process: it exits 0 in time, leaving no process and no lock. */
  async function stopsCleanly(w: ReturnType<typeof startWatcher>, label: string): Promise<void> {
    for (const p of processTree(w.child.pid!)) w.seen.set(`${p.pid}/${p.start}`, p);
    const t0 = Date.now();
    process.kill(w.child.pid!, "SIGTERM");
    try {
      const ended = await Promise.race([w.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), STOP_BOUND_MS))]);
      figures[`${label}: exited after SIGTERM`] = `${((Date.now() - t0) / 1000).toFixed(1)} s`;
      expect(ended, `${label}: still running ${STOP_BOUND_MS / 1000} s after SIGTERM:\n${w.output}`).to.not.equal(undefined);
      expect(ended, `${label}: exit status:\n${w.output}`).to.deep.equal({ code: 0, signal: null });
      let left: string[] = [];
      for (const deadline = t0 + STOP_BOUND_MS; ;) {
        left = [...w.seen.values()].filter(stillRunning).map((p) => `${p.pid} ${p.argv.join(" ").slice(0, 160)}`);
        if (!left.length || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(left, `${label}: processes the watcher started are still running`).to.deep.equal([]);
      expect(lockFiles(), `${label}: the stack's lock is released`).to.deep.equal([]);
      expect(w.output).to.contain(`watch ${w.stack}: stopped`);
    } finally {
      for (const p of w.seen.values()) if (stillRunning(p)) process.kill(p.pid, "SIGKILL");
    }
  }

  it("deploys at start, deploys a pushed commit within the bound, runs nothing in between, and stops on SIGTERM while idle", async () => {
    const w = startWatcher();
    try {
      await eventually("the first up deploys the GitRepo", value, (v) => v === "1", 5 * 60_000);
      await untilOutput(w, /up of stack watch succeeded/, 60_000);
      // Polled every second since: nothing changed, so no second up.
      await new Promise((r) => setTimeout(r, 5000));
      expect(w.output.match(/watch watch: up: /g), w.output).to.have.length(1);

      const t0 = Date.now();
      const pushed = repo.commit(files("2"));
      await eventually("the pushed commit reaches the cluster", value, (v) => v === "2", DEPLOY_BOUND_MS);
      figures["push to object changed"] = `${((Date.now() - t0) / 1000).toFixed(1)} s`;
      expect(w.output).to.contain(`up: gitRepo watched is at ${pushed.slice(0, 12)}`);
      await untilOutput(w, /up of stack watch succeeded[^]*up of stack watch succeeded/, 60_000);
      await stopsCleanly(w, "idle");
    } finally {
      await cleanUp(w);
    }
  });

  it("stops on SIGTERM during an up the way up stops: exit 0, lock released, nothing left; the next watcher converges", async () => {
    const w = startWatcher();
    try {
      expect(lockFiles(), "no lock before the watcher starts").to.deep.equal([]);
      // Its first up always runs; a commit makes it deploy something. The signal comes while the engine holds the stack's lock.
      repo.commit(files("3"));
      await untilOutput(w, /watch watch: up: first run/, 2 * 60_000);
      for (const deadline = Date.now() + 2 * 60_000; !lockFiles().length;) {
        if (Date.now() > deadline || /up of stack watch succeeded/.test(w.output)) throw new Error(`the update never held the lock:\n${w.output}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await stopsCleanly(w, "during up");
    } finally {
      await cleanUp(w);
    }
    const again = startWatcher();
    try {
      await eventually("a new watcher deploys what the stopped one did not finish", value, (v) => v === "3", 5 * 60_000);
      await untilOutput(again, /up of stack watch succeeded/, 60_000);
      expect(again.output, "no lock was left to wait for or remove").to.not.match(/is locked|removing the lock/);
      await stopsCleanly(again, "idle, second watcher");
    } finally {
      await cleanUp(again);
    }
  });

  it("a sharded environment: one watcher per shard stack deploys its own clusters only; the environment as a whole is refused, naming the shard stacks", async () => {
    const NS2 = "watch-shard-test";
    const shardRepo = new TestRepo({
      "app/fleet.yaml": `defaultNamespace: ${NS2}\n`,
      "app/cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\ndata:\n  value: "s1"\n',
    });
    const [first, second] = liveClusters().clusters;
    const shardValue = async (c: LocalCluster) => (await kubeGet(c, `/api/v1/namespaces/${NS2}/configmaps/watched`))?.data?.value as string | undefined;
    fs.writeFileSync(
      path.join(stacksDir, "Pulumi.wsh.yaml"),
      YAML.stringify({
        config: {
          "pulumi-fleet:agent": { enabled: false },
          "pulumi-fleet:clusters": [first, second].map((c) => ({ name: c.name, kubeconfig: fs.readFileSync(c.kubeconfig, "utf8") })),
          "pulumi-fleet:gitRepos": [
            { name: "sharded", repo: shardRepo.url(), branch: "master", paths: ["app"], pollingInterval: "1s", targets: [{ clusterSelector: {} }] },
          ],
          "pulumi-fleet:shards": [
            { name: "a", clusters: [first.name] },
            { name: "b", clusters: [second.name] },
          ],
        },
      }),
    );
    const shards = spawnSync(process.execPath, ["scripts/run-ts.js", "scripts/shards.ts", "--stack", "wsh", "--apply"], {
      cwd: PROJECT_DIR,
      env,
      encoding: "utf8",
    });
    expect(shards.status, shards.stdout + shards.stderr).to.equal(0);
    const whole = spawnSync(process.execPath, ["scripts/run-ts.js", "scripts/watch.ts", "--stack", "wsh"], { cwd: PROJECT_DIR, env, encoding: "utf8" });
    expect(whole.status).to.not.equal(0);
    expect(whole.stderr).to.contain(
      "stack wsh is split into shards: run one watcher per shard stack (npm run watch -- --stack wsh.a; npm run watch -- --stack wsh.b)",
    );

    const w = startWatcher("wsh.a");
    try {
      await eventually(
        "the shard's first up deploys its cluster",
        () => shardValue(first),
        (v) => v === "s1",
        5 * 60_000,
      );
      await untilOutput(w, /up of stack wsh\.a succeeded/, 60_000);
      shardRepo.commit({ "app/cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\ndata:\n  value: "s2"\n' });
      await eventually(
        "the pushed commit reaches the shard's cluster",
        () => shardValue(first),
        (v) => v === "s2",
        DEPLOY_BOUND_MS,
      );
      expect(await shardValue(second), "the other shard's cluster is not this watcher's").to.equal(undefined);
      await stopsCleanly(w, "shard watcher");
    } finally {
      await cleanUp(w);
      await ops.destroy({ stack: "wsh.a", stateDir, stackConfigDir: stacksDir, env: { PULUMI_CONFIG_PASSPHRASE: STACK } });
      if (await kubeGet(first, `/api/v1/namespaces/${NS2}`)) await kubeRequest(first, "DELETE", `/api/v1/namespaces/${NS2}`);
    }
  });
});
