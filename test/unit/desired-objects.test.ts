import { expect } from "chai";
import { validateObjectLabels, withOwnership } from "../../core/desired/labels";
import { clusterNamespacesOf, desiredObjects, pairSpecOf, typeTokenOf } from "../../core/desired/objects";
import { namespacesForCluster } from "../../core/desired/namespaces";
import { objectKey, K8sObject } from "../../core/model/k8s-object";
import { RenderedDeployment } from "../../core/render/deployments";
import { PlanEntry } from "../../core/targeting/plan";
import { planEntry } from "../support/plan-entries";

const owner = { gitRepo: "repo", bundle: "repo-app", cluster: "c1" };
const entry = (over: Partial<PlanEntry> = {}): PlanEntry => planEntry("repo-app", "c1", { deploymentId: "s-1:x", ...over });
const rendered = (objects: K8sObject[], over: Partial<RenderedDeployment> = {}): RenderedDeployment => ({
  objects,
  style: "yaml",
  warnings: [],
  chartCrds: new Set(),
  ignoredFields: new Map(),
  ...over,
});
const cm = (name: string, namespace = "apps"): K8sObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace } });
const crd: K8sObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: { group: "example.com", names: { kind: "Widget" } },
};
const widget: K8sObject = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", namespace: "own" } };
const ownNs: K8sObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "own" } };

describe("desired objects (core/desired)", () => {
  it("type tokens and logical keys of Kubernetes objects", () => {
    expect(typeTokenOf({ apiVersion: "v1", kind: "ConfigMap" })).to.equal("kubernetes:core/v1:ConfigMap");
    expect(typeTokenOf({ apiVersion: "apps/v1", kind: "Deployment" })).to.equal("kubernetes:apps/v1:Deployment");
    const ingress = { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name: "web", namespace: "ns" } };
    expect(objectKey(ingress)).to.equal("networking.k8s.io:Ingress:ns:web");
    expect(objectKey({ apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } })).to.equal("core:Namespace:_:ns");
  });

  it("ownership labels every object, and labels are checked before anything is registered", () => {
    const obj = (labels: Record<string, string>) => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "ns", labels } });
    expect(withOwnership(obj({ app: "web" }), owner).metadata.labels).to.deep.equal({
      app: "web",
      "fleet.cattle.io/repo-name": "repo",
      "fleet.cattle.io/bundle-name": "repo-app",
      "fleet.cattle.io/cluster": "c1",
      "app.kubernetes.io/managed-by": "pulumi-fleet",
    });
    expect(() => validateObjectLabels(obj({ owner: "system:kube-controller-manager" }), owner)).to.throw(
      'gitRepo repo, bundle repo-app, cluster c1: metadata.labels: Deployment ns/web: invalid label value "system:kube-controller-manager" for key "owner"',
    );
  });

  it("namespaces: shared by bundles, labels merged, conflicting labels are an error, deleted only with deleteNamespace", () => {
    const ns = (bundle: string, namespace: string, options: PlanEntry["options"] = {}) => entry({ bundle, namespace, options });
    const specs = namespacesForCluster(
      "c1",
      [
        ns("a", "shared", { namespaceLabels: { team: "x" }, deleteNamespace: true }),
        ns("b", "shared", { namespaceLabels: { tier: "web" } }),
        ns("c", "default"),
        ns("d", "gone", { deleteNamespace: true }),
      ],
      (e) => (e.bundle === "c" ? [cm("x", "other")] : []),
    );
    expect(specs).to.deep.equal([
      { name: "gone", labels: {}, annotations: {}, deleteWithBundles: true, bundles: ["d"] },
      { name: "other", labels: {}, annotations: {}, deleteWithBundles: false, bundles: ["c"] },
      { name: "shared", labels: { team: "x", tier: "web" }, annotations: {}, deleteWithBundles: false, bundles: ["a", "b"] },
    ]);
    expect(() =>
      namespacesForCluster("c1", [ns("a", "ns", { namespaceLabels: { team: "x" } }), ns("b", "ns", { namespaceLabels: { team: "y" } })], () => []),
    ).to.throw(
      'gitRepo repo, bundle b, cluster c1: namespaceLabels: namespace ns: namespaceLabels team is "x" in another bundle on this cluster (a) and "y" here',
    );
  });

  it("CRDs, then Namespaces, then the rest, keyed without their version; the pair waits for the cluster's namespaces, not its own", () => {
    const objects = desiredObjects(entry(), rendered([cm("a"), widget, ownNs, crd]));
    expect(objects.map((o) => o.key)).to.deep.equal([
      "apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com",
      "/Namespace//own",
      "/ConfigMap/apps/a",
      "example.com/Widget/own/w",
    ]);
    expect(clusterNamespacesOf(objects, new Set(["apps", "own"]))).to.deep.equal(["apps"]);
    expect(objects[2].manifest.metadata.labels).to.include({ "fleet.cattle.io/bundle-name": "repo-app" });
  });

  it("one retain rule, with its reason: paused, keepResources, a chart's crds/, Helm's keep policy", () => {
    const kept: K8sObject = { ...cm("kept"), metadata: { name: "kept", namespace: "apps", annotations: { "helm.sh/resource-policy": "keep" } } };
    const chartCrd = cm("crd");
    const reasons = (e: PlanEntry) => desiredObjects(e, rendered([cm("a"), kept, chartCrd], { chartCrds: new Set([chartCrd]) })).map((o) => o.retain ?? null);
    expect(reasons(entry())).to.deep.equal([null, "helm.sh/resource-policy: keep", "a chart's crds/ (Helm never deletes them)"]);
    expect(reasons(entry({ options: { keepResources: true } }))).to.deep.equal(["keepResources", "keepResources", "keepResources"]);
    expect(reasons(entry({ paused: true }))).to.deep.equal(["the bundle is paused", "the bundle is paused", "the bundle is paused"]);
  });

  it("the BundleDeployment's spec: objects by key, timeout, force, correctDrift, paused, and one delete policy", () => {
    const a = cm("a");
    const r = rendered([a], { style: "helm", ignoredFields: new Map([[a, ["/data/k"]]]) });
    const e = entry({ options: { forceSyncGeneration: 2, helm: { timeoutSeconds: 30, force: true }, correctDrift: { enabled: true } } });
    const [o] = desiredObjects(e, r);
    expect(o.manifest.metadata.annotations).to.include({ "pulumi-fleet/force-sync-generation": "2" });
    expect(o.ignoreDrift).to.deep.equal(["/data/k"]);
    const spec = pairSpecOf(e, [o]);
    expect(spec).to.deep.equal({
      deploymentId: "s-1:x",
      objects: { "/ConfigMap/apps/a": { manifest: o.manifest, ignoreDrift: ["/data/k"] } },
      timeoutSeconds: 30,
      force: true,
      correctDrift: true,
      adoptFieldManagers: ["pulumi-kubernetes-"],
      deletePolicy: {
        propagation: "background",
        ownerLabels: {
          "fleet.cattle.io/repo-name": "repo",
          "fleet.cattle.io/bundle-name": "repo-app",
          "fleet.cattle.io/cluster": "c1",
          "app.kubernetes.io/managed-by": "pulumi-fleet",
        },
      },
    });
    expect(pairSpecOf(entry(), [o]).timeoutSeconds).to.equal(600, "Helm's and the Kubernetes provider's default wait");
    expect(pairSpecOf(entry({ paused: true }), [o]).paused).to.equal(true);
    expect(pairSpecOf(entry(), [o]), "what it adopts is the migration's (core/migrate/adoptions.ts)").to.not.have.property("adopt");
  });
});
