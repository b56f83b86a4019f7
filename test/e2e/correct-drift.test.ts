/**
 * fleet.yaml correctDrift.enabled on a live cluster: after a hand edit, a plain `up` (no --refresh)
 * puts back the object of the bundle that has it; the object of a bundle without it stays edited and
 * `status` keeps reporting that bundle Modified until `up --refresh`.
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

const NS = "correct-drift-test";
const cmPath = (name: string) => `/api/v1/namespaces/${NS}/configmaps/${name}`;

describe("correctDrift on a live cluster", function () {
  this.timeout(10 * 60_000);
  let cluster: LocalCluster;
  const work = tempDir("pf-drift-");
  const repoDir = path.join(work, "repo");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  let config: StackConfig;
  const options = (over: Partial<ops.OperationOptions> = {}): ops.OperationOptions => ({
    stack: "drift", stateDir: path.join(work, "state"), stackConfigDir: path.join(work, "stacks"), config,
    deploy: { cacheRoot: path.join(work, "git-cache") }, env: { PULUMI_CONFIG_PASSPHRASE: "drift" }, ...over,
  });
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(repoDir, file)), { recursive: true });
    fs.writeFileSync(path.join(repoDir, file), text);
  };
  const edit = (name: string) => kubeRequest(cluster, "PATCH", cmPath(name), { body: { data: { setting: "by-hand" } } });
  const setting = async (name: string) => (await kubeGet(cluster, cmPath(name))).data.setting;
  const stateOf = async (bundle: string) => (await ops.status(options())).deployments.find((d) => d.bundle === bundle)!.state;

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
    cluster = liveClusters().clusters[0];
    write("fixed/fleet.yaml", `defaultNamespace: ${NS}\ncorrectDrift: {enabled: true}\n`);
    write("fixed/cm.yaml", CONFIGMAP("fixed", { setting: "from-git" }));
    write("loose/fleet.yaml", `defaultNamespace: ${NS}\n`);
    write("loose/cm.yaml", CONFIGMAP("loose", { setting: "from-git" }));
    config = {
      file: "stacks/Pulumi.drift.yaml", fleetVersion: "0.13.1", clusterGroups: [],
      clusters: [{ name: cluster.name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: fs.readFileSync(cluster.kubeconfig, "utf8") }],
      gitRepos: [gitRepoConfig({ name: "drift", repo: repoDir, paths: ["fixed", "loose"], targets: [{ clusterSelector: {} }] })],
    };
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await ops.destroy(options());
    if (await kubeGet(cluster, `/api/v1/namespaces/${NS}`)) await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/${NS}`);
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("a plain up corrects the bundle with correctDrift; the other stays Modified until up --refresh", async () => {
    await ops.up(options());
    await edit("fixed");
    await edit("loose");
    expect(await stateOf("drift-fixed")).to.equal("Modified");

    const corrected = await ops.up(options());
    expect(corrected.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed drift-fixed"]);
    expect(await setting("fixed")).to.equal("from-git");
    expect(await setting("loose")).to.equal("by-hand");
    expect(await stateOf("drift-fixed")).to.equal("Ready");
    expect(await stateOf("drift-loose")).to.equal("Modified");

    await ops.up(options({ refresh: true }));
    expect(await setting("loose")).to.equal("from-git");
    expect(await stateOf("drift-loose")).to.equal("Ready");
  });
});
