/**
 * A signal stops `npm run up` at any point, promptly (render mode, the real CLI): SIGTERM to the
 * operation's own process (what a CI runner or a supervisor sends, not a Ctrl-C to the whole group)
 * while content stalls it, once inside a render batch (the main thread waiting for the renderer) and
 * once inside a git fetch that never answers (the engine's update running, waiting for the program).
 * Each time: it ends within seconds with a non-zero status, no process it started is left, the stack's
 * lock is released, and the next `up` of the same stack starts without waiting and without removing a
 * dead lock.
 */
import { expect } from "chai";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { toolchain } from "../../automation/engine/toolchain";
import { tempDir, TestRepo } from "../support/git-fixtures";
import { processTree, SeenProc, stillRunning } from "../support/processes";

const STACK = "sig";
/** A template whose rendering runs until the render time limit (set to a minute below). */
const FOREVER = "{{ range until 100000 }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}{{ end }}";
const chartFiles = (template: string) => ({
  "fleet.yaml": "helm:\n  chart: ./chart\n",
  "chart/Chart.yaml": "apiVersion: v2\nname: probe\nversion: 0.1.0\n",
  "chart/values.yaml": "{}\n",
  "chart/templates/cm.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  x: "${template}"\n`,
});

/** Where the operation must be stopped from, at most (the stall itself lasts a minute). */
const STOP_BOUND_MS = 10_000;

