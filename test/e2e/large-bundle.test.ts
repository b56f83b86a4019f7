/**
 * A kube-prometheus-stack-sized bundle (test/fixtures/large-chart: prometheus-operator's ten CRDs,
 * 4 MB of them, plus templated workloads, dashboards and rules, about 5 MB rendered) from a real git
 * repository deploys to every live cluster in one `up`: no size cap stops it (the checkout, the
 * render, the engine's messages, the provider's apply, the API server and etcd at their defaults).
 * Its CRDs are established and its objects, custom resources of those CRDs included, are on every
 * cluster; a no-op `up` after it writes nothing.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { tempDir } from "../support/git-fixtures";
import { LARGE_CHART_CRDS, largeChartRepo } from "../support/large-chart";
import { liveStackConfig, tearDownLive } from "../support/live-stack";
import { liveClusters } from "../support/live-clusters";

const NS = "large-bundle-test";
const crdPath = (name: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
/** A few objects of each kind the chart templates: a workload, its RBAC, a dashboard, and custom resources of its CRDs. */
const SAMPLES = [
  `/apis/apps/v1/namespaces/${NS}/deployments/operator`,
  `/api/v1/namespaces/${NS}/serviceaccounts/prometheus`,
  `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/large-bundle-large-grafana`,
  `/api/v1/namespaces/${NS}/configmaps/large-bundle-large-dashboard-29`,
  `/apis/monitoring.coreos.com/v1/namespaces/${NS}/prometheusrules/rules-29`,
  `/apis/monitoring.coreos.com/v1/namespaces/${NS}/servicemonitors/kube-state-metrics`,
];
const established = (crd: { status?: { conditions?: { type: string; status: string }[] } } | undefined) =>
  !!crd?.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");

describe("a 5 MB bundle (a kube-prometheus-stack-sized chart with its CRDs) deploys to every live cluster in one up", function () {
  this.timeout(20 * 60_000);
  let clusters: LocalCluster[];
  const work = tempDir("pf-large-");
  let config: StackConfig;
  const options = (over: Partial<ops.OperationOptions> = {}): ops.OperationOptions => ({
    stack: "large-bundle",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "large-bundle" },
    ...over,
  });
  const versions = async () =>
    Object.fromEntries(
      await Promise.all(
        clusters.flatMap((c) =>
          [...SAMPLES, ...LARGE_CHART_CRDS.map(crdPath)].map(async (p) => [`${c.name} ${p}`, (await kubeGet(c, p))?.metadata?.resourceVersion]),
        ),
      ),
    );

  before(async function () {
    this.timeout(60 * 60_000);
    toolchain();
    clusters = liveClusters().clusters;
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    const repo = largeChartRepo(path.join(work, "repo"), NS);
    config = liveStackConfig("large-bundle", clusters, { dir: repo, paths: ["large"] }, { gitRepo: { branch: "main" } });
  });

  after(async function () {
    this.timeout(10 * 60_000);
    await tearDownLive(options(), clusters, NS, work);
    for (const c of clusters) for (const crd of LARGE_CHART_CRDS) if (await kubeGet(c, crdPath(crd))) await kubeRequest(c, "DELETE", crdPath(crd));
  });

  it("one up deploys the chart to every cluster: its CRDs are established and its objects present", async () => {
    const result = await ops.up(options());
    expect(result.events.map((e) => `${e.event} ${e.bundle} ${e.cluster}`).sort()).to.deep.equal(
      clusters.map((c) => `deployed large-bundle-large ${c.name}`).sort(),
    );
    for (const c of clusters) {
      for (const crd of LARGE_CHART_CRDS) expect(established(await kubeGet(c, crdPath(crd))), `${c.name}: ${crd} established`).to.equal(true);
      for (const p of SAMPLES) expect(await kubeGet(c, p), `${c.name}: ${p}`).to.not.equal(undefined);
    }
    // The largest CRD arrived whole: its schema is most of its 786 KB of YAML (453 KB as JSON).
    const prometheuses = await kubeGet(clusters[0], crdPath("prometheuses.monitoring.coreos.com"));
    expect(JSON.stringify(prometheuses.spec).length).to.be.greaterThan(400_000);
  });

  it("a no-op up after it writes nothing, and a preview expects no changes", async () => {
    const before = await versions();
    const again = await ops.up(options());
    expect(again.events).to.deep.equal([]);
    // "read" counts the engine's reads of what the program looks up, not writes.
    expect(
      Object.keys(again.changes).filter((k) => again.changes[k] > 0 && k !== "read"),
      JSON.stringify(again.changes),
    ).to.deep.equal(["same"]);
    expect(await versions()).to.deep.equal(before);
    await ops.preview(options({ expectNoChanges: true }));
  });
});
