/**
 * rolloutStrategy on four live clusters (issue 30): partitions `canary` (live-1, maxUnavailable 0) and
 * `rest`. An update whose Deployment never becomes ready stops the `up` in the canary: the rest's
 * objects keep their UIDs, resourceVersions and image, and the error names the bundle, the partition
 * and the cluster. Fixed in git, the next `up` goes through both partitions in order (the canary's
 * Deployment is ready before the first of the rest is touched). The preview's PR summary lists them.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { EngineEvent } from "@pulumi/pulumi/automation";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster, startLocalClusters, stopLocalClusters } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { gitRepoConfig, tempDir } from "../support/git-fixtures";
import { liveClusterConfig } from "../support/live-stack";
import { liveClusters } from "../support/live-clusters";

const NS = "rollout-test";
const deployment = (image: string, readyDelay?: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
${readyDelay ? `      annotations: {pulumi-fleet.test/ready-delay: "${readyDelay}"}\n` : ""}    spec:
      containers: [{name: web, image: ${image}}]
`;
const FLEET_YAML = `defaultNamespace: ${NS}
helm:
  timeoutSeconds: 25
rolloutStrategy:
  partitions:
    - name: canary
      clusterName: live-1
      maxUnavailable: 0
    - name: rest
      clusterSelector:
        matchLabels: {tier: main}
`;

describe("rolloutStrategy on four live clusters: the canary first, the rest only once it is ready", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-rollout-");
  const repoDir = path.join(work, "repo");
  const extraDir = path.join(work, "extra-cluster");
  let clusters: LocalCluster[] = [];
  let config: StackConfig;
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(repoDir, file)), { recursive: true });
    fs.writeFileSync(path.join(repoDir, file), text);
  };
  const options = (over: Partial<ops.OperationOptions> = {}): ops.OperationOptions => ({
    stack: "rollout",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "rollout" },
    ...over,
  });
  const web = (c: LocalCluster) => kubeGet(c, `/apis/apps/v1/namespaces/${NS}/deployments/web`);
  const imageOf = (d: { spec: { template: { spec: { containers: { image: string }[] } } } }) => d.spec.template.spec.containers[0].image;

  before(async function () {
    this.timeout(10 * 60_000);
    toolchain();
    // The fixture's three clusters and a fourth of this test's own.
    const extra = await startLocalClusters({ names: ["live-4"], baseDir: extraDir });
    clusters = [...liveClusters().clusters, ...extra.clusters];
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    write("app/deployment.yaml", deployment("example.com/web:1"));
    write("app/fleet.yaml", FLEET_YAML);
    config = {
      file: "stacks/Pulumi.rollout.yaml",
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com" },
      clusterGroups: [],
      clusters: clusters.map((c) => liveClusterConfig(c, { tier: c.name === "live-1" ? "canary" : "main" })),
      gitRepos: [gitRepoConfig({ name: "rollout", repo: repoDir, paths: ["app"], targets: [{ clusterSelector: {} }] })],
    };
  });

  after(async function () {
    this.timeout(5 * 60_000);
    try {
      await ops.destroy(options());
      for (const c of clusters.slice(0, 3)) if (await kubeGet(c, `/api/v1/namespaces/${NS}`)) await kubeRequest(c, "DELETE", `/api/v1/namespaces/${NS}`);
    } finally {
      await stopLocalClusters(extraDir);
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  /** The engine's events in order; index of the first one matching. */
  const first = (events: EngineEvent[], pred: (e: EngineEvent) => boolean) => events.findIndex(pred);
  /** The cluster's BundleDeployment of the bundle (its Deployment is applied and awaited inside it). */
  const deploymentUrn = (cluster: string) => (e: EngineEvent) => {
    const urn = e.resourcePreEvent?.metadata.urn ?? e.resOutputsEvent?.metadata.urn ?? "";
    return urn.endsWith(`pulumi-fleet:index:BundleDeployment::${cluster}/rollout/rollout-app`);
  };

  it("a first deploy and a healthy update go through the partitions in order; the preview lists them", async () => {
    const events: EngineEvent[] = [];
    const firstUp = await ops.up(options({ onEvent: (e) => events.push(e) }));
    expect(firstUp.events.map((e) => e.cluster).sort()).to.deep.equal(["live-1", "live-2", "live-3", "live-4"]);
    const canaryDone = first(events, (e) => !!e.resOutputsEvent && deploymentUrn("live-1")(e));
    for (const c of ["live-2", "live-3", "live-4"]) {
      expect(
        first(events, (e) => !!e.resourcePreEvent && deploymentUrn(c)(e)),
        `${c} starts after the canary is ready`,
      ).to.be.greaterThan(canaryDone);
    }

    write("app/deployment.yaml", deployment("example.com/web:2"));
    const preview = await ops.preview(options());
    expect(preview.summaryMarkdown)
      .to.contain("### Rollout")
      .and.contain("- bundle `rollout-app` (GitRepo `rollout`) rolls out: canary (live-1) → once ready, rest (live-2, live-3, live-4)")
      .and.contain("> **Warning:** GitRepo `rollout` bundle `rollout-app`: rolloutStrategy: partition canary has maxUnavailable 0");
    const updateEvents: EngineEvent[] = [];
    const update = await ops.up(options({ onEvent: (e) => updateEvents.push(e) }));
    expect(update.events.map((e) => e.cluster).sort()).to.deep.equal(["live-1", "live-2", "live-3", "live-4"]);
    const updated = first(updateEvents, (e) => !!e.resOutputsEvent && deploymentUrn("live-1")(e));
    for (const c of ["live-2", "live-3", "live-4"]) expect(first(updateEvents, (e) => !!e.resourcePreEvent && deploymentUrn(c)(e))).to.be.greaterThan(updated);
    for (const c of clusters) expect(imageOf(await web(c)), c.name).to.equal("example.com/web:2");
  });

  it("an update that never becomes ready in the canary stops the up there: the rest keep UIDs, resourceVersions and image; fixed in git, the next up completes", async () => {
    const rest = clusters.slice(1);
    const before = await Promise.all(
      rest.map(async (c) => {
        const d = await web(c);
        return [d.metadata.uid, d.metadata.resourceVersion, imageOf(d)];
      }),
    );
    write("app/deployment.yaml", deployment("example.com/web:3", "1h"));
    const failed = await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(failed, "the up fails").to.be.instanceOf(ops.OperationError);
    expect(failed!.message).to.contain(
      "rollout paused at partition canary of bundle rollout-app: not ready on live-1; live-2, live-3, live-4 keep what they had",
    );
    expect(imageOf(await web(clusters[0]))).to.equal("example.com/web:3");
    expect(
      await Promise.all(
        rest.map(async (c) => {
          const d = await web(c);
          return [d.metadata.uid, d.metadata.resourceVersion, imageOf(d)];
        }),
      ),
    ).to.deep.equal(before);

    const status = await ops.status(options());
    const waiting = status.deployments.filter((d) => d.cluster !== "live-1");
    expect(waiting.map((d) => d.message.split(";")[0])).to.deep.equal(
      Array(3).fill("rollout paused at partition canary of bundle rollout-app: not ready on live-1"),
    );

    write("app/deployment.yaml", deployment("example.com/web:4"));
    const fixed = await ops.up(options());
    expect(fixed.events.map((e) => e.cluster).sort()).to.deep.equal(["live-1", "live-2", "live-3", "live-4"]);
    for (const c of clusters) expect(imageOf(await web(c)), c.name).to.equal("example.com/web:4");
    expect((await ops.status(options())).deployments.map((d) => d.state)).to.deep.equal(["Ready", "Ready", "Ready", "Ready"]);
  });
});
