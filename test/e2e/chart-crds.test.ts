/**
 * A chart's crds/ through their lifecycle on a live cluster, through the operations: by default as Helm
 * and Fleet's agent install them (created at the install, established before the custom resource that
 * uses them, never updated: a CRD gaining a version is said in the preview and not applied, so the
 * resource of the new version fails its pair alone); the GitRepo's chartCrds: CreateReplace applies the
 * new CRD, established, before that resource, in one `up`. Never deleted (Helm never deletes crds/).
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { gitRepoConfig, tempDir, writeFiles } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";
import { liveClusterConfig } from "../support/live-stack";

const NS = "chart-crds-e2e";
const GROUP = "crds-e2e.example.com";
const CRD = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${GROUP}`;

function writeChart(dir: string, versions: string[]): void {
  writeFiles(dir, {
    "Chart.yaml": "apiVersion: v2\nname: gadgets\nversion: 0.1.0\n",
    "fleet.yaml": `defaultNamespace: ${NS}\n`,
    "crds/gadget.yaml":
      `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.${GROUP}\n` +
      `spec:\n  group: ${GROUP}\n  scope: Namespaced\n  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}\n  versions:\n` +
      versions
        .map(
          (v, i) =>
            `  - {name: ${v}, served: true, storage: ${i === versions.length - 1}, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}\n`,
        )
        .join(""),
    "templates/gadget.yaml": `apiVersion: ${GROUP}/${versions[versions.length - 1]}\nkind: Gadget\nmetadata:\n  name: g\n`,
  });
}

describe("a chart's crds/ as Helm installs them, or replaced when the operator says so, on a live cluster", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-chart-crds-");
  const repoDir = path.join(work, "repo");
  let cluster: LocalCluster;
  let config: StackConfig;
  const options = (): ops.OperationOptions => ({
    stack: "chartcrds",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "chartcrds" },
  });
  const served = async () => ((await kubeGet<{ spec: { versions: { name: string }[] } }>(cluster, CRD))?.spec.versions ?? []).map((v) => v.name);
  const repo = (chartCrds?: "CreateReplace") => ({
    ...gitRepoConfig({ name: "crds", repo: repoDir, paths: ["gadgets"], targets: [{ clusterSelector: {} }] }),
    ...(chartCrds ? { chartCrds } : {}),
  });

  before(async function () {
    toolchain();
    cluster = liveClusters().clusters[0];
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    writeChart(path.join(repoDir, "gadgets"), ["v1"]);
    config = {
      file: "stacks/Pulumi.chartcrds.yaml",
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com", enabled: false },
      clusterGroups: [],
      clusters: [liveClusterConfig(cluster)],
      gitRepos: [repo()],
    } as StackConfig;
  });

  after(async function () {
    await ops.destroy(options());
    for (const p of [`/api/v1/namespaces/${NS}`, CRD]) await kubeRequest(cluster, "DELETE", p).catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("created at the install before its resource; a new version said in the preview and not applied; CreateReplace applies it in one up", async () => {
    await ops.up(options());
    expect(await served()).to.deep.equal(["v1"]);
    expect(await kubeGet(cluster, `/apis/${GROUP}/v1/namespaces/${NS}/gadgets/g`)).to.not.equal(undefined);

    writeChart(path.join(repoDir, "gadgets"), ["v1", "v2"]);
    const preview = await ops.preview(options());
    expect(preview.summaryMarkdown).to.include("changed in the chart");
    const failed = await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(failed, "the v2 Gadget, with its CRD not updated").to.be.instanceOf(ops.BundlesFailedError);
    expect(await served(), "Helm never upgrades a chart's crds/").to.deep.equal(["v1"]);

    config = { ...config, gitRepos: [repo("CreateReplace")] };
    await ops.up(options());
    expect(await served()).to.deep.equal(["v1", "v2"]);
    expect(await kubeGet(cluster, `/apis/${GROUP}/v2/namespaces/${NS}/gadgets/g`)).to.not.equal(undefined);

    config = { ...config, gitRepos: [] };
    await ops.up(options());
    expect(await served(), "a chart's crds/ are never deleted").to.deep.equal(["v1", "v2"]);
  });
});
