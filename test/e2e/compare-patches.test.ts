/**
 * diff.comparePatches on a live cluster: a field the bundle lists is changed on the cluster; `status`
 * stays Ready, `up --refresh` and correctDrift leave it, while a hand edit of another field is still
 * drift and put back; a new value for it in git is applied (the deployment changed), as in Fleet.
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

const NS = "compare-patches-test";
const CM = `/api/v1/namespaces/${NS}/configmaps/tuned`;
const FLEET_YAML = `defaultNamespace: ${NS}
correctDrift: {enabled: true}
diff:
  comparePatches:
  - {apiVersion: v1, kind: ConfigMap, name: tuned, jsonPointers: [/data/setting]}
`;

describe("diff.comparePatches on a live cluster", function () {
  this.timeout(10 * 60_000);
  let cluster: LocalCluster;
  const work = tempDir("pf-cmp-");
  const repoDir = path.join(work, "repo");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  let config: StackConfig;
  const options = (over: Partial<ops.OperationOptions> = {}): ops.OperationOptions => ({
    stack: "cmp", stateDir: path.join(work, "state"), stackConfigDir: path.join(work, "stacks"), config,
    deploy: { cacheRoot: path.join(work, "git-cache") }, env: { PULUMI_CONFIG_PASSPHRASE: "cmp" }, ...over,
  });
  const writeCm = (setting: string) => fs.writeFileSync(path.join(repoDir, "app/cm.yaml"), CONFIGMAP("tuned", { setting, other: "from-git" }));
  const data = async () => (await kubeGet(cluster, CM)).data;
  const state = async () => (await ops.status(options())).deployments.find((d) => d.bundle === "cmp-app")!;

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
    cluster = liveClusters().clusters[0];
    fs.mkdirSync(path.join(repoDir, "app"), { recursive: true });
    fs.writeFileSync(path.join(repoDir, "app/fleet.yaml"), FLEET_YAML);
    writeCm("from-git");
    config = {
      file: "stacks/Pulumi.cmp.yaml", fleetVersion: "0.13.1", clusterGroups: [],
      clusters: [{ name: cluster.name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: fs.readFileSync(cluster.kubeconfig, "utf8") }],
      gitRepos: [gitRepoConfig({ name: "cmp", repo: repoDir, paths: ["app"], targets: [{ clusterSelector: {} }] })],
    };
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await ops.destroy(options());
    if (await kubeGet(cluster, `/api/v1/namespaces/${NS}`)) await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/${NS}`);
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("the listed field may change on the cluster; other fields are still drift; a new value in git is applied", async () => {
    await ops.up(options());
    await kubeRequest(cluster, "PATCH", CM, { body: { data: { setting: "by-a-controller" } } });
    expect((await state()).state, "a listed field is not drift").to.equal("Ready");
    await ops.up(options({ refresh: true }));
    expect(await data(), "up --refresh leaves it").to.deep.equal({ setting: "by-a-controller", other: "from-git" });

    await kubeRequest(cluster, "PATCH", CM, { body: { data: { other: "by-hand" } } });
    const drifted = await state();
    expect(drifted.state, drifted.message).to.equal("Modified");
    await ops.up(options());
    expect(await data(), "correctDrift puts back the other field only").to.deep.equal({ setting: "by-a-controller", other: "from-git" });

    writeCm("new-in-git");
    await ops.up(options());
    expect(await data(), "a new version of the bundle is applied whole").to.deep.equal({ setting: "new-in-git", other: "from-git" });
  });
});
