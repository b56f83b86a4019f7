/**
 * A cluster given by `context:` of the ambient kubeconfig, with a KUBECONFIG of two files (kubectl's
 * convention): the context is in the second file, and the deploy works end to end (the provider once
 * failed every object, handed the path list as one kubeconfig).
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { kubeGet } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { CONFIGMAP, gitRepoConfig, tempDir } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";

describe("a KUBECONFIG of several files, the cluster's context in the second (live cluster)", function () {
  this.timeout(10 * 60_000);
  let cluster: LocalCluster;
  const work = tempDir("pf-kubeconfig-");
  const saved = process.env.KUBECONFIG;
  let config: StackConfig;
  const options = (): ops.OperationOptions => ({
    stack: "kc",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "kc", KUBECONFIG: process.env.KUBECONFIG! },
  });

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
    cluster = liveClusters().clusters[0];
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    fs.mkdirSync(path.join(work, "repo", "app"), { recursive: true });
    fs.writeFileSync(path.join(work, "repo", "app", "cm.yaml"), CONFIGMAP("two-files"));
    fs.writeFileSync(path.join(work, "repo", "app", "fleet.yaml"), "defaultNamespace: kubeconfig-test\n");
    // The first file: another cluster and the current context; the second: the live cluster, its context renamed.
    fs.writeFileSync(
      path.join(work, "first"),
      "apiVersion: v1\nkind: Config\ncurrent-context: elsewhere\nclusters:\n- name: elsewhere\n  cluster: {server: https://127.0.0.1:1}\n" +
        "users:\n- name: elsewhere\n  user: {token: x}\ncontexts:\n- name: elsewhere\n  context: {cluster: elsewhere, user: elsewhere}\n",
    );
    const doc = YAML.parse(fs.readFileSync(cluster.kubeconfig, "utf8"));
    for (const c of doc.contexts) c.name = "pf-second-file";
    delete doc["current-context"];
    fs.writeFileSync(path.join(work, "second"), YAML.stringify(doc));
    process.env.KUBECONFIG = [path.join(work, "first"), path.join(work, "second")].join(path.delimiter);
    config = {
      file: "stacks/Pulumi.kc.yaml",
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com" },
      clusterGroups: [],
      clusters: [{ name: cluster.name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, context: "pf-second-file" }],
      gitRepos: [gitRepoConfig({ name: "kc", repo: path.join(work, "repo"), paths: ["app"], targets: [{ clusterSelector: {} }] })],
    };
  });

  after(async function () {
    this.timeout(5 * 60_000);
    try {
      await ops.destroy(options());
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it("up deploys through the context found in the second file; a second up changes nothing", async () => {
    await ops.up(options());
    expect((await kubeGet(cluster, "/api/v1/namespaces/kubeconfig-test/configmaps/two-files"))?.data).to.deep.equal({ k: "v" });
    const again = await ops.up(options());
    expect(again.events).to.deep.equal([]);
  });
});
