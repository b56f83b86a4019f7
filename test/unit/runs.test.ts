/**
 * Rollback and redeploy as runs (automation/runs/): which run `--to` and the default select, the
 * retention of the record, when a pin ends (a plain up that began after it; never a rollback or a
 * redeploy), settings recorded without a credential and re-applied with today's credentials and pauses,
 * the watcher holding while pinned (its pure decision and its loop with fake facts) and resuming with an
 * up once unpinned, deploy events told apart by run, and the record kept in a real file store.
 */
import { expect } from "chai";
import { upWhilePinned } from "../../automation/runs/pinned-up";
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { FleetError } from "../../core/base/errors";
import type { StackConfig } from "../../core/config/stack";
import { afterPin, afterUp, decideUp, heldText, WatchMemory, WatchPin } from "../../automation/watch/decide";
import { UpOutcome, watchLoop } from "../../automation/watch/loop";
import { formatDeployEvent, ofRun, DeployEvent } from "../../automation/reports/deploy-events";
import { decideAfterUp } from "../../automation/notify/events";
import {
  newCommits,
  newRunId,
  pickRun,
  pinAfterRun,
  pinnedCommits,
  runLines,
  RunPin,
  RunRecord,
  runsKept,
  runsStore,
  StackRuns,
  unpinnable,
  withRun,
} from "../../automation/runs/runs";
import { rollback, RunSteps } from "../../automation/runs/rollback";
import { reapplied } from "../../automation/runs/reapply";
import type { OperationOptions } from "../../automation/operation/results";
import { parseStackConfig } from "../../core/config/stack";
import { CREDENTIAL, securePaths, withCurrentCredentials, withoutCredentials } from "../../automation/runs/settings";
import { resolveBackend } from "../../automation/engine/backend";
import { gitRepoConfig, tempDir } from "../support/git-fixtures";
import { errorOf } from "../support/errors";

const A = "a".repeat(40);
const B = "b".repeat(40);
const SETTINGS = { file: "stacks/Pulumi.s.yaml", clusters: [], clusterGroups: [], gitRepos: [], agent: {} } as StackConfig;

const run = (id: string, over: Partial<RunRecord> = {}): RunRecord => ({
  id,
  kind: "up",
  at: `2026-11-29T0${id.slice(-1)}:00:00.000Z`,
  ok: true,
  commits: { apps: A },
  settings: SETTINGS,
  ...over,
});

describe("runs: which run a rollback re-applies", () => {
  const record: StackRuns = { runs: [run("r1"), run("r2"), run("r3", { ok: false }), run("r4", { commits: { apps: B } })] };

  it("by default the newest successful run before the latest", () => {
    expect(pickRun(record, "s").id).to.equal("r2");
    // The latest failed (a bad commit whose pairs failed alone): the successful run before it.
    expect(pickRun({ runs: [run("r1"), run("r2", { ok: false, commits: { apps: B } })] }, "s").id).to.equal("r1");
    // A scheduled up that re-deployed the bad release is the same release: the run before the release, not the release.
    const bad = { commits: { apps: B } };
    expect(pickRun({ runs: [run("r1"), run("r2", bad), run("r3", bad)] }, "s").id).to.equal("r1");
    expect(pickRun({ runs: [run("r1"), run("r2", bad), run("r3", { ...bad, settings: { ...SETTINGS, stalledAfter: 5 } })] }, "s").id).to.equal("r2");
  });

  it("a run that deploys what the latest did replaces it: the kept runs are releases, not every scheduled up", () => {
    let r = withRun(undefined, run("r1"), 20).next;
    r = withRun(r, run("r2", { commits: { apps: B } }), 20).next;
    r = withRun(r, run("r3", { commits: { apps: B } }), 20).next;
    expect(r.runs.map((x) => x.id)).to.deep.equal(["r1", "r3"]);
    // Another kind or outcome is a run of its own.
    r = withRun(r, run("r4", { commits: { apps: B }, kind: "redeploy" }), 20).next;
    expect(r.runs.map((x) => x.id)).to.deep.equal(["r1", "r3", "r4"]);
  });

  it("--to names a run by its id or the id's unique beginning; never a run whose pairs failed", () => {
    expect(pickRun(record, "s", "r1").id).to.equal("r1");
    expect(pickRun({ runs: [run("20261129-070000-aa"), run("20261129-080000-bb")] }, "s", "20261129-07").id).to.equal("20261129-070000-aa");
    expect(errorOf(() => pickRun(record, "s", "r"))).to.match(/names 4 runs \(r1, r2, r3, r4\): give more of the id/);
    expect(errorOf(() => pickRun(record, "s", "x9"))).to.equal("no run x9 is recorded (the last 4: r1, r2, r3, r4)");
    expect(errorOf(() => pickRun(record, "s", "r3"))).to.match(/^run r3 had pairs that failed/);
  });

  it("nothing to go back to is an error naming the stack", () => {
    expect(errorOf(() => pickRun(undefined, "prod"))).to.match(
      /^stack prod has no successful run of other commits or settings before its latest \(0 recorded\)/,
    );
    expect(() => pickRun({ runs: [run("r1")] }, "prod")).to.throw(FleetError, /1 recorded/);
  });

  it("a plain directory's content hash is no commit: left unpinned and named", () => {
    const r = run("r1", { commits: { apps: A, local: "dir-0123abcd" } });
    expect(pinnedCommits(r)).to.deep.equal({ apps: A });
    expect(unpinnable(r)).to.deep.equal(["local"]);
  });
});

