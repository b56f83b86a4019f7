/**
 * A cluster paused in an incident (stack `clusters[].paused`, core/desired/holds.ts): everything on it
 * stays exactly as the last update left it (its pairs registered as the state holds them, paused; its
 * setup paused; its agent recorded as the one it runs), whatever its GitRepos, targets or agent settings
 * do meanwhile; the other clusters deploy; removing the pause lets the next update converge. Fake facts,
 * real git and the real renderer.
 */
import { expect } from "chai";
import { parseStackConfig, StackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { DesiredState } from "../../core/desired/types";
import { fakeFacts } from "../support/fake-facts";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { deployedAfter } from "../support/deployed-after";
import { errorOf } from "../support/errors";

const cacheRoot = tempDir("pf-cache-");
const FILE = "stacks/Pulumi.test.yaml";
const PAUSE = { reason: "incident 4711: disk pressure", by: "alice", since: "2026-11-29T04:40:00Z" };

function fleetOf(repo: string, over: { paused?: boolean; targets?: string[]; fleetVersion?: string } = {}): StackConfig {
  return {
    file: FILE,
    fleetVersion: over.fleetVersion ?? "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    renderDir: "/tmp/pulumi-fleet-render",
    clusterGroups: [],
    clusters: ["c1", "c2"].map((name) => ({
      name,
      labels: { name },
      annotations: {},
      templateValues: {},
      deleteUnreachable: false,
      ...(over.paused && name === "c2" ? { paused: PAUSE } : {}),
    })),
    gitRepos: [
      gitRepoConfig({
        name: "t",
        repo,
        paths: ["a", "b"],
        targets: (over.targets ?? ["c1", "c2"]).map((c) => ({ clusterName: c })),
      }),
    ],
  };
}

const on = (s: DesiredState, cluster: string) => s.deployments.filter((d) => d.cluster === cluster);
/** The next update's facts: what the first deployed, as the state and the outputs hold it. */
const after = (first: DesiredState) => {
  const { previous, deployed } = deployedAfter(first);
  return { ...fakeFacts({ previous: { ...previous, agents: first.summary.agents } }), deployed };
};

describe("a paused cluster (stack clusters[].paused, core/desired/holds.ts)", function () {
  this.timeout(60_000);

  it("reads reason, by and since; a pause without a reason, or with a since that is not a time, is an error naming the field", () => {
    const parse = (paused: unknown) => parseStackConfig({ clusters: [{ name: "c1", paused }] }, FILE, "/project").clusters[0];
    expect(parse(PAUSE).paused).to.deep.equal(PAUSE);
    expect(parse({ reason: "upgrade" }).paused).to.deep.equal({ reason: "upgrade" });
    expect(errorOf(() => parse({ by: "alice" }))).to.match(/clusters\[0\]\.paused\.reason: is required/);
    expect(errorOf(() => parse({ reason: "x", since: "yesterday" }))).to.match(/clusters\[0\]\.paused\.since: must be an RFC 3339 time/);
    expect(errorOf(() => parse(true))).to.match(/clusters\[0\]\.paused/);
  });

  it("a new commit, a new GitRepo and a new agent image leave the paused cluster exactly as it was; the other cluster deploys them", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a"), "b/cm.yaml": CONFIGMAP("b") });
    const first = await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot });
    repo.commit({ "a/cm.yaml": CONFIGMAP("a", { k: "new" }), "c/cm.yaml": CONFIGMAP("c") });
    // A new GitRepo targets both clusters, and a new Fleet version moves the agents' image, while c2 is paused.
    const config = fleetOf(repo.url(), { paused: true, fleetVersion: "0.13.2" });
    config.gitRepos.push(gitRepoConfig({ name: "u", repo: repo.url(), paths: ["c"], targets: [{ clusterName: "c1" }, { clusterName: "c2" }] }));
    const second = await desiredState(config, after(first), { cacheRoot });

    const firstOn2 = Object.fromEntries(on(first, "c2").map((d) => [d.key, d]));
    const pausedOn2 = on(second, "c2");
    expect(pausedOn2.map((d) => d.key).sort(), "nothing new deployed there (u's bundle), nothing pruned").to.deep.equal(Object.keys(firstOn2).sort());
    for (const d of pausedOn2) {
      expect(d.held).to.equal(true);
      expect(d.spec).to.deep.equal({ ...firstOn2[d.key].spec, paused: true });
      expect(d.record).to.deep.equal(firstOn2[d.key].record);
    }
    expect(second.failures.filter((f) => f.cluster === "c2").every((f) => f.held === "paused")).to.equal(true);
    expect(second.failures.find((f) => f.cluster === "c2")!.reason).to.equal(
      "held: cluster c2 is paused by alice since 2026-11-29T04:40:00Z: incident 4711: disk pressure (clusters[].paused; it keeps exactly what it has until resumed)",
    );
    const setup2 = second.clusters.find((c) => c.name === "c2")!.setup!;
    expect(setup2.paused, "its agent and namespaces: the provider applies nothing").to.equal(true);
    expect(second.summary.agents.c2, "the agent it still runs").to.deep.equal(first.summary.agents.c2);
    expect(second.summary.agents.c1.image).to.not.equal(first.summary.agents.c1.image);
    expect(second.warnings.some((w) => w.startsWith("held: cluster c2 is paused by alice"))).to.equal(true);

    // The other cluster deploys the new commit and the new GitRepo.
    const a1 = second.deployments.find((d) => d.key === "c1/t/t-a")!;
    expect(a1.record.deploymentId).to.not.equal(first.records["c1/t/t-a"].deploymentId);
    expect(second.deployments.some((d) => d.key === "c1/u/u-c")).to.equal(true);
    expect(second.clusters.find((c) => c.name === "c1")!.setup!.paused).to.equal(undefined);
  });

  it("a plain `pulumi up` (no state to keep objects from) with a deployed paused cluster stops, saying the cluster is paused", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a"), "b/cm.yaml": CONFIGMAP("b") });
    const first = await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot });
    const { previous } = deployedAfter(first);
    const err = await desiredState(fleetOf(repo.url(), { paused: true }), fakeFacts({ previous }), { cacheRoot }).then(
      () => "no error",
      (e: Error) => e.message,
    );
    expect(err).to.match(/cluster c2 is paused.*a paused cluster's bundle deployment cannot keep its objects as they are, so nothing was changed/s);
  });

  it("a pair leaving a paused cluster by a target edit is kept; once the pause is removed, the next update deploys and prunes as usual", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a"), "b/cm.yaml": CONFIGMAP("b") });
    const first = await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot });
    const paused = await desiredState(fleetOf(repo.url(), { paused: true, targets: ["c1"] }), after(first), { cacheRoot });
    expect(
      on(paused, "c2")
        .map((d) => `${d.key} ${d.spec.paused}`)
        .sort(),
    ).to.deep.equal(["c2/t/t-a true", "c2/t/t-b true"]);
    const resumed = await desiredState(fleetOf(repo.url(), { targets: ["c1"] }), after(first), { cacheRoot });
    expect(on(resumed, "c2"), "pruned once resumed").to.deep.equal([]);
    expect(resumed.clusters.find((c) => c.name === "c2")!.setup?.paused).to.equal(undefined);
  });
});
