/**
 * Rollback and redeploy as runs (issue 56 item 4) on two live clusters and a real git repository:
 * commit A deployed, then a bad commit B (an object's content changed, another added) with a stack file
 * change (one more path); a rollback to A's run (the default: the successful run before the latest)
 * previews first, then brings every object back to its content after A's run (compared on the live
 * clusters), leaves the repository's history and the stack's settings as they are, is recorded as a run of
 * kind rollback whose deploy events say so, and pins it: the watcher's own read of the pin holds it. A
 * redeploy while pinned recreates an object deleted by hand, at the rollback's content, and keeps the
 * pin; a plain up with no new commit (a schedule's) re-applies the rollback; once a commit lands, a plain
 * up deploys it (the next commit wins) and ends the pin, saying so.
 */
import { expect } from "chai";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { resolveBackend } from "../../automation/engine/backend";
import { PROJECT_NAME } from "../../automation/engine/stack";
import { StackConfig } from "../../core/config/stack";
import { redeploy, rollback, RunSteps } from "../../automation/runs/rollback";
import { runsStore } from "../../automation/runs/runs";
import { CREDENTIAL } from "../../automation/runs/settings";
import { liveWatchDeps } from "../../automation/watch/live";
import { decideUp } from "../../automation/watch/decide";
import { gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { liveClusterConfig, tearDownLive } from "../support/live-stack";
import { liveClusters } from "../support/live-clusters";

const NS = "rollback-test";
const STACK = "rollback";
const cm = (name: string, value: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${NS}\ndata:\n  value: "${value}"\n`;

describe("rollback and redeploy as runs on live clusters", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-rollback-");
  const repo = new TestRepo({ "app/settings.yaml": cm("settings", "good"), "more/extra.yaml": cm("extra", "one") });
  let clusters: LocalCluster[] = [];
  let config: StackConfig;
  const options = (): ops.OperationOptions => ({
    stack: STACK,
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: STACK },
  });
  const store = () => runsStore(resolveBackend(options()), PROJECT_NAME, STACK);
  /** Every ConfigMap of the test's namespace on every cluster, as name -> data (what a rollback must restore). */
  const live = async () =>
    Object.fromEntries(
      await Promise.all(
        clusters.map(async (c) => {
          const list = (await kubeGet(c, `/api/v1/namespaces/${NS}/configmaps`)) as { items: { metadata: { name: string }; data?: object }[] } | undefined;
          const mine = (list?.items ?? []).filter((i) => i.metadata.name !== "kube-root-ca.crt");
          return [c.name, Object.fromEntries(mine.map((i) => [i.metadata.name, i.data ?? {}]))] as const;
        }),
      ),
    );
  const history = () => repo.git("log", "--format=%H", "master");

  before(function () {
    toolchain();
    clusters = liveClusters().clusters.slice(0, 2);
    config = {
      file: `stacks/Pulumi.${STACK}.yaml`,
      fleetVersion: "0.13.1",
      agent: { enabled: false },
      clusterGroups: [],
      clusters: clusters.map((c) => liveClusterConfig(c)),
      gitRepos: [gitRepoConfig({ name: "rb", repo: repo.url(), branch: "master", paths: ["app"], targets: [{ clusterSelector: {} }] })],
    };
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await tearDownLive(options(), clusters, NS, work);
  });

  let good: Awaited<ReturnType<typeof live>>;
  let goodRun: string;
  let bad: string;

  it("each up is recorded as a run with its commits and settings, never a credential", async () => {
    const a = repo.head();
    const first = await ops.up(options());
    good = await live();
    expect(good[clusters[0].name]).to.deep.equal({ settings: { value: "good" } });
    bad = repo.commit({ "app/settings.yaml": cm("settings", "bad"), "app/new.yaml": cm("added", "by-b") }, "a bad release");
    config = { ...config, gitRepos: [{ ...config.gitRepos[0], paths: ["app", "more"] }] };
    const second = await ops.up(options());
    expect((await live())[clusters[1].name]).to.deep.equal({ settings: { value: "bad" }, added: { value: "by-b" }, extra: { value: "one" } });
    const runs = (await store().read())!.runs;
    expect(runs.map((r) => [r.id, r.kind, r.ok, r.commits])).to.deep.equal([
      [first.run!.id, "up", true, { rb: a }],
      [second.run!.id, "up", true, { rb: bad }],
    ]);
    expect(runs[0].settings.gitRepos[0].paths).to.deep.equal(["app"]);
    expect(runs[0].settings.clusters.map((c) => c.kubeconfig)).to.deep.equal([CREDENTIAL, CREDENTIAL]);
    expect(JSON.stringify(runs)).to.not.contain(config.clusters[0].kubeconfig!.slice(0, 200));
    goodRun = first.run!.id;
  });

  it("a rollback previews, then restores the earlier run's objects as a run of its own, pinned, without touching git or the stack file", async () => {
    const before = history();
    const order: string[] = [];
    let previewed: ops.PreviewResult | undefined;
    let rolled: ops.UpResult | undefined;
    const steps: RunSteps = {
      preview: async (o) => {
        order.push("preview");
        previewed = await ops.preview(o);
      },
      up: async (o) => {
        order.push("up");
        rolled = await ops.up(o);
      },
    };
    const said: string[] = [];
    const stackFileBefore = JSON.stringify(config);
    const end = await rollback(options(), { who: "alice", confirm: async () => order.length === 1, say: (l) => said.push(l) }, steps);
    expect(order).to.deep.equal(["preview", "up"]);
    expect(previewed!.changes.update ?? 0, "the preview shows the change back").to.be.greaterThan(0);
    expect(end.done && end.target.id).to.equal(goodRun);
    expect(await live(), "every object as after A's run").to.deep.equal(good);
    expect(history(), "git history unchanged").to.equal(before);
    expect(repo.head()).to.equal(bad);
    expect(JSON.stringify(config)).to.equal(stackFileBefore);
    expect(rolled!.events.length).to.be.greaterThan(0);
    expect(rolled!.events.every((e) => e.runKind === "rollback" && e.run === rolled!.run!.id)).to.equal(true);
    const record = (await store().read())!;
    expect(record.runs.at(-1)).to.deep.include({ kind: "rollback", of: goodRun, ok: true, commits: { rb: record.runs[0].commits.rb } });
    expect(record.pin).to.deep.include({ who: "alice", by: rolled!.run!.id });
    expect(record.pin!.run.id).to.equal(goodRun);
    expect(said[0]).to.match(new RegExp(`^rollback of stack ${STACK} to run ${goodRun} `));
  });

  it("the watcher's own read of the pin holds it: new commits wait", async () => {
    const saved = process.env.PULUMI_BACKEND_URL;
    process.env.PULUMI_BACKEND_URL = `file://${path.join(work, "state")}`;
    try {
      const pin = await liveWatchDeps({ stack: STACK, log: () => undefined }).pin!();
      expect(pin).to.deep.include({ stack: STACK, run: goodRun, who: "alice" });
      const decision = decideUp({ deployed: { commits: { rb: "0".repeat(40) }, stackHash: "h" } }, { commits: { rb: bad }, stackHash: "h" }, 0, pin);
      expect(decision).to.deep.equal({
        run: false,
        wait: `held: rolled back to run ${goodRun} by alice at ${pin!.at}; \`npm run rollback -- --stack ${STACK} --unpin\` to resume`,
      });
    } finally {
      if (saved === undefined) delete process.env.PULUMI_BACKEND_URL;
      else process.env.PULUMI_BACKEND_URL = saved;
    }
  });

  it("a redeploy recreates an object deleted by hand, at the pinned rollback's content, and keeps the pin", async () => {
    await kubeRequest(clusters[0], "DELETE", `/api/v1/namespaces/${NS}/configmaps/settings`);
    expect((await live())[clusters[0].name]).to.deep.equal({});
    const run = await redeploy(options(), () => undefined);
    expect(await live()).to.deep.equal(good);
    const record = (await store().read())!;
    expect(record.runs.at(-1)).to.deep.include({ id: run.id, kind: "redeploy", of: goodRun });
    expect(record.pin!.run.id).to.equal(goodRun);
  });

  it("a plain up with no new commit since (a schedule's) re-applies the rollback and keeps the pin, saying so; a plain preview says so too", async () => {
    const previewWarnings: string[] = [];
    const p = await ops.preview({ ...options(), onWarning: (m) => previewWarnings.push(m) });
    expect(previewWarnings.join("\n")).to.contain(`rolled back to run ${goodRun} by alice`);
    expect(p.summaryMarkdown).to.contain("this preview shows the current commits, but an up re-applies that run");
    const warnings: string[] = [];
    const r = await ops.up({ ...options(), onWarning: (m) => warnings.push(m) });
    expect(await live()).to.deep.equal(good);
    expect(r.run).to.deep.include({ kind: "rollback", of: goodRun });
    expect(r.unpinned).to.equal(undefined);
    expect(warnings.join("\n")).to.contain(`held: stack ${STACK} is rolled back to run ${goodRun} by alice`);
    expect((await store().read())!.pin!.run.id).to.equal(goodRun);
  });

  it("the next commit wins: a plain up deploys it and ends the pin, saying so", async () => {
    repo.commit({ "app/settings.yaml": cm("settings", "fixed") }, "the fix");
    const warnings: string[] = [];
    const r = await ops.up({ ...options(), onWarning: (m) => warnings.push(m) });
    expect((await live())[clusters[0].name]).to.deep.equal({ settings: { value: "fixed" }, added: { value: "by-b" }, extra: { value: "one" } });
    expect(r.run!.kind).to.equal("up");
    expect(r.unpinned!.run.id).to.equal(goodRun);
    expect(warnings.join("\n")).to.contain("gitRepo(s) rb moved on since: the next commit wins");
    expect(warnings.join("\n")).to.contain(`this up deployed the current commits, so it ended the rollback (rolled back to run ${goodRun} by alice`);
    expect((await store().read())!.pin).to.equal(undefined);
  });
});
