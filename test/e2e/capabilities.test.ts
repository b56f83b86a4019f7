/**
 * Charts see the cluster they deploy to, as on Fleet's agent: the same chart on two live clusters, one
 * with a CRD installed by hand and one without, gives two different manifests (.Capabilities from each
 * cluster's discovery). A chart with a crds/ directory deploys under a forced namespace, and a chart
 * with a file:// dependency that is not vendored deploys with it.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { eventually } from "../support/eventually";
import { tempDir } from "../support/git-fixtures";
import { liveStackConfig } from "../support/live-stack";
import { liveClusters } from "../support/live-clusters";

const GROUP = "caps.pulumi-fleet.test";
const crd = (group: string) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `widgets.${group}` },
  spec: {
    group,
    scope: "Namespaced",
    names: { kind: "Widget", plural: "widgets" },
    versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }],
  },
});
const crdPath = (group: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`;

const FILES: Record<string, string> = {
  "caps/Chart.yaml": "apiVersion: v2\nname: caps\nversion: 0.1.0\n",
  "caps/templates/cm.yaml":
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caps\ndata:\n" +
    "  version: {{ .Capabilities.KubeVersion.Version | quote }}\n" +
    `  widgets: {{ .Capabilities.APIVersions.Has "${GROUP}/v1/Widget" | quote }}\n`,
  "caps/fleet.yaml": "defaultNamespace: caps-test\n",
  "crds/Chart.yaml": "apiVersion: v2\nname: crds\nversion: 0.1.0\n",
  "crds/crds/crd.yaml": JSON.stringify(crd("crds.pulumi-fleet.test")),
  "crds/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: with-crds\ndata: {a: b}\n",
  "crds/fleet.yaml": "namespace: crds-test\n",
  // A local dependency, not vendored: resolved from the GitRepo as Fleet's dependency update does.
  "lib/Chart.yaml": "apiVersion: v2\nname: lib\nversion: 0.1.0\n",
  "lib/templates/cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-lib\ndata: {lib: "yes"}\n',
  "withdep/Chart.yaml": "apiVersion: v2\nname: withdep\nversion: 0.1.0\ndependencies:\n- name: lib\n  version: 0.1.x\n  repository: file://../lib\n",
  "withdep/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: withdep\ndata: {a: b}\n",
  "withdep/fleet.yaml": "defaultNamespace: deps-test\n",
};

describe("charts render against their cluster (.Capabilities from discovery; crds/ under namespace:; a local dependency)", function () {
  this.timeout(10 * 60_000);
  let clusters: LocalCluster[];
  const work = tempDir("pf-caps-");
  const repoDir = path.join(work, "repo");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  let config: StackConfig;
  const options = (): ops.OperationOptions => ({
    stack: "caps",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "caps" },
  });

  before(async function () {
    this.timeout(60 * 60_000);
    toolchain();
    clusters = liveClusters().clusters.slice(0, 2);
    for (const [name, content] of Object.entries(FILES)) {
      fs.mkdirSync(path.dirname(path.join(repoDir, name)), { recursive: true });
      fs.writeFileSync(path.join(repoDir, name), content);
    }
    config = liveStackConfig("caps", clusters, { dir: repoDir, paths: ["caps", "crds", "withdep"] });
    // The CRD on the first cluster only, installed by hand (not by any bundle).
    await kubeRequest(clusters[0], "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: crd(GROUP) });
    await eventually(
      "CRD established",
      () => kubeGet(clusters[0], crdPath(GROUP)),
      (o) => !!o?.status?.conditions?.some((c: { type: string; status: string }) => c.type === "Established" && c.status === "True"),
    );
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await ops.destroy(options());
    for (const c of clusters) {
      for (const group of [GROUP, "crds.pulumi-fleet.test"]) if (await kubeGet(c, crdPath(group))) await kubeRequest(c, "DELETE", crdPath(group));
    }
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("the same chart gives each cluster its own manifest: its version, and whether it serves the kind", async () => {
    await ops.up(options());
    const version = (await kubeGet(clusters[0], "/version")).gitVersion as string;
    const data = async (c: LocalCluster) => (await kubeGet(c, "/api/v1/namespaces/caps-test/configmaps/caps"))?.data;
    expect(await data(clusters[0])).to.deep.equal({ version, widgets: "true" });
    expect(await data(clusters[1])).to.deep.equal({ version, widgets: "false" });
    expect(version).to.match(/^v1\.\d+\.\d+/);
  });

  it("a chart with a local file:// dependency deploys with the dependency's objects", async () => {
    for (const c of clusters) {
      expect((await kubeGet(c, "/api/v1/namespaces/deps-test/configmaps/from-lib"))?.data, c.name).to.deep.equal({ lib: "yes" });
      expect((await kubeGet(c, "/api/v1/namespaces/deps-test/configmaps/withdep"))?.data, c.name).to.deep.equal({ a: "b" });
    }
  });

  it("a chart's crds/ deploy under namespace: (outside the post-renderer); its templates land in that namespace", async () => {
    for (const c of clusters) {
      expect(await kubeGet(c, crdPath("crds.pulumi-fleet.test")), c.name).to.not.equal(undefined);
      expect((await kubeGet(c, "/api/v1/namespaces/crds-test/configmaps/with-crds"))?.data, c.name).to.deep.equal({ a: "b" });
    }
  });
});
