import { expect } from "chai";
import { validateObjectLabels, withOwnership } from "../../core/desired/labels";
import { desiredObjects, typeTokenOf, versionAliases } from "../../core/desired/objects";
import { namespacesForCluster } from "../../core/desired/namespaces";
import { objectKey, K8sObject } from "../../core/bundles/manifests";
import { RenderedDeployment } from "../../core/render/deployments";
import { PlanEntry } from "../../core/targeting/plan";

const owner = { gitRepo: "repo", bundle: "repo-app", cluster: "c1" };
const entry = (over: Partial<PlanEntry> = {}): PlanEntry => ({
  gitRepo: "repo", bundle: "repo-app", cluster: "c1", target: "all", customizations: [], options: {}, namespace: "apps", releaseName: "repo-app",
  manifestId: "s-1", deploymentId: "s-1:x", paused: false, dependsOn: [], ...over,
});
const rendered = (objects: K8sObject[], over: Partial<RenderedDeployment> = {}): RenderedDeployment =>
  ({ objects, style: "yaml", warnings: [], kept: new Set(), chartCrds: new Set(), ignoredFields: new Map(), ...over });
const cm = (name: string, namespace = "apps"): K8sObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace } });
const crd: K8sObject = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "widgets.example.com" }, spec: { group: "example.com", names: { kind: "Widget" } } };
const widget: K8sObject = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", namespace: "own" } };
const ownNs: K8sObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "own" } };

describe("desired objects (core/desired)", () => {
  it("type tokens and logical keys of Kubernetes objects", () => {
    expect(typeTokenOf({ apiVersion: "v1", kind: "ConfigMap" })).to.equal("kubernetes:core/v1:ConfigMap");
    expect(typeTokenOf({ apiVersion: "apps/v1", kind: "Deployment" })).to.equal("kubernetes:apps/v1:Deployment");
    const ingress = { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name: "web", namespace: "ns" } };
    expect(objectKey(ingress)).to.equal("networking.k8s.io:Ingress:ns:web");
    expect(objectKey({ apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } })).to.equal("core:Namespace:_:ns");
    // Moving to another version of the same group is an update of the same resource, not create + delete.
    expect(versionAliases(ingress).map((a) => a.type)).to.include("kubernetes:networking.k8s.io/v1beta1:Ingress")
      .and.not.include("kubernetes:networking.k8s.io/v1:Ingress");
    // The core group has only v1: no aliases, which cost per resource at fleet scale.
    expect(versionAliases({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } })).to.deep.equal([]);
  });

  it("ownership labels every object, and labels are checked before anything is registered", () => {
    const obj = (labels: Record<string, string>) => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "ns", labels } });
    expect(withOwnership(obj({ app: "web" }), owner).metadata.labels).to.deep.equal({
      app: "web", "fleet.cattle.io/repo-name": "repo", "fleet.cattle.io/bundle-name": "repo-app", "fleet.cattle.io/cluster": "c1", "app.kubernetes.io/managed-by": "pulumi-fleet",
    });
    expect(() => validateObjectLabels(obj({ owner: "system:kube-controller-manager" }), owner)).to.throw(
      'gitRepo repo, bundle repo-app, cluster c1: metadata.labels: Deployment ns/web: invalid label value "system:kube-controller-manager" for key "owner"');
  });

  it("namespaces: shared by bundles, labels merged, conflicting labels are an error, deleted only with deleteNamespace", () => {
    const ns = (bundle: string, namespace: string, options: PlanEntry["options"] = {}) => entry({ bundle, namespace, options });
    const specs = namespacesForCluster("c1", [
      ns("a", "shared", { namespaceLabels: { team: "x" }, deleteNamespace: true }),
      ns("b", "shared", { namespaceLabels: { tier: "web" } }),
      ns("c", "default"),
      ns("d", "gone", { deleteNamespace: true }),
    ], new Map([["c", [cm("x", "other")]]]));
    expect(specs).to.deep.equal([
      { name: "gone", labels: {}, annotations: {}, deleteWithBundles: true, bundles: ["d"] },
      { name: "other", labels: {}, annotations: {}, deleteWithBundles: false, bundles: ["c"] },
      { name: "shared", labels: { team: "x", tier: "web" }, annotations: {}, deleteWithBundles: false, bundles: ["a", "b"] },
    ]);
    expect(() => namespacesForCluster("c1", [ns("a", "ns", { namespaceLabels: { team: "x" } }), ns("b", "ns", { namespaceLabels: { team: "y" } })], new Map()))
      .to.throw('gitRepo repo, bundle b, cluster c1: namespaceLabels: namespace ns: namespaceLabels team is "x" in another bundle on this cluster (a) and "y" here');
  });

  it("CRDs, then Namespaces, then the rest; each waits for its CRD and its namespace (the bundle's own object, else the cluster's)", () => {
    const objects = desiredObjects("c1/repo-app", entry(), rendered([cm("a"), widget, ownNs, crd]), new Set(["apps"]), false);
    expect(objects.map((o) => [o.name, o.dependsOnObjects, o.clusterNamespace ?? null])).to.deep.equal([
      ["c1/repo-app/apiextensions.k8s.io:CustomResourceDefinition:_:widgets.example.com", [], null],
      ["c1/repo-app/core:Namespace:_:own", [], null],
      ["c1/repo-app/core:ConfigMap:apps:a", [], "apps"],
      ["c1/repo-app/example.com:Widget:own:w", ["c1/repo-app/apiextensions.k8s.io:CustomResourceDefinition:_:widgets.example.com", "c1/repo-app/core:Namespace:_:own"], null],
    ]);
    expect(objects[2].type).to.equal("kubernetes:core/v1:ConfigMap");
    expect(objects[2].manifest.metadata.labels).to.include({ "fleet.cattle.io/bundle-name": "repo-app" });
  });

  it("one retain rule: keepResources, paused, and what Helm's uninstall keeps; paused freezes every field", () => {
    const kept = cm("kept");
    const retained = (e: PlanEntry) => desiredObjects("k", e, rendered([cm("a"), kept], { kept: new Set([kept]) }), new Set(), false).map((o) => o.retainOnDelete);
    expect(retained(entry())).to.deep.equal([false, true]);
    expect(retained(entry({ options: { keepResources: true } }))).to.deep.equal([true, true]);
    expect(retained(entry({ paused: true }))).to.deep.equal([true, true]);
    const paused = desiredObjects("k", entry({ paused: true }), rendered([cm("a")], { ignoredFields: new Map() }), new Set(), true);
    expect(paused[0].ignoreChanges).to.deep.equal(["*"]);
  });

  it("comparePatches' fields are ignored only while the deployment is unchanged; forceSyncGeneration and the earlier Chart layout reach the object", () => {
    const a = cm("a");
    const r = rendered([a], { style: "helm", ignoredFields: new Map([[a, ["data.k"]]]) });
    expect(desiredObjects("c1/app", entry(), r, new Set(), true)[0].ignoreChanges).to.deep.equal(["data.k"]);
    expect(desiredObjects("c1/app", entry(), r, new Set(), false)[0].ignoreChanges).to.equal(undefined);
    const [o] = desiredObjects("c1/app", entry({ options: { forceSyncGeneration: 2 } }), r, new Set(), false);
    expect(o.manifest.metadata.annotations).to.include({ "pulumi-fleet/force-sync-generation": "2" });
    expect(o.aliases).to.deep.equal([{ name: "c1/app:apps/a", parent: { type: "kubernetes:helm.sh/v4:Chart", name: "c1/app" } }]);
  });
});
