/**
 * Maintenance windows and `up --partition` on the three live clusters (issue 44). A schedule whose
 * window is closed (until 2099) holds live-3: a content change updates live-1 and live-2, while
 * live-3's ConfigMap keeps its data and UID; `up` succeeds and lists the pair it held, and `status`
 * says until when. Then `up --partition canary` updates the canary only; an unknown partition is an
 * error naming the known ones. Last, correctDrift leaves a hand edit on live-3 while its window is closed.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { gitRepoConfig, tempDir } from "../support/git-fixtures";
import { liveClusterConfig, tearDownLive } from "../support/live-stack";
import { liveClusters } from "../support/live-clusters";

const NS = "schedules-test";
const configMap = (value: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  value: "${value}"
`;
const FLEET_YAML = `defaultNamespace: ${NS}
rolloutStrategy:
  partitions:
    - name: canary
      clusterName: live-1
    - name: rest
      clusterSelector:
        matchLabels: {tier: main}
`;
const CLOSED = { name: "frozen", schedule: "0 0 0 1 1 ? 2099", duration: "1h", location: "UTC", targets: [{ clusterName: "live-3" }], field: "schedules[0]" };

describe("schedules and up --partition on live clusters", function () {
  this.timeout(15 * 60_000);
  const work = tempDir("pf-schedules-");
  const repoDir = path.join(work, "repo");
  let clusters: LocalCluster[] = [];
  let config: StackConfig;
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(repoDir, file)), { recursive: true });
    fs.writeFileSync(path.join(repoDir, file), text);
  };
  const options = (deploy: Record<string, unknown> = {}): ops.OperationOptions => ({
    stack: "schedules",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache"), ...deploy },
    env: { PULUMI_CONFIG_PASSPHRASE: "schedules" },
  });
  const settings = async (c: LocalCluster) =>
    (await kubeGet(c, `/api/v1/namespaces/${NS}/configmaps/settings`)) as { data: { value: string }; metadata: { uid: string } };
  const values = async () => Promise.all(clusters.map(async (c) => (await settings(c)).data.value));

  before(async function () {
    this.timeout(10 * 60_000);
    toolchain();
    clusters = liveClusters().clusters;
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    write("app/configmap.yaml", configMap("v1"));
    write("app/fleet.yaml", FLEET_YAML);
    config = {
      file: "stacks/Pulumi.schedules.yaml",
      fleetVersion: "0.13.1",
      agent: { enabled: false },
      clusterGroups: [],
      clusters: clusters.map((c) => liveClusterConfig(c, { tier: c.name === "live-1" ? "canary" : "main" })),
      gitRepos: [gitRepoConfig({ name: "sched", repo: repoDir, paths: ["app"], targets: [{ clusterSelector: {} }] })],
    };
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await tearDownLive(options(), clusters, NS, work);
  });

  it("a cluster outside its window keeps its objects while the others update; up lists the pair it held, status says until when", async () => {
    await ops.up(options());
    expect(await values()).to.deep.equal(["v1", "v1", "v1"]);
    const uid = (await settings(clusters[2])).metadata.uid;

    config = { ...config, schedules: [CLOSED] };
    write("app/configmap.yaml", configMap("v2"));
    const up = await ops.up(options());
    expect(await values()).to.deep.equal(["v2", "v2", "v1"]);
    expect((await settings(clusters[2])).metadata.uid).to.equal(uid);
    expect(up.events.map((e) => e.cluster).sort()).to.deep.equal(["live-1", "live-2"]);
    expect(up.held.map((f) => [f.cluster, f.held, f.reason])).to.deep.equal([
      ["live-3", "schedule", "held: cluster live-3 is outside its schedule frozen until 2099-01-01T00:00:00Z (schedules; it keeps what it has)"],
    ]);

    const status = await ops.status(options());
    const live3 = status.deployments.find((d) => d.cluster === "live-3")!;
    expect(live3.state).to.equal("OutOfSync");
    expect(live3.message).to.contain("outside its schedule frozen until 2099-01-01T00:00:00Z");
    expect(status.deployments.filter((d) => d.cluster !== "live-3").map((d) => d.state)).to.deep.equal(["Ready", "Ready"]);
  });

  it("up --partition canary deploys the canary only and holds the rest; the preview names the partitions with their commands", async () => {
    write("app/configmap.yaml", configMap("v3"));
    const preview = await ops.preview(options());
    expect(preview.failures).to.deep.equal([]);
    expect(preview.summaryMarkdown)
      .to.contain("**Partitions** this change touches, in rollout order: `canary` → `rest`")
      .and.contain("`npm run up -- --stack schedules --partition canary`, then `npm run up -- --stack schedules --partition rest`")
      .and.contain("### Held bundle deployments");

    const up = await ops.up(options({ partition: "canary" }));
    expect(await values()).to.deep.equal(["v3", "v2", "v1"]);
    expect(up.held.map((f) => `${f.cluster} ${f.held}`)).to.deep.equal(["live-2 partition", "live-3 schedule"]);
    expect(up.held[0].reason).to.equal("held by --partition canary: cluster live-2 is in partition rest, after canary in the rollout of bundle sched-app");

    let message = "";
    await ops.up(options({ partition: "canray" })).catch((err: Error) => {
      message = err.message;
    });
    expect(message).to.contain('--partition "canray" is no partition of this update\'s rollouts; they are: canary, rest');
    expect(await values()).to.deep.equal(["v3", "v2", "v1"]);
  });

  it("correctDrift puts a hand edit back inside the window and leaves it outside (Fleet's agent clears drift correction off schedule)", async () => {
    write("drift/fleet.yaml", `defaultNamespace: ${NS}\ncorrectDrift:\n  enabled: true\n`);
    write("drift/configmap.yaml", configMap("from-git").replace("name: settings", "name: watched"));
    config = { ...config, schedules: undefined, gitRepos: [{ ...config.gitRepos[0], paths: ["app", "drift"] }] };
    await ops.up(options());
    const watched = () =>
      Promise.all(clusters.map(async (c) => ((await kubeGet(c, `/api/v1/namespaces/${NS}/configmaps/watched`)) as { data: { value: string } }).data.value));
    expect(await watched()).to.deep.equal(["from-git", "from-git", "from-git"]);

    config = { ...config, schedules: [CLOSED] };
    for (const c of clusters.slice(1)) await kubeRequest(c, "PATCH", `/api/v1/namespaces/${NS}/configmaps/watched`, { body: { data: { value: "by-hand" } } });
    await ops.up(options());
    expect(await watched()).to.deep.equal(["from-git", "from-git", "by-hand"]);

    config = { ...config, schedules: undefined };
    await ops.up(options());
    expect(await watched()).to.deep.equal(["from-git", "from-git", "from-git"]);
  });
});