describe("runs: the record and the pin", () => {
  const pin = (at: string): RunPin => ({ run: run("r1"), by: "rb", who: "alice", at, over: { apps: B } });

  it("keeps the last runs only, oldest dropped first (PULUMI_FLEET_RUNS_KEPT, default 20)", () => {
    let r: StackRuns | undefined;
    for (let i = 0; i < 5; i++) r = withRun(r, run(`r${i}`, { commits: { apps: `c${i}` } }), 3).next;
    expect(r!.runs.map((x) => x.id)).to.deep.equal(["r2", "r3", "r4"]);
    expect(runsKept({})).to.equal(20);
    expect(runsKept({ PULUMI_FLEET_RUNS_KEPT: "5" })).to.equal(5);
    expect(errorOf(() => runsKept({ PULUMI_FLEET_RUNS_KEPT: "1" }))).to.match(/from 2 to 1000/);
  });

  it("a plain up that began after the pin removes it (the next commit wins); one that began before, a rollback and a redeploy keep it", () => {
    const p = pin("2026-11-29T05:00:00.000Z");
    expect(pinAfterRun(p, { kind: "up", at: "2026-11-29T06:00:00.000Z" })).to.equal(undefined);
    expect(pinAfterRun(p, { kind: "up", at: "2026-11-29T04:00:00.000Z" })).to.equal(p);
    expect(pinAfterRun(p, { kind: "rollback", at: "2026-11-29T06:00:00.000Z" })).to.equal(p);
    expect(pinAfterRun(p, { kind: "redeploy", at: "2026-11-29T06:00:00.000Z" })).to.equal(p);
    const after = withRun({ runs: [], pin: p }, run("r6"), 20);
    expect(after.next.pin).to.equal(undefined);
    expect(after.unpinned).to.equal(p);
    expect(withRun({ runs: [], pin: p }, run("r6", { kind: "rollback" }), 20)).to.deep.equal({ next: { runs: [run("r6", { kind: "rollback" })], pin: p } });
  });

  it("a plain up while pinned: the next commit wins once a GitRepo the rollback replaced moved on; an unknown head or a new GitRepo is no news", () => {
    const p = { ...pin("2026-11-29T05:00:00.000Z"), over: { apps: B, lib: B } };
    expect(newCommits(p, { apps: B, lib: B })).to.deep.equal([]);
    expect(newCommits(p, { apps: B, lib: undefined, added: A })).to.deep.equal([]);
    expect(newCommits(p, { lib: A, apps: A })).to.deep.equal(["apps", "lib"]);
  });

  it("--list: newest first, the pin above", () => {
    expect(runLines(undefined, "s")).to.deep.equal(["stack s has no recorded run"]);
    expect(runLines({ runs: [run("r1"), run("r2", { kind: "rollback", of: "r1", ok: false })], pin: pin("2026-11-29T05:00:00.000Z") }, "s")).to.deep.equal([
      "pinned: rolled back to run r1 by alice at 2026-11-29T05:00:00.000Z (rollback run rb)",
      `r2  rollback  2026-11-29T02:00:00.000Z  failed  apps@${A.slice(0, 12)}  (of run r1)`,
      `r1  up        2026-11-29T01:00:00.000Z  ok      apps@${A.slice(0, 12)}`,
    ]);
  });

  it("run ids sort as their times do", () => {
    const ids = ["2026-11-29T07:00:00Z", "2026-11-29T07:00:01Z", "2026-12-01T00:00:00Z"].map((t, i) => newRunId(new Date(t), () => (3 - i) / 4));
    expect(ids[0]).to.match(/^20261129-070000-[0-9a-z]{2}$/);
    expect([...ids].sort()).to.deep.equal(ids);
  });

  it("is kept beside a file backend's state, updated as one step", async () => {
    const dir = tempDir("pf-runs-");
    const store = runsStore(resolveBackend({ stateDir: dir }), "pulumi-fleet", "s");
    expect(await store.read()).to.equal(undefined);
    await store.update((r) => withRun(r, run("r1"), 20).next);
    await store.update((r) => ({ ...r!, pin: pin("2026-11-29T05:00:00.000Z") }));
    expect(store.where).to.equal(path.join(dir, "runs.s.json"));
    expect((await store.read())!.pin!.who).to.equal("alice");
  });

  it("a plain up that cannot read the runs deploys nothing: an unknown pin is not 'no pin'", async () => {
    const dir = tempDir("pf-runs-");
    fs.writeFileSync(path.join(dir, "runs.s.json"), "{ torn");
    const err = await upWhilePinned({ stack: "s", stateDir: dir, config: SETTINGS }, () => undefined).then(
      () => "no error",
      (e: Error) => e.message,
    );
    expect(err).to.match(/^stack s: its runs could not be read \(.*\): whether a rollback is pinned is unknown, so nothing was deployed/);
  });
});

