/**
 * helm.takeOwnership on a live cluster. A ConfigMap someone created by hand has the same name as one of
 * a bundle's objects: Fleet's Helm refuses to install over it, and so must `preview` and `up` here
 * (before, the provider's server-side apply adopted it silently and a later prune deleted it). With
 * `helm.takeOwnership: true` the bundle adopts it, as in Fleet.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/kube-client";
import { LocalCluster } from "../../automation/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/toolchain";
import { StackConfig } from "../../core/config/stack";
import { CONFIGMAP, gitRepoConfig, tempDir } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";

const NS = "take-ownership-test";
const cmPath = (name: string) => `/api/v1/namespaces/${NS}/configmaps/${name}`;

describe("helm.takeOwnership on a live cluster (an object the bundle does not own)", function () {
  this.timeout(10 * 60_000);
  let cluster: LocalCluster;
  const work = tempDir("pf-own-");
  const repoDir = path.join(work, "repo");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  let config: StackConfig;
  const options: () => ops.OperationOptions = () => ({
    stack: "own", stateDir: path.join(work, "state"), stackConfigDir: path.join(work, "stacks"), config,
    deploy: { cacheRoot: path.join(work, "git-cache") }, env: { PULUMI_CONFIG_PASSPHRASE: "own" },
  });
  const fleetYaml = (takeOwnership: boolean) => fs.writeFileSync(path.join(repoDir, "app/fleet.yaml"),
    `defaultNamespace: ${NS}\n${takeOwnership ? "helm: {takeOwnership: true}\n" : ""}`);

  before(async function () {
    this.timeout(60 * 60_000);
    toolchain();
    cluster = liveClusters().clusters[0];
    fs.mkdirSync(path.join(repoDir, "app"), { recursive: true });
    fs.writeFileSync(path.join(repoDir, "app/handmade.yaml"), CONFIGMAP("handmade", { from: "git" }));
    fs.writeFileSync(path.join(repoDir, "app/fresh.yaml"), CONFIGMAP("fresh"));
    fleetYaml(false);
    config = {
      file: "stacks/Pulumi.own.yaml", fleetVersion: "0.13.1", clusterGroups: [],
      clusters: [{ name: cluster.name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: fs.readFileSync(cluster.kubeconfig, "utf8") }],
      gitRepos: [gitRepoConfig({ name: "own", repo: repoDir, paths: ["app"], targets: [{ clusterSelector: {} }] })],
    };
    // Someone's own ConfigMap, created by hand (no ownership labels).
    if (!(await kubeGet(cluster, `/api/v1/namespaces/${NS}`))) {
      await kubeRequest(cluster, "POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } });
    }
    await kubeRequest(cluster, "POST", `/api/v1/namespaces/${NS}/configmaps`, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "handmade" }, data: { from: "hand" } },
    });
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await ops.destroy(options());
    if (await kubeGet(cluster, `/api/v1/namespaces/${NS}`)) await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/${NS}`);
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("preview and up refuse to take it over, naming object, owner, bundle, cluster and field; nothing is applied", async () => {
    for (const run of [ops.preview, ops.up]) {
      let message = "";
      try {
        await run(options());
      } catch (err) {
        message = String((err as Error).message);
      }
      expect(message, run.name).to.contain("ConfigMap take-ownership-test/handmade (it was written by")
        .and.contain("bundle own-app").and.contain(`cluster ${cluster.name}`).and.contain("helm.takeOwnership");
    }
    const handmade = await kubeGet(cluster, cmPath("handmade"));
    expect(handmade.data).to.deep.equal({ from: "hand" });
    expect(handmade.metadata.labels ?? {}).to.not.have.property("fleet.cattle.io/bundle-name");
    expect(await kubeGet(cluster, cmPath("fresh")), "nothing of the bundle is half-applied").to.equal(undefined);
  });

  it("with helm.takeOwnership: true the bundle adopts it, and it is the bundle's own from then on", async () => {
    fleetYaml(true);
    const adopted = await ops.up(options());
    expect(adopted.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed own-app"]);
    const handmade = await kubeGet(cluster, cmPath("handmade"));
    expect(handmade.data).to.deep.equal({ from: "git" });
    expect(handmade.metadata.labels["fleet.cattle.io/bundle-name"]).to.equal("own-app");
    expect(await kubeGet(cluster, cmPath("fresh"))).to.not.equal(undefined);

    // Back to the default: the deployment changed (its options did), its objects are read again and are its own now.
    fleetYaml(false);
    await ops.up(options());
    expect((await kubeGet(cluster, cmPath("handmade"))).data).to.deep.equal({ from: "git" });
  });
});
