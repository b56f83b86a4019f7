/**
 * A prune keeps what Helm's uninstall keeps, on a live cluster: a bundle's CRD stays when the bundle
 * is pruned, and with it the custom resources people created of its kind; with `deleteCRDResources`
 * the CRD goes, and the API server removes its custom resources with it (Fleet's meaning). Without
 * this, a prune deleted every custom resource of the bundle's kinds: fleet#5406's data loss.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { KubeApiError, kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { eventually } from "../support/eventually";
import { CONFIGMAP, gitRepoConfig, tempDir } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";
import { liveClusterConfig } from "../support/live-stack";

const crd = (group: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;
const KEEP = "keep.pulumi-fleet.test";
const DROP = "drop.pulumi-fleet.test";

const crdPath = (group: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`;
const widgetPath = (group: string, name = "") => `/apis/${group}/v1/namespaces/default/widgets${name ? `/${name}` : ""}`;

describe("prune and CRDs on a live cluster (deleteCRDResources)", function () {
  this.timeout(10 * 60_000);
  let cluster: LocalCluster;
  const work = tempDir("pf-crd-");
  const repoDir = path.join(work, "repo");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  let config: (paths: string[]) => StackConfig;
  const options = (c: StackConfig): ops.OperationOptions => ({
    stack: "crd",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config: c,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "crd" },
  });

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
    cluster = liveClusters().clusters[0];
    for (const [name, content] of Object.entries({
      "keep/crd.yaml": crd(KEEP),
      "drop/crd.yaml": crd(DROP),
      "drop/fleet.yaml": "deleteCRDResources: true\n",
      "other/cm.yaml": CONFIGMAP("crd-test-other"),
    })) {
      fs.mkdirSync(path.dirname(path.join(repoDir, name)), { recursive: true });
      fs.writeFileSync(path.join(repoDir, name), content);
    }
    config = (paths) => ({
      file: "stacks/Pulumi.crd.yaml",
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com" },
      clusterGroups: [],
      clusters: [liveClusterConfig(cluster)],
      gitRepos: [gitRepoConfig({ name: "crds", repo: repoDir, paths, targets: [{ clusterSelector: {} }] })],
    });
  });

  after(async function () {
    this.timeout(5 * 60_000);
    // Leave the cluster as the other live tests expect it: nothing of this stack, no test CRDs.
    await ops.destroy(options(config(["other"])));
    for (const group of [KEEP, DROP]) if (await kubeGet(cluster, crdPath(group))) await kubeRequest(cluster, "DELETE", crdPath(group));
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("without the flag the CRD and its custom resources stay after the prune; with it both are gone", async () => {
    await ops.up(options(config(["keep", "drop", "other"])));
    for (const group of [KEEP, DROP]) {
      await eventually(
        `CRD ${group} established`,
        () => kubeGet(cluster, crdPath(group)),
        (o) => !!o?.status?.conditions?.some((c: any) => c.type === "Established" && c.status === "True"),
      );
      // A custom resource someone created on the cluster: not part of any bundle.
      await eventually(
        `create a Widget of ${group}`,
        async () => {
          try {
            await kubeRequest(cluster, "POST", widgetPath(group), {
              body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "precious" }, spec: { size: 3 } },
            });
            return true;
          } catch (err) {
            if (err instanceof KubeApiError && err.status === 409) return true;
            if (err instanceof KubeApiError && err.status === 404) return false; // discovery not caught up yet
            throw err;
          }
        },
        (ok) => ok,
      );
    }

    const pruned = await ops.up(options(config(["other"])));
    expect(pruned.events.map((e) => `${e.event} ${e.bundle}`).sort()).to.deep.equal(["pruned crds-drop", "pruned crds-keep"]);

    expect(await kubeGet(cluster, crdPath(KEEP)), "the kept CRD").to.not.equal(undefined);
    expect((await kubeGet(cluster, widgetPath(KEEP, "precious")))?.spec, "its custom resource").to.deep.equal({ size: 3 });
    await eventually(
      `CRD ${DROP} gone`,
      () => kubeGet(cluster, crdPath(DROP)),
      (o) => o === undefined,
    );
    // Once its CRD is gone, the kind is not served: nothing of it is left.
    expect(await kubeGet(cluster, widgetPath(DROP, "precious"))).to.equal(undefined);
  });
});