describe("runs: settings without credentials", () => {
  const current = (): StackConfig => ({
    ...SETTINGS,
    agent: { token: "agent-token-now" },
    clusters: [
      {
        name: "c1",
        labels: {},
        annotations: {},
        templateValues: {},
        deleteUnreachable: false,
        kubeconfig: "kubeconfig-c1-now",
        agent: { token: "c1-token-now" },
      },
      { name: "c2", labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, context: "ctx", paused: { reason: "incident" } },
    ],
    gitRepos: [
      gitRepoConfig({
        name: "apps",
        repo: "https://git.example/apps",
        auth: { username: "bot", token: "git-token-now" },
        helmSecret: { username: "u", password: "helm-password-now", insecureSkipVerify: false, basicHTTP: false },
        sopsAgeKey: "AGE-SECRET-KEY-NOW",
        downstreamResources: [
          { name: "db", namespace: "apps", type: "Opaque", labels: {}, annotations: {}, data: { password: "ZGItbm93" }, keys: ["password"] },
        ],
      }),
    ],
  });

  it("records no credential, every other setting as it was", () => {
    const then = current();
    then.clusters[0].labels = { env: "prod" };
    const recorded = withoutCredentials(then);
    const text = JSON.stringify(recorded);
    for (const secret of ["agent-token-now", "kubeconfig-c1-now", "c1-token-now", "git-token-now", "helm-password-now", "AGE-SECRET-KEY-NOW", "ZGItbm93"])
      expect(text).to.not.contain(secret);
    expect(recorded.clusters[0]).to.deep.include({ kubeconfig: CREDENTIAL, labels: { env: "prod" } });
    expect(recorded.gitRepos[0].auth).to.deep.equal({ username: "bot", token: CREDENTIAL });
    expect(then.clusters[0].kubeconfig, "the run's own config is not changed").to.equal("kubeconfig-c1-now");
  });

  it("re-applies them with today's credentials and pauses, by the same cluster and GitRepo", () => {
    const then = current();
    then.clusters[0].paused = { reason: "an old incident" };
    then.clusters[1].paused = undefined;
    then.clusters[1].labels = { tier: "old" };
    const now = current();
    now.clusters[0].kubeconfig = "kubeconfig-c1-rotated";
    const applied = withCurrentCredentials(withoutCredentials(then), now, "r1");
    expect(applied.clusters[0].kubeconfig).to.equal("kubeconfig-c1-rotated");
    expect(applied.clusters[0].paused, "paused as it is now").to.equal(undefined);
    expect(applied.clusters[1]).to.deep.include({ paused: { reason: "incident" }, labels: { tier: "old" } });
    expect(applied.agent.token).to.equal("agent-token-now");
    expect(applied.gitRepos[0].downstreamResources![0].data).to.deep.equal({ password: "ZGItbm93" });
    expect(applied.gitRepos[0].helmSecret!.password).to.equal("helm-password-now");
  });

  it("a re-applied run does not record the fingerprint of the current inputs (a later up with them would be left out while the state holds the pinned commits)", async () => {
    const given: OperationOptions = { stack: "s", config: current(), deploy: { inputs: "f".repeat(64), commits: { apps: B }, cacheRoot: "/c" } };
    const o = await reapplied(given, run("r1", { settings: withoutCredentials(current()) }), { id: "r2", kind: "rollback", of: "r1" }, () => undefined);
    expect(o.deploy).to.deep.equal({ cacheRoot: "/c", commits: { apps: A } });
  });

  it("a shard's run from before one of its clusters moved to another shard is refused: re-applied, two stacks would deploy that cluster", async () => {
    const then = current(); // c1 (and c2, if any) deployed by this shard then
    const now = { ...current(), clusters: [], shard: { environment: "prod", name: "eu", elsewhere: ["c1"], otherClusters: current().clusters } };
    const given: OperationOptions = { stack: "prod.eu", config: now };
    const err = await reapplied(given, run("r1", { settings: withoutCredentials(then) }), { id: "r2", kind: "rollback", of: "r1" }, () => undefined).catch(
      (e: Error) => e.message,
    );
    expect(err).to.match(/run r1 of shard stack prod\.eu is from before cluster\(s\) c1 moved between shards/);
    // A run from before c1 moved in (then in another shard): re-applied, it would delete c1's deployments here.
    const before = { ...current(), clusters: [], shard: { environment: "prod", name: "eu", elsewhere: ["c1"], otherClusters: [] } };
    const settledHere = { ...current(), shard: { environment: "prod", name: "eu", elsewhere: [], otherClusters: [] } };
    const err2 = await reapplied(
      { stack: "prod.eu", config: settledHere },
      run("r1", { settings: withoutCredentials(before) }),
      { id: "r2", kind: "redeploy" },
      () => undefined,
    ).catch((e: Error) => e.message);
    expect(err2).to.match(/is from before cluster\(s\) c1 moved between shards/);
    // The same run on a shard that still holds c1 is re-applied.
    const still = { ...current(), shard: { environment: "prod", name: "eu", elsewhere: [], otherClusters: [] } };
    const o = await reapplied(
      { stack: "prod.eu", config: still },
      run("r1", { settings: withoutCredentials(then) }),
      { id: "r2", kind: "rollback", of: "r1" },
      () => undefined,
    );
    expect(o.config!.clusters.map((c) => c.name)).to.include("c1");
  });

  it("any field the stack file keeps as a Pulumi secret is recorded as a credential too, and re-applied from the same place by name", () => {
    const raw = {
      clusters: [
        { name: "c2", context: "ctx" },
        { name: "c1", kubeconfig: { secure: "v1:abc" }, templateValues: { db: { password: { secure: "v1:def" } } } },
      ],
      gitRepos: [{ name: "apps", repo: "x", allowedChartURLs: ["a", { secure: "v1:ghi" }] }],
    };
    const secure = securePaths(raw);
    expect(secure).to.deep.equal([
      ["clusters", { id: "c1" }, "kubeconfig"],
      ["clusters", { id: "c1" }, "templateValues", "db", "password"],
      ["gitRepos", { id: "apps" }, "allowedChartURLs", 1],
    ]);
    const then = current();
    then.clusters[0].templateValues = { db: { password: "hunter2", user: "app" } };
    then.gitRepos[0].allowedChartURLs = ["a", "https://secret.example/"];
    const recorded = withoutCredentials(then, secure);
    expect(JSON.stringify(recorded)).to.not.contain("hunter2").and.to.not.contain("secret.example");
    expect(recorded.clusters[0].templateValues).to.deep.equal({ db: { password: CREDENTIAL, user: "app" } });
    const now = current();
    now.clusters[0].templateValues = { db: { password: "rotated", user: "app" } };
    now.gitRepos[0].allowedChartURLs = ["a", "https://secret.example/v2"];
    const applied = withCurrentCredentials(recorded, now, "r1");
    expect(applied.clusters[0].templateValues).to.deep.equal({ db: { password: "rotated", user: "app" } });
    expect(applied.gitRepos[0].allowedChartURLs).to.deep.equal(["a", "https://secret.example/v2"]);
    now.clusters[0].templateValues = {};
    expect(errorOf(() => withCurrentCredentials(recorded, now, "r1"))).to.match(/clusters\[c1\]\.templateValues\.db\.password: run r1 used a credential here/);
  });

  it("a HelmOp's secret values are recorded as credentials, and re-applied from the stack file as it is now", () => {
    const entry = (password: string) => ({
      name: "db",
      helm: { repo: "https://charts.example.com", chart: "db", values: { password } },
      targets: [{ clusterName: "c1", helm: { values: { password } } }],
      allowedChartURLs: ["https://charts\\.example\\.com/.*"],
    });
    const withHelmOp = (password: string): StackConfig => ({
      ...current(),
      gitRepos: [...current().gitRepos, ...parseStackConfig({ helmOps: [entry(password)] }, "stacks/Pulumi.s.yaml", ".").gitRepos],
    });
    const secure = securePaths({
      helmOps: [
        {
          ...entry(""),
          helm: { ...entry("").helm, values: { password: { secure: "v1:x" } } },
          targets: [{ clusterName: "c1", helm: { values: { password: { secure: "v1:y" } } } }],
        },
      ],
    });
    const recorded = withoutCredentials(withHelmOp("hunter2"), secure);
    expect(JSON.stringify(recorded)).to.not.contain("hunter2");
    const applied = withCurrentCredentials(recorded, withHelmOp("rotated"), "r1");
    const spec = applied.gitRepos.find((g) => g.name === "db")!.helmOp!.fleetYaml as {
      helm: { values: object };
      targetCustomizations: { helm: { values: object } }[];
    };
    expect(spec.helm.values).to.deep.equal({ password: "rotated" });
    expect(spec.targetCustomizations[0].helm.values).to.deep.equal({ password: "rotated" });
  });

  it("a credential the stack file no longer has is an error naming the cluster or GitRepo and the field", () => {
    const recorded = withoutCredentials(current());
    const gone = current();
    gone.clusters = gone.clusters.slice(1);
    expect(errorOf(() => withCurrentCredentials(recorded, gone, "r1"))).to.equal(
      "stacks/Pulumi.s.yaml cluster c1: kubeconfig: run r1 used a credential here that the stack file no longer has (the cluster is gone or unset), so it cannot be re-applied",
    );
    const unset = current();
    unset.gitRepos[0].auth = { username: "bot" };
    expect(errorOf(() => withCurrentCredentials(recorded, unset, "r1"))).to.match(/gitRepo apps: auth\.token: run r1 used a credential/);
  });
});

