/**
 * fleet.yaml forceSyncGeneration on a live cluster: a new number re-applies every object of that bundle
 * (each gets a new resourceVersion, and a hand-edited field the bundle declares is put back) and touches
 * nothing of other bundles; the next up with the same number writes nothing.
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

const NS = "force-sync-test";
const cmPath = (name: string) => `/api/v1/namespaces/${NS}/configmaps/${name}`;
const NAMES = ["a-one", "a-two", "b-one"];

describe("forceSyncGeneration on a live cluster", function () {
  this.timeout(10 * 60_000);
  let cluster: LocalCluster;
  const work = tempDir("pf-fsg-");
  const repoDir = path.join(work, "repo");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  let config: StackConfig;
  const options = (): ops.OperationOptions => ({
    stack: "fsg", stateDir: path.join(work, "state"), stackConfigDir: path.join(work, "stacks"), config,
    deploy: { cacheRoot: path.join(work, "git-cache") }, env: { PULUMI_CONFIG_PASSPHRASE: "fsg" },
  });
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(repoDir, file)), { recursive: true });
    fs.writeFileSync(path.join(repoDir, file), text);
  };
  const versions = async () => Object.fromEntries(await Promise.all(NAMES.map(async (n) => [n, (await kubeGet(cluster, cmPath(n))).metadata.resourceVersion])));

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
    cluster = liveClusters().clusters[0];
    write("a/fleet.yaml", `defaultNamespace: ${NS}\n`);
    write("a/one.yaml", CONFIGMAP("a-one", { setting: "from-git" }));
    write("a/two.yaml", CONFIGMAP("a-two"));
    write("b/fleet.yaml", `defaultNamespace: ${NS}\n`);
    write("b/one.yaml", CONFIGMAP("b-one"));
    config = {
      file: "stacks/Pulumi.fsg.yaml", fleetVersion: "0.13.1", clusterGroups: [],
      clusters: [{ name: cluster.name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: fs.readFileSync(cluster.kubeconfig, "utf8") }],
      gitRepos: [gitRepoConfig({ name: "fsg", repo: repoDir, paths: ["a", "b"], targets: [{ clusterSelector: {} }] })],
    };
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await ops.destroy(options());
    if (await kubeGet(cluster, `/api/v1/namespaces/${NS}`)) await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/${NS}`);
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("a new number re-applies every object of the bundle, puts back a hand edit, and leaves other bundles alone", async () => {
    await ops.up(options());
    await kubeRequest(cluster, "PATCH", cmPath("a-one"), { body: { data: { setting: "by-hand" } } });
    const before = await versions();

    write("a/fleet.yaml", `defaultNamespace: ${NS}\nforceSyncGeneration: 1\n`);
    const synced = await ops.up(options());
    expect(synced.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed fsg-a"]);
    const after = await versions();
    expect(after["a-one"], "a-one re-applied").to.not.equal(before["a-one"]);
    expect(after["a-two"], "a-two re-applied").to.not.equal(before["a-two"]);
    expect(after["b-one"], "b-one untouched").to.equal(before["b-one"]);
    const one = await kubeGet(cluster, cmPath("a-one"));
    expect(one.data).to.deep.equal({ setting: "from-git" });
    expect(one.metadata.annotations["pulumi-fleet/force-sync-generation"]).to.equal("1");

    await ops.up(options());
    expect(await versions(), "the same number again writes nothing").to.deep.equal(after);
  });
});
