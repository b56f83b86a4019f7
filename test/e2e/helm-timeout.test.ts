/**
 * helm.timeoutSeconds on a live cluster: a Deployment that can never become ready (its pods fit no
 * node) fails the update after that many seconds, naming it, not after the provider's default await
 * of 10 minutes.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/kube-client";
import { LocalCluster } from "../../automation/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/toolchain";
import { StackConfig } from "../../core/config/stack";
import { gitRepoConfig, tempDir } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";

const NS = "helm-timeout-test";
const STUCK = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: stuck
spec:
  replicas: 1
  selector: {matchLabels: {app: stuck}}
  template:
    metadata: {labels: {app: stuck}}
    spec:
      nodeSelector: {pulumi-fleet.test/no-such-node: "true"}
      containers: [{name: app, image: registry.invalid/app:1}]
`;

describe("helm.timeoutSeconds on a live cluster", function () {
  this.timeout(10 * 60_000);
  let cluster: LocalCluster;
  const work = tempDir("pf-timeout-");
  const repoDir = path.join(work, "repo");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  let config: StackConfig;
  const options = (): ops.OperationOptions => ({
    stack: "timeout", stateDir: path.join(work, "state"), stackConfigDir: path.join(work, "stacks"), config,
    deploy: { cacheRoot: path.join(work, "git-cache") }, env: { PULUMI_CONFIG_PASSPHRASE: "timeout" },
  });

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
    cluster = liveClusters().clusters[0];
    fs.mkdirSync(path.join(repoDir, "app"), { recursive: true });
    fs.writeFileSync(path.join(repoDir, "app/fleet.yaml"), `defaultNamespace: ${NS}\nhelm: {timeoutSeconds: 15}\n`);
    fs.writeFileSync(path.join(repoDir, "app/deployment.yaml"), STUCK);
    config = {
      file: "stacks/Pulumi.timeout.yaml", fleetVersion: "0.13.1", clusterGroups: [],
      clusters: [{ name: cluster.name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: fs.readFileSync(cluster.kubeconfig, "utf8") }],
      gitRepos: [gitRepoConfig({ name: "timeout", repo: repoDir, paths: ["app"], targets: [{ clusterSelector: {} }] })],
    };
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await ops.destroy(options());
    if (await kubeGet(cluster, `/api/v1/namespaces/${NS}`)) await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/${NS}`);
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("a Deployment that never becomes ready fails the update after timeoutSeconds, naming it", async () => {
    const started = Date.now();
    let message = "";
    try {
      await ops.up(options());
    } catch (err) {
      message = String((err as Error).message);
    }
    const seconds = (Date.now() - started) / 1000;
    expect(message, "up failed").to.contain("stuck");
    expect(message).to.match(/timeout|timed out/i);
    // 15 s of await plus the engine's own start-up and the program; the provider's default is 600 s.
    expect(seconds, `failed after ${seconds.toFixed(0)} s`).to.be.lessThan(120);
  });
});
