/**
 * Moving over from Fleet, on a live cluster, as far as it goes without Fleet itself (its controller and
 * agent images cannot be obtained here): the bundle's objects exist as Fleet's Helm left them (Helm's
 * annotations and labels, a Helm release secret), the stack comes from `npm run import` of Fleet's
 * GitRepo and Cluster, and the first `up` adopts the objects (the importer's takeOwnership) without
 * recreating or restarting anything; then the migration's last step removes Fleet's Helm release secret.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as YAML from "yaml";
import { kubeGet, kubeList, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { configFromStackFile, parseStackConfig } from "../../core/config/stack";
import { importFleetExport } from "../../core/import/fleet-export";
import { failureOf, liveStack } from "../support/live-stack";

const NS = "fleet-migration-test";
const RELEASE = "migrate-app";
const CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: blue}
`;
const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`;
/** How Fleet's Helm (release RELEASE) leaves an object: Helm's ownership metadata, no labels of this project. */
const asFleetLeftIt = (manifest: string) => {
  const o = YAML.parse(manifest);
  o.metadata.namespace = NS;
  o.metadata.labels = { "app.kubernetes.io/managed-by": "Helm", "objectset.rio.cattle.io/hash": "0123abcd" };
  o.metadata.annotations = { "meta.helm.sh/release-name": RELEASE, "meta.helm.sh/release-namespace": NS, "objectset.rio.cattle.io/id": `default-${RELEASE}` };
  return o;
};

describe("moving over from Fleet on a live cluster (objects Fleet's Helm deployed, a stack from npm run import)", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("migrate", {
    namespace: NS,
    paths: ["app"],
    files: { "app/fleet.yaml": `defaultNamespace: ${NS}\n`, "app/settings.yaml": CONFIGMAP, "app/web.yaml": DEPLOYMENT },
    setup: async ({ cluster }) => {
      await kubeRequest(cluster, "POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } });
      await kubeRequest(cluster, "POST", `/api/v1/namespaces/${NS}/configmaps`, { body: asFleetLeftIt(CONFIGMAP) });
      await kubeRequest(cluster, "POST", `/apis/apps/v1/namespaces/${NS}/deployments`, { body: asFleetLeftIt(DEPLOYMENT) });
      // Helm's record of the release (what `helm list` and `helm uninstall` act on).
      await kubeRequest(cluster, "POST", `/api/v1/namespaces/${NS}/secrets`, {
        body: {
          apiVersion: "v1",
          kind: "Secret",
          type: "helm.sh/release.v1",
          metadata: { name: `sh.helm.release.v1.${RELEASE}.v1`, labels: { owner: "helm", name: RELEASE, status: "deployed", version: "1" } },
          data: { release: "" },
        },
      });
    },
  });

  /** Fleet's objects for this GitRepo and cluster, as `kubectl get gitrepos,clusters -A -o yaml` prints them. */
  const fleetExport = () =>
    YAML.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        {
          apiVersion: "fleet.cattle.io/v1alpha1",
          kind: "GitRepo",
          metadata: { name: "migrate", namespace: "fleet-default", uid: "u1" },
          spec: { repo: s.repoDir, paths: ["app"], targets: [{ clusterSelector: {} }], pollingInterval: "15s" },
        },
        {
          apiVersion: "fleet.cattle.io/v1alpha1",
          kind: "Cluster",
          metadata: { name: s.cluster.name, namespace: "fleet-default", labels: { env: "test" } },
          spec: { kubeConfigSecret: "c-kubeconfig" },
        },
      ],
    });
  /** The imported stack, with the cluster's kubeconfig where the importer left its context placeholder (the user's step). */
  const imported = () => {
    const result = importFleetExport(fleetExport(), "fleet-export.yaml");
    const config = parseStackConfig(configFromStackFile(YAML.parse(result.text), "stacks/Pulumi.migrate.yaml"), "stacks/Pulumi.migrate.yaml", "/");
    return { ...config, clusters: config.clusters.map((c) => ({ ...c, context: undefined, kubeconfig: fs.readFileSync(s.cluster.kubeconfig, "utf8") })) };
  };

  it("the imported stack adopts what Fleet deployed in one up: same UIDs, pod template and ReplicaSets, then no changes; without takeOwnership it is refused", async () => {
    const config = imported();
    expect(config.gitRepos.map((r) => [r.name, r.takeOwnership])).to.deep.equal([["migrate", true]]);
    expect(config.agent).to.deep.equal({ enabled: false });

    // Without the importer's takeOwnership, Fleet's objects are someone else's: refused, naming the release.
    const refused = await failureOf(() =>
      ops.up(s.options({ config: { ...config, gitRepos: config.gitRepos.map((r) => ({ ...r, takeOwnership: undefined })) } })),
    );
    expect(refused).to.contain(`(it belongs to Helm release ${NS}/${RELEASE})`).and.contain("helm.takeOwnership");

    const before = {
      cm: await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/settings`),
      web: await kubeGet(s.cluster, `/apis/apps/v1/namespaces/${NS}/deployments/web`),
    };
    const replicaSets = async () => (await kubeList(s.cluster, `/apis/apps/v1/namespaces/${NS}/replicasets`)).map((r: any) => r.metadata.uid).sort();
    const rsBefore = await replicaSets();
    const up = await ops.up(s.options({ config }));
    expect(up.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed migrate-app"]);
    const cm = await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/settings`);
    const web = await kubeGet(s.cluster, `/apis/apps/v1/namespaces/${NS}/deployments/web`);
    expect([cm.metadata.uid, web.metadata.uid]).to.deep.equal([before.cm.metadata.uid, before.web.metadata.uid]);
    // Adopting changes metadata only: the same pod template and ReplicaSets, so no pod is restarted.
    expect(web.spec.template).to.deep.equal(before.web.spec.template);
    expect(await replicaSets()).to.deep.equal(rsBefore);
    expect(cm.metadata.labels).to.include({ "fleet.cattle.io/bundle-name": "migrate-app", "app.kubernetes.io/managed-by": "pulumi-fleet" });
    await ops.preview(s.options({ config, expectNoChanges: true }));

    // The last step: Fleet's Helm release record goes (a later `helm uninstall` would delete the workloads).
    const releases = `/api/v1/namespaces/${NS}/secrets`;
    for (const r of await kubeList(s.cluster, releases, `owner=helm,name=${RELEASE}`)) await kubeRequest(s.cluster, "DELETE", `${releases}/${r.metadata.name}`);
    expect(await kubeList(s.cluster, releases, "owner=helm")).to.deep.equal([]);
    await ops.preview(s.options({ config, expectNoChanges: true }));
  });
});