describe("a signal stops an operation at any point, promptly (real CLI, render mode)", function () {
  this.timeout(10 * 60_000);
  const work = tempDir("pf-signal-");
  const stateDir = path.join(work, "state");
  const stacksDir = path.join(work, "stacks");
  const repo = new TestRepo(chartFiles(FOREVER));
  const { PULUMI_BACKEND_URL: _b, PULUMI_FLEET_STATE_DIR: _s, ...inherited } = process.env;
  const env = {
    ...inherited,
    PULUMI_FLEET_STACKS_DIR: stacksDir,
    PULUMI_FLEET_STATE_DIR: stateDir,
    PULUMI_CONFIG_PASSPHRASE: STACK,
    PULUMI_FLEET_RENDER_TIMEOUT_SECONDS: "60",
  };
  const writeStack = (repoUrl: string) => {
    fs.mkdirSync(stacksDir, { recursive: true });
    fs.writeFileSync(
      path.join(stacksDir, `Pulumi.${STACK}.yaml`),
      YAML.stringify({
        config: {
          "pulumi-fleet:renderDir": path.join(work, "render"),
          "pulumi-fleet:fleetVersion": "0.13.1",
          "pulumi-fleet:clusters": [{ name: "c1", labels: { env: "test" } }],
          "pulumi-fleet:agent": { apiServerURL: "https://fleet.example.com" },
          "pulumi-fleet:gitRepos": [{ name: "content", repo: repoUrl, branch: "master", targets: [{ name: "all", clusterName: "c1" }] }],
        },
      }),
    );
  };
  const fleet = ["scripts/run-ts.js", "scripts/fleet.ts", "up", "--stack", STACK, "--quiet"];
  const lockFiles = () =>
    (fs.existsSync(stateDir) ? (fs.readdirSync(stateDir, { recursive: true }) as string[]) : []).filter(
      (f) => f.split(path.sep).includes("locks") && f.endsWith(".json"),
    );
  const figures: Record<string, string> = {};

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
  });

  after(() => console.log(`      stop figures: ${JSON.stringify(figures)}`));

  /**
   * Starts `up`, waits until `stalled` holds of its process tree, sends SIGTERM to its own process only,
   * and checks how it ended. Everything it started is killed afterwards whatever the outcome.
   */
  async function stopWhileStalled(
    label: string,
    stalled: (tree: SeenProc[]) => boolean,
    signalNow?: (signal: () => void) => () => void,
    lockHeld = true,
  ): Promise<void> {
    const child = spawn(process.execPath, fleet, { cwd: PROJECT_DIR, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let t0 = 0;
    const signal = () => {
      if (t0) return;
      t0 = Date.now();
      process.kill(child.pid!, "SIGTERM");
    };
    const unwatch = signalNow?.(signal);
    let output = "";
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal })),
    );
    const seen = new Map<string, SeenProc>();
    const see = (tree: SeenProc[]) => tree.forEach((p) => seen.set(`${p.pid}/${p.start}`, p));
    try {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const tree = processTree(child.pid!);
        see(tree);
        if (t0 || stalled(tree)) break;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${label}: the stall never began:\n${output}`);
        await new Promise((r) => setTimeout(r, signalNow ? 2 : 200));
      }
      if (!signalNow && lockHeld) expect(lockFiles(), `${label}: the update holds the stack's lock while it stalls`).to.have.length(1);
      if (!lockHeld) expect(lockFiles(), `${label}: the stall is before the engine takes the stack's lock`).to.deep.equal([]);
      see(processTree(child.pid!));
      signal();
      unwatch?.();
      const ended = await Promise.race([exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 30_000))]);
      const ms = Date.now() - t0;
      figures[`${label}: exited after SIGTERM`] = ended ? `${(ms / 1000).toFixed(1)} s` : "not within 30 s";
      expect(ended, `${label}: still running 30 s after SIGTERM:\n${output}`).to.not.equal(undefined);
      expect(ms, `${label}: stopped after ${ms} ms:\n${output}`).to.be.lessThan(STOP_BOUND_MS);
      const status = ended!.code ?? 128 + (ended!.signal === "SIGTERM" ? 15 : 0);
      expect(status, `${label}: exit status (${JSON.stringify(ended)}):\n${output}`).to.be.oneOf([143, 130]);
      // Whatever it started ends with it (a guard's grace is allowed for, not more).
      const left = await settled([...seen.values()], STOP_BOUND_MS - ms);
      figures[`${label}: last process gone after SIGTERM`] = `${((Date.now() - t0) / 1000).toFixed(1)} s`;
      expect(left, `${label}: processes of the stopped operation still running`).to.deep.equal([]);
      expect(lockFiles(), `${label}: the stack's lock is released`).to.deep.equal([]);
    } finally {
      unwatch?.();
      for (const p of seen.values()) {
        try {
          if (stillRunning(p)) process.kill(p.pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
  }

  /** The first `up` after a stopped one: no lock to wait for or remove. */
  function nextUpStartsFree(label: string): void {
    repo.commit(chartFiles("fine"));
    const r = spawnSync(process.execPath, fleet, { cwd: PROJECT_DIR, env, encoding: "utf8", timeout: 5 * 60_000 });
    expect(r.status, `${label}: the next up:\n${r.stdout}\n${r.stderr}`).to.equal(0);
    expect(r.stderr, `${label}: the next up found no lock`).to.not.match(/removing the lock|is locked/);
    repo.commit(chartFiles(FOREVER));
  }

  it("SIGTERM while a render job loops until its time limit: stopped in seconds, lock released, nothing left", async () => {
    writeStack(repo.dir);
    const since = new Map<number, number>();
    await stopWhileStalled("render stall", (tree) => {
      // A sandbox batch alive for 2 s is the endless template (the others take milliseconds).
      const sandboxes = tree.filter((p) => p.argv.some((a) => a.endsWith("fleet-render")) && p.argv.includes("--sandbox"));
      for (const p of sandboxes) if (!since.has(p.pid)) since.set(p.pid, Date.now());
      return sandboxes.some((p) => Date.now() - since.get(p.pid)! > 2000);
    });
    nextUpStartsFree("render stall");
  });

  it("SIGTERM while a git fetch waits on a server that never answers: stopped in seconds, lock released, nothing left", async () => {
    // Accepts connections and never says a word: git's HTTP transport waits with no time limit.
    const sockets: net.Socket[] = [];
    const server = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      writeStack(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/content.git`);
      const since = new Map<number, number>();
      // After a successful update that recorded its registrations, an `up` first decides whether it only prunes
      // (automation/operation/prune-only.ts), from the desired state, before its engine starts: the fetch stalls before the lock.
      await stopWhileStalled(
        "git stall",
        (tree) => {
          const gits = tree.filter((p) => p.argv.some((a) => /(^|\/)git(-remote-https?)?$/.test(a)));
          for (const p of gits) if (!since.has(p.pid)) since.set(p.pid, Date.now());
          return sockets.length > 0 && gits.some((p) => Date.now() - since.get(p.pid)! > 1500);
        },
        undefined,
        false,
      );
    } finally {
      for (const s of sockets) s.destroy();
      server.close();
    }
    writeStack(repo.dir);
    nextUpStartsFree("git stall");
  });

  it("SIGTERM the moment the CLI writes its lock, before its own cancellation handler is installed: lock released, nothing left", async () => {
    // The Pulumi CLI takes the lock before its update listens for SIGINT (pkg/backend/diy: Lock, then
    // apply's NewScope); a SIGINT there ends it by Go's default action, its lock left (own-locks.ts).
    writeStack(repo.dir);
    repo.commit(chartFiles("now"));
    const dir = path.join(stateDir, ".pulumi", "locks", "organization", "pulumi-fleet", STACK);
    fs.mkdirSync(dir, { recursive: true });
    let notStopped: Error | undefined;
    await stopWhileStalled(
      "lock taken",
      () => false,
      (signal) => {
        // The CLI is frozen as it writes the lock (its pid is in it), the stop sent once every thread of
        // it has stopped, and the CLI let go once the SIGINT waits for it: it meets the signal where it
        // stood. Sent earlier, the SIGINT could be taken before the SIGSTOP (the kernel hands a process
        // its lowest-numbered pending signal first): never pending, the CLI frozen to the end.
        let frozen = false;
        const watcher = fs.watch(dir, (_event, file) => {
          if (frozen || !String(file).endsWith(".json")) return;
          let pid: number;
          try {
            pid = JSON.parse(fs.readFileSync(path.join(dir, String(file)), "utf8")).pid;
          } catch {
            return; // removed: the CLI's own unlock
          }
          frozen = true;
          process.kill(pid, "SIGSTOP");
          void untilStopped(pid)
            .catch((err: Error) => void (notStopped = err))
            .then(() => {
              signal();
              return untilPending(pid, "SIGINT");
            })
            .finally(() => {
              try {
                process.kill(pid, "SIGCONT");
              } catch {
                // gone
              }
            });
        });
        return () => watcher.close();
      },
    );
    expect(notStopped, "lock taken: the CLI was frozen before the stop was sent").to.equal(undefined);
    nextUpStartsFree("lock taken");
  });
});

/** Until every thread of process `pid` is stopped (its /proc task states), at most 10 s. */
async function untilStopped(pid: number): Promise<void> {
  const state = (task: string) => {
    try {
      return fs.readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8").replace(/^.*\) /s, "")[0];
    } catch {
      return "T"; // the thread ended meanwhile
    }
  };
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    if (fs.readdirSync(`/proc/${pid}/task`).every((t) => state(t) === "T")) return;
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`process ${pid} did not stop within 10 s`);
}

/** Until `signal` is pending for process `pid` (its /proc status), at most 10 s. */
async function untilPending(pid: number, signal: "SIGINT"): Promise<void> {
  const bit = 1n << BigInt(os.constants.signals[signal] - 1);
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const pending = [...status.matchAll(/^(SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].reduce((acc, m) => acc | BigInt(`0x${m[2]}`), 0n);
    if (pending & bit) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Waits up to `ms` for the given processes to end; returns those still running. */
async function settled(procs: SeenProc[], ms: number): Promise<string[]> {
  const deadline = Date.now() + Math.max(ms, 0);
  for (;;) {
    const left = procs.filter(stillRunning).map((p) => `${p.pid} ${p.argv.join(" ").slice(0, 160)}`);
    if (!left.length || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}
