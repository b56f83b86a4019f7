import { expect } from "chai";
import { lifecycleOptions, validateObjectLabels, withOwnership } from "../../components/labels";
import { objectKey, typeTokenOf, versionAliases } from "../../components/k8s-object";
import { namespacesForCluster } from "../../components/namespaces";
import { PlanEntry } from "../../core/targeting/plan";

const owner = { gitRepo: "repo", bundle: "repo-app", cluster: "c1" };

describe("component helpers", () => {
  it("type tokens and logical keys of Kubernetes objects", () => {
    expect(typeTokenOf({ apiVersion: "v1", kind: "ConfigMap" })).to.equal("kubernetes:core/v1:ConfigMap");
    expect(typeTokenOf({ apiVersion: "apps/v1", kind: "Deployment" })).to.equal("kubernetes:apps/v1:Deployment");
    const ingress = { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name: "web", namespace: "ns" } };
    expect(objectKey(ingress)).to.equal("networking.k8s.io:Ingress:ns:web");
    expect(objectKey({ apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } })).to.equal("core:Namespace:_:ns");
    // Moving to another version of the same group is an update of the same resource, not create + delete.
    expect(versionAliases(ingress).map((a) => (a as { type: string }).type)).to.include("kubernetes:networking.k8s.io/v1beta1:Ingress")
      .and.not.include("kubernetes:networking.k8s.io/v1:Ingress");
    // The core group has only v1: no aliases, which cost per resource at fleet scale.
    expect(versionAliases({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } })).to.deep.equal([]);
  });

  it("ownership labels every object, labels are checked, and the lifecycle policy applies", () => {
    const obj = (labels: Record<string, string>) => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "ns", labels } });
    expect(withOwnership(obj({ app: "web" }), owner).metadata.labels).to.deep.equal({
      app: "web", "fleet.cattle.io/repo-name": "repo", "fleet.cattle.io/bundle-name": "repo-app", "fleet.cattle.io/cluster": "c1", "app.kubernetes.io/managed-by": "pulumi-fleet",
    });
    expect(lifecycleOptions({}, { retainOnDelete: true, freeze: true })).to.deep.equal({ retainOnDelete: true, ignoreChanges: ["*"] });
    expect(() => validateObjectLabels(obj({ owner: "system:kube-controller-manager" }), owner)).to.throw(
      'gitRepo repo, bundle repo-app, cluster c1: metadata.labels: Deployment ns/web: invalid label value "system:kube-controller-manager" for key "owner"');
  });

  it("namespaces: shared by bundles, labels merged, conflicting labels are an error, deleted only with deleteNamespace", () => {
    const entry = (bundle: string, namespace: string, options: PlanEntry["options"] = {}) => ({ gitRepo: "repo", bundle, cluster: "c1", namespace, options } as PlanEntry);
    const specs = namespacesForCluster("c1", [
      entry("a", "shared", { namespaceLabels: { team: "x" }, deleteNamespace: true }),
      entry("b", "shared", { namespaceLabels: { tier: "web" } }),
      entry("c", "default"),
      entry("d", "gone", { deleteNamespace: true }),
    ], new Map([["c", [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "other" } }]]]));
    expect(specs).to.deep.equal([
      { name: "gone", labels: {}, annotations: {}, deleteWithBundles: true, bundles: ["d"] },
      { name: "other", labels: {}, annotations: {}, deleteWithBundles: false, bundles: ["c"] },
      { name: "shared", labels: { team: "x", tier: "web" }, annotations: {}, deleteWithBundles: false, bundles: ["a", "b"] },
    ]);
    expect(() => namespacesForCluster("c1", [entry("a", "ns", { namespaceLabels: { team: "x" } }), entry("b", "ns", { namespaceLabels: { team: "y" } })], new Map()))
      .to.throw('gitRepo repo, bundle b, cluster c1: namespaceLabels: namespace ns: namespaceLabels team is "x" in another bundle on this cluster (a) and "y" here');
  });
});