describe("runs: the watcher holds while a rollback is pinned", () => {
  const pin: WatchPin = { stack: "prod", run: "r1", who: "alice", at: "2026-11-29T05:00:00.000Z" };
  const inputs = { commits: { apps: B }, stackHash: "h" };

  it("decides to hold, saying who rolled back to which run and how to resume; once unpinned an up runs at once", () => {
    const deployed: WatchMemory = afterUp({}, { commits: { apps: A }, stackHash: "h" }, { ok: true, resolved: {} }, 0, 15_000);
    expect(decideUp(deployed, inputs, 1, pin)).to.deep.equal({
      run: false,
      wait: "held: rolled back to run r1 by alice at 2026-11-29T05:00:00.000Z; `npm run rollback -- --stack prod --unpin` to resume",
    });
    expect(heldText(pin)).to.contain("--unpin");
    // The clusters hold the rollback's commits: with nothing new since the watcher's last up, it deploys anyway.
    const same = { commits: { apps: A }, stackHash: "h" };
    expect(decideUp(deployed, same, 1)).to.deep.equal({ run: false });
    const resumed = afterPin(deployed, pin, undefined);
    expect(decideUp(resumed, same, 1)).to.deep.equal({ run: true, reason: "the rollback to run r1 was unpinned: deploying the current commits" });
    expect(afterUp(resumed, same, { ok: true, resolved: {} }, 2, 15_000)).to.deep.equal({ deployed: same });
    expect(afterPin(deployed, undefined, pin)).to.equal(deployed);
  });

  it("its loop runs no up on new commits while pinned, says so once, and deploys once unpinned", async () => {
    let clock = 0;
    let head = A;
    let pinned: WatchPin | undefined = pin;
    const ups: [number, string][] = [];
    const logs: string[] = [];
    const events: [number, () => void][] = [
      [20_000, () => (head = B)],
      [60_000, () => (pinned = undefined)],
    ];
    await watchLoop({
      now: () => clock,
      stopped: () => clock >= 100_000,
      sleepUntil: async (at, wake) => {
        const woken = await Promise.race([wake.then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]);
        if (woken) return;
        clock = Math.max(clock, at);
        for (const [when, act] of events) if (when <= clock) act();
      },
      stackHash: () => "h",
      readConfig: async () => ({ gitRepos: [gitRepoConfig({ name: "apps", repo: "x" })] }),
      poll: async () => head,
      pin: async () => pinned,
      up: async (reason): Promise<UpOutcome> => {
        ups.push([clock, reason]);
        clock += 3000;
        return { ok: true, resolved: { apps: head } };
      },
      log: (l) => logs.push(l),
    });
    expect(ups).to.deep.equal([[60_000, "the rollback to run r1 was unpinned: deploying the current commits"]]);
    expect(logs.filter((l) => l.startsWith("held: "))).to.have.length(1);
    expect(logs).to.include("the rollback to run r1 was unpinned: resuming");
  });
});

