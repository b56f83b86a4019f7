/**
 * A cluster paused in an incident (stack clusters[].paused, issue 56) on the three live clusters: while
 * live-3 is paused, a content change, a new bundle and a bundle dropped from its GitRepo leave
 * every object on it exactly as it was (data, UID, resourceVersion), while live-1 and live-2 take them;
 * `up` succeeds and lists live-3's pairs as held with the reason; `status` shows them OutOfSync. Removing
 * the pause, the next `up` converges: live-3 takes the change and loses the bundle dropped meanwhile.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { gitRepoConfig, tempDir } from "../support/git-fixtures";
import { liveClusterConfig, tearDownLive } from "../support/live-stack";
import { liveClusters } from "../support/live-clusters";

const NS = "pause-test";
const configMap = (name: string, value: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${NS}
data:
  value: "${value}"
`;
const PAUSE = { reason: "incident 4711: disk pressure", by: "alice", since: "2026-11-29T04:40:00Z" };

describe("a paused cluster on live clusters", function () {
  this.timeout(15 * 60_000);
  const work = tempDir("pf-pause-");
  const repoDir = path.join(work, "repo");
  let clusters: LocalCluster[] = [];
  let config: StackConfig;
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(repoDir, file)), { recursive: true });
    fs.writeFileSync(path.join(repoDir, file), text);
  };
  const options = (): ops.OperationOptions => ({
    stack: "pause",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "pause" },
  });
  const get = async (c: LocalCluster, name: string) =>
    (await kubeGet(c, `/api/v1/namespaces/${NS}/configmaps/${name}`)) as
      { data: { value: string }; metadata: { uid: string; resourceVersion: string } } | undefined;
  const seen = async (name: string) => Promise.all(clusters.map(async (c) => (await get(c, name))?.data.value ?? "-"));
  const withPause = (paused: boolean) => ({
    ...config,
    clusters: config.clusters.map((c) => (c.name === "live-3" ? { ...c, ...(paused ? { paused: PAUSE } : { paused: undefined }) } : c)),
  });

  before(async function () {
    this.timeout(10 * 60_000);
    toolchain();
    clusters = liveClusters().clusters;
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    write("app/configmap.yaml", configMap("settings", "v1"));
    write("keep/configmap.yaml", configMap("kept", "v1"));
    config = {
      file: "stacks/Pulumi.pause.yaml",
      fleetVersion: "0.13.1",
      agent: { enabled: false },
      clusterGroups: [],
      clusters: clusters.map((c) => liveClusterConfig(c)),
      gitRepos: [gitRepoConfig({ name: "pz", repo: repoDir, paths: ["app", "keep"], targets: [{ clusterSelector: {} }] })],
    };
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await tearDownLive(options(), clusters, NS, work);
  });

  it("while live-3 is paused nothing on it changes, whatever git and the targets do; the others deploy; up lists its pairs as held with the reason", async () => {
    await ops.up(options());
    expect(await seen("settings")).to.deep.equal(["v1", "v1", "v1"]);
    const before = await get(clusters[2], "settings");
    const keptBefore = await get(clusters[2], "kept");

    config = withPause(true);
    write("app/configmap.yaml", configMap("settings", "v2"));
    write("new/configmap.yaml", configMap("fresh", "v1"));
    // The bundle `keep` leaves the GitRepo (its path dropped): pruned everywhere but on the paused cluster.
    config = { ...config, gitRepos: [{ ...config.gitRepos[0], paths: ["app", "new"] }] };
    const up = await ops.up(options());
    expect(await seen("settings")).to.deep.equal(["v2", "v2", "v1"]);
    expect(await seen("fresh")).to.deep.equal(["v1", "v1", "-"]);
    expect(await seen("kept")).to.deep.equal(["-", "-", "v1"]);
    const after = await get(clusters[2], "settings");
    expect(after!.metadata).to.deep.include({ uid: before!.metadata.uid, resourceVersion: before!.metadata.resourceVersion });
    expect((await get(clusters[2], "kept"))!.metadata.resourceVersion, "kept, not pruned, while paused").to.equal(keptBefore!.metadata.resourceVersion);
    expect(up.events.map((e) => e.cluster)).to.not.include("live-3");
    const held = up.held.filter((f) => f.cluster === "live-3");
    expect(held.length).to.be.greaterThan(0);
    expect(
      held.every((f) => f.held === "paused" && f.reason.startsWith("held: cluster live-3 is paused by alice since 2026-11-29T04:40:00Z: incident 4711")),
    ).to.equal(true);

    const status = await ops.status(options());
    expect(status.deployments.filter((d) => d.cluster === "live-3" && d.bundle === "pz-app").map((d) => d.state)).to.deep.equal(["OutOfSync"]);
  });

  it("once the pause is removed the next up converges: live-3 takes the change and the new bundle, and loses the bundle dropped meanwhile", async () => {
    config = withPause(false);
    await ops.up(options());
    expect(await seen("settings")).to.deep.equal(["v2", "v2", "v2"]);
    expect(await seen("fresh")).to.deep.equal(["v1", "v1", "v1"]);
    expect(await seen("kept")).to.deep.equal(["-", "-", "-"]);
  });
});
