/**
 * rolloutStrategy's partitions (core/targeting/rollout.ts) against Fleet v0.16.1's own cases
 * (internal/cmd/controller/target/rollout_test.go: auto-partitioning, manual partitions, limits), then
 * the waves the engine walks.
 */
import { expect } from "chai";
import { ClusterView, partitionClusters } from "../../core/targeting/match";
import { RolloutStrategy } from "../../core/bundles/types";
import { partitionsOf as partitionsOfNames, rolloutWarnings } from "../../core/targeting/rollout";
import { limit } from "../../core/bundles/rollout-limit";
import { StackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { fakeFacts } from "../support/fake-facts";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";

const clusters = (
  from: number,
  to: number,
  labels: (i: number) => Record<string, string> = () => ({}),
  groups: (i: number) => [string, Record<string, string>][] = () => [],
): ClusterView[] =>
  Array.from({ length: to - from + 1 }, (_, k) => ({
    name: `c${String(from + k).padStart(4, "0")}`,
    labels: labels(from + k),
    groups: new Map(groups(from + k)),
  }));
/** The partitions of these clusters, each partition's clusters matched as a run matches them (match.ts). */
const partitionsOf = (rollout: RolloutStrategy, views: ClusterView[]) =>
  partitionsOfNames(
    rollout,
    views.map((v) => v.name),
    partitionClusters(rollout, views),
  );
const strategy = (over: Partial<RolloutStrategy> = {}): RolloutStrategy => ({ partitions: [], ...over });
const shape = (r: ReturnType<typeof partitionsOf>) => r.partitions.map((p) => [p.clusters.length, p.maxUnavailable]);

describe("rolloutStrategy partitions, as Fleet v0.16.1 computes them", () => {
  it("limit: a percentage rounded down and at least 1, a number clamped, 100% by default, digits as given, anything else an error", () => {
    expect(limit(230, "f", "25%")).to.equal(57);
    expect(limit(3, "f", "10%")).to.equal(1);
    expect(limit(10, "f", "0%")).to.equal(1);
    expect(limit(10, "f", 15)).to.equal(10);
    expect(limit(10, "f", -1)).to.equal(0);
    expect(limit(10, "f", undefined, 3)).to.equal(3);
    expect(limit(10, "f")).to.equal(10);
    expect(limit(10, "f", "12")).to.equal(12);
    expect(limit(0, "f", 0)).to.equal(1);
    expect(() => limit(10, "rolloutStrategy.maxUnavailable", "ten")).to.throw(
      /rolloutStrategy\.maxUnavailable: invalid value "ten": must be an integer or a percentage/,
    );
  });

  it("auto-partitioning: one partition below the threshold (200), chunks of autoPartitionSize (25%) from it on, the rest in a last one", () => {
    expect(shape(partitionsOf(strategy({ autoPartitionSize: 100 }), clusters(1, 200)))).to.deep.equal([
      [100, 100],
      [100, 100],
    ]);
    expect(shape(partitionsOf(strategy({ autoPartitionSize: "25%", maxUnavailable: 1 }), clusters(1, 199)))).to.deep.equal([[199, 1]]);
    expect(shape(partitionsOf(strategy(), clusters(1, 200)))).to.deep.equal([
      [50, 50],
      [50, 50],
      [50, 50],
      [50, 50],
    ]);
    expect(shape(partitionsOf(strategy({ autoPartitionSize: "49%" }), clusters(1, 1000)))).to.deep.equal([
      [490, 490],
      [490, 490],
      [20, 20],
    ]);
    expect(shape(partitionsOf(strategy({ autoPartitionSize: "10%", maxUnavailable: "10%" }), clusters(1, 1000)))).to.deep.equal(Array(10).fill([100, 10]));
    expect(shape(partitionsOf(strategy(), clusters(1, 230)))).to.deep.equal([
      [57, 57],
      [57, 57],
      [57, 57],
      [57, 57],
      [2, 2],
    ]);
    expect(shape(partitionsOf(strategy({ autoPartitionThreshold: 50, autoPartitionSize: "50%" }), clusters(1, 50)))).to.deep.equal([
      [25, 25],
      [25, 25],
    ]);
    expect(shape(partitionsOf(strategy({ autoPartitionThreshold: 50, autoPartitionSize: "50%" }), clusters(1, 49)))).to.deep.equal([[49, 49]]);
    expect(shape(partitionsOf(strategy({ autoPartitionThreshold: 0, autoPartitionSize: "25%" }), clusters(1, 500)))).to.deep.equal([[500, 500]]);
    const named = partitionsOf(strategy(), clusters(1, 200));
    expect(named.partitions.map((p) => p.name)).to.deep.equal(["Partition 0 - 50", "Partition 50 - 100", "Partition 100 - 150", "Partition 150 - 200"]);
    expect(partitionsOf(strategy(), clusters(1, 3)).partitions.map((p) => p.name)).to.deep.equal(["All"]);
  });

  it("explicit partitions: cluster names, groups and selectors; a cluster matched twice is in both; unmatched clusters are in none", () => {
    const byName = partitionsOf(
      strategy({
        partitions: [
          { name: "a", clusterName: "c0001" },
          { name: "b", clusterName: "c0003" },
        ],
      }),
      clusters(1, 4),
    );
    expect(byName.partitions.map((p) => [p.name, p.clusters])).to.deep.equal([
      ["a", ["c0001"]],
      ["b", ["c0003"]],
    ]);
    expect(byName.unpartitioned).to.deep.equal(["c0002", "c0004"]);
    const grouped = clusters(
      1,
      4,
      () => ({}),
      (i) => [[i <= 2 ? "eu" : "us", { region: i <= 2 ? "eu" : "us" }]],
    );
    const byGroup = partitionsOf(
      strategy({
        partitions: [
          { name: "eu", clusterGroup: "eu" },
          { name: "us", clusterGroupSelector: { matchLabels: { region: "us" } } },
        ],
      }),
      grouped,
    );
    expect(byGroup.partitions.map((p) => p.clusters)).to.deep.equal([
      ["c0001", "c0002"],
      ["c0003", "c0004"],
    ]);
    const labelled = clusters(1, 100, (i): Record<string, string> =>
      i <= 40 ? { env: "testing" } : i <= 60 ? { env: "testing", group: "a" } : { group: "a" },
    );
    const twice = partitionsOf(
      strategy({ partitions: [{ clusterSelector: { matchLabels: { env: "testing" } } }, { clusterSelector: { matchLabels: { group: "a" } } }] }),
      labelled,
    );
    expect(shape(twice)).to.deep.equal([
      [60, 60],
      [60, 60],
    ]);
    // Fleet's "doesn't put unmatched clusters in separate partitions at the end using AutoPartitionSize".
    const half = partitionsOf(
      strategy({ autoPartitionSize: "50%", partitions: [{ name: "first", clusterSelector: { matchLabels: { group: "a" } } }] }),
      clusters(1, 100, (i): Record<string, string> => (i <= 50 ? { group: "a" } : {})),
    );
    expect(shape(half)).to.deep.equal([[50, 50]]);
    expect(half.unpartitioned).to.have.length(50);
  });

  it("waves: a partition holds back the next when its maxUnavailable is below its size; within it, groups of that size; the bundle's maxUnavailable caps every wave", () => {
    const four = clusters(1, 4);
    const canary = partitionsOf(
      strategy({
        partitions: [
          { name: "canary", clusterName: "c0001", maxUnavailable: 0 },
          { name: "rest", clusterSelector: { matchExpressions: [{ key: "x", operator: "DoesNotExist" }] } },
        ],
      }),
      four,
    );
    expect(canary.waves).to.deep.equal([
      { partition: "canary", clusters: ["c0001"], afterPrevious: false },
      { partition: "rest", clusters: ["c0002", "c0003", "c0004"], afterPrevious: true },
    ]);
    // Fleet's defaults hold nothing back: one wave, as without a strategy.
    const loose = partitionsOf(
      strategy({
        partitions: [
          { name: "canary", clusterName: "c0001" },
          { name: "rest", clusterSelector: {} },
        ],
      }),
      four,
    );
    expect(loose.waves.map((w) => [w.partition, w.clusters.length, w.afterPrevious])).to.deep.equal([
      ["canary", 1, false],
      ["rest", 3, false],
    ]);
    // maxUnavailable 1 on the bundle: one cluster at a time, in partition order.
    expect(partitionsOf(strategy({ maxUnavailable: 1 }), four).waves.map((w) => [w.clusters, w.afterPrevious])).to.deep.equal([
      [["c0001"], false],
      [["c0002"], true],
      [["c0003"], true],
      [["c0004"], true],
    ]);
    // A partition of 4 with maxUnavailable 2: two waves, and the next partition after both.
    const eight = partitionsOf(
      strategy({
        partitions: [
          { name: "a", clusterSelector: { matchLabels: { half: "1" } }, maxUnavailable: 2 },
          { name: "b", clusterSelector: { matchLabels: { half: "2" } } },
        ],
      }),
      clusters(1, 8, (i) => ({ half: i <= 4 ? "1" : "2" })),
    );
    expect(eight.waves.map((w) => [w.partition, w.clusters.length, w.afterPrevious])).to.deep.equal([
      ["a", 2, false],
      ["a", 2, true],
      ["b", 4, true],
    ]);
  });

  it("says where it differs from Fleet's code: maxUnavailable 0, tolerated unavailable partitions, maxNew, clusters in no partition", () => {
    const rollout = strategy({
      maxNew: 10,
      maxUnavailablePartitions: 1,
      partitions: [
        { name: "canary", clusterName: "c0001", maxUnavailable: 0 },
        { name: "b", clusterName: "c0002" },
        { name: "c", clusterName: "c0003" },
      ],
    });
    const text = rolloutWarnings(rollout, partitionsOf(rollout, clusters(1, 4))).join("\n");
    expect(text)
      .to.contain("partition canary has maxUnavailable 0: Fleet v0.16.1's code then never updates a cluster of it that is available")
      .and.contain("rolloutStrategy.maxUnavailablePartitions: 1 is not honoured")
      .and.contain("rolloutStrategy.maxNew: 10 is not honoured")
      .and.contain("cluster(s) c0004 match no partition; Fleet v0.16.1 never updates such clusters");
  });
});

describe("rolloutStrategy in the desired state (core/desired/state.ts)", function () {
  this.timeout(60_000);
  const cacheRoot = tempDir("pf-rollout-cache-");
  const fleetOf = (repo: string): StackConfig => ({
    file: "stacks/Pulumi.test.yaml",
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    renderDir: tempDir("pf-rollout-render-"),
    clusterGroups: [],
    clusters: ["c1", "c2", "c3", "c4"].map((name) => ({
      name,
      labels: { tier: name === "c1" ? "canary" : "main" },
      annotations: {},
      templateValues: {},
      deleteUnreachable: false,
    })),
    gitRepos: [gitRepoConfig({ name: "t", repo, paths: ["app", "other"], targets: [{ clusterSelector: {} }] })],
  });
  const ROLLOUT =
    "rolloutStrategy:\n  partitions:\n    - name: canary\n      clusterSelector: {matchLabels: {tier: canary}}\n      maxUnavailable: 0\n    - name: rest\n      clusterSelector: {matchLabels: {tier: main}}\n";

  it("the rest's deployments wait for the canary's (cross-cluster dependencies, canary registered first); deploymentIDs and objects as without it; other bundles untouched", async () => {
    const repo = new TestRepo({ "app/cm.yaml": CONFIGMAP("app"), "app/fleet.yaml": ROLLOUT, "other/cm.yaml": CONFIGMAP("other") });
    const s = await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot });
    const app = s.deployments.filter((d) => d.record.bundle === "t-app");
    expect(app.map((d) => [d.key, d.dependsOn])).to.deep.equal([
      ["c1/t/t-app", []],
      ["c2/t/t-app", ["c1/t/t-app"]],
      ["c3/t/t-app", ["c1/t/t-app"]],
      ["c4/t/t-app", ["c1/t/t-app"]],
    ]);
    expect(s.deployments.filter((d) => d.record.bundle === "t-other").every((d) => d.dependsOn.length === 0)).to.equal(true);
    expect(s.fleet.rollouts!.get("t/t-app")!.partitions.map((p) => [p.name, p.clusters, p.holds])).to.deep.equal([
      ["canary", ["c1"], true],
      ["rest", ["c2", "c3", "c4"], false],
    ]);
    expect(s.warnings.join("\n")).to.contain("bundle t-app: rolloutStrategy: partition canary has maxUnavailable 0");
    // Partitioning changes only the order: the same deploymentIDs and objects as without a strategy... except the manifest (fleet.yaml is content).
    const plain = await desiredState(
      fleetOf(new TestRepo({ "app/cm.yaml": CONFIGMAP("app"), "app/fleet.yaml": "# none\n", "other/cm.yaml": CONFIGMAP("other") }).url()),
      fakeFacts(),
      { cacheRoot },
    );
    expect(app.map((d) => d.objects.map((o) => o.manifest))).to.deep.equal(
      plain.deployments.filter((d) => d.record.bundle === "t-app").map((d) => d.objects.map((o) => o.manifest)),
    );
    expect(app[0].record.deploymentId.split(":")[1]).to.equal(plain.deployments.find((d) => d.key === "c1/t/t-app")!.record.deploymentId.split(":")[1]);
  });

  it("a canary that fails holds the rest back: they fail alone too and keep what they have", async () => {
    const repo = new TestRepo({
      "app/cm.yaml": CONFIGMAP("app"),
      "app/fleet.yaml": ROLLOUT + "helm:\n  values:\n    v: ${ .ClusterLabels.missing }\n",
      "other/cm.yaml": CONFIGMAP("other"),
    });
    // Only the canary lacks the label its values need: its templating fails.
    const config = fleetOf(repo.url());
    config.clusters = config.clusters.map((c) => (c.name === "c1" ? c : { ...c, labels: { ...c.labels, missing: "here" } }));
    const s = await desiredState(config, fakeFacts(), { cacheRoot });
    expect(s.deployments.filter((d) => d.record.bundle === "t-app")).to.deep.equal([]);
    expect(s.failures.map((f) => `${f.cluster}: ${f.reason.startsWith("rollout paused") ? "paused" : "failed"}`)).to.deep.equal([
      "c1: failed",
      "c2: paused",
      "c3: paused",
      "c4: paused",
    ]);
    expect(s.failures[1].reason).to.equal(
      "rollout paused at partition canary of bundle t-app: not ready on c1; c2, c3, c4 keep what they had until it is (rolloutStrategy; the next `up` goes on from there)",
    );
    expect(s.deployments.filter((d) => d.record.bundle === "t-other")).to.have.length(4);
  });
});