describe("runs: deploy and notification events say the run", () => {
  const e: DeployEvent = {
    event: "deployed",
    bundle: "web",
    cluster: "c1",
    gitRepo: "apps",
    deploymentId: "s-1:web",
    commit: "abc",
    created: 0,
    updated: 1,
    replaced: 0,
    deleted: 0,
  };

  it("a rollback's and a redeploy's deploys are told apart from an ordinary up's", () => {
    expect(formatDeployEvent(ofRun([e], { id: "r9", kind: "up" })[0])).to.equal(
      "Deployed bundle web to c1 deploymentID=s-1:web commit=abc (0 created, 1 updated, 0 deleted)",
    );
    const [rb] = ofRun([e], { id: "r9", kind: "rollback", of: "r1" });
    expect(rb).to.deep.include({ run: "r9", runKind: "rollback" });
    expect(formatDeployEvent(rb)).to.match(/ by rollback run=r9$/);
    const observed = [
      { key: "apps/web/c1", gitRepo: "apps", bundle: "web", cluster: "c1", state: "Ready", message: "", deploymentId: "s-1:web", commit: "abc" },
    ];
    const d = decideAfterUp({ "apps/web/c1": { state: "Ready", message: "" } }, observed, new Map([["apps/web/c1", formatDeployEvent(rb)]]), [], {
      stack: "s",
      time: "t",
      run: { id: "r9", kind: "redeploy" },
    });
    expect(d.events.map((x) => [x.type, x.run, x.runKind])).to.deep.equal([["deployed", "r9", "redeploy"]]);
  });
});

describe("runs: the command line", () => {
  const ROOT = path.resolve(__dirname, "../..");
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(ROOT, "scripts/run-ts.js"), path.join(ROOT, "scripts/rollback.ts"), ...args], { encoding: "utf8", cwd: ROOT });

  it("refuses options of the other operation and contradictions with the usage line (exit 2), before touching any stack", () => {
    const r = run("redeploy", "--stack", "nowhere", "--to", "r1");
    expect([r.status, r.stderr.split("\n")[0]]).to.deep.equal([2, "error: --to, --yes, --by, --unpin and --list are for rollback"]);
    const u = run("rollback", "--stack", "nowhere", "--unpin", "--yes");
    expect([u.status, u.stderr.split("\n")[0]]).to.deep.equal([2, "error: --unpin deploys nothing: it takes no --to, --yes or --by"]);
    // Who rolled back goes into the PR summary, chat and CI logs: a name, not markup.
    const b = run("rollback", "--stack", "nowhere", "--yes", "--by", "<img src=x> [x](http://e)");
    expect(b.status).to.equal(2);
    expect(b.stderr.split("\n")[0]).to.match(/^error: --by must be a name of at most 64 letters/);
  });
});

describe("runs: a rollback's steps (fake operations, a real file store)", () => {
  const setup = async () => {
    const dir = tempDir("pf-rollback-");
    const options: OperationOptions = { stack: "s", stateDir: dir, config: SETTINGS };
    const store = runsStore(resolveBackend(options), "pulumi-fleet", "s");
    await store.write({ runs: [run("r1"), run("r2", { commits: { apps: B } })] });
    const calls: [string, OperationOptions][] = [];
    const steps: RunSteps = {
      preview: async (o) => void calls.push(["preview", o]),
      up: async (o) => void calls.push(["up", o]),
    };
    return { options, store, calls, steps };
  };

  it("previews the target's commits and settings, asks, pins, then deploys them as kind rollback", async () => {
    const { options, store, calls, steps } = await setup();
    const end = await rollback(options, { who: "alice", confirm: async () => (await store.read())?.pin === undefined, say: () => undefined }, steps);
    expect(calls.map(([op]) => op)).to.deep.equal(["preview", "up"]);
    const [, o] = calls[1];
    expect(o.deploy?.commits).to.deep.equal({ apps: A });
    expect(o.run).to.deep.include({ kind: "rollback", of: "r1" });
    expect(end.done).to.equal(true);
    const pin = (await store.read())!.pin!;
    expect(pin).to.deep.include({ who: "alice", by: o.run!.id, over: { apps: B } });
    // A second rollback while pinned: what the first replaced stays the commits a plain up waits to move on from.
    await store.update((r) => ({ ...r!, runs: [...r!.runs, run("r3", { kind: "rollback", of: "r1" })] }));
    await rollback(options, { to: "r2", who: "bob", confirm: async () => true, say: () => undefined }, steps);
    expect((await store.read())!.pin).to.deep.include({ who: "bob", over: { apps: B } });
  });

  it("declined after the preview: nothing deployed, nothing pinned", async () => {
    const { options, store, calls, steps } = await setup();
    const end = await rollback(options, { who: "alice", confirm: async () => false, say: () => undefined }, steps);
    expect([end.done, calls.map(([op]) => op), (await store.read())!.pin]).to.deep.equal([false, ["preview"], undefined]);
  });
});
