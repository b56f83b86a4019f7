import { expect } from "chai";
import { comparePatchPointers } from "../../core/render/compare-patches";
import { K8sObject } from "../../core/model/k8s-object";
import { PlanEntry, unchangedDeployments } from "../../core/targeting/plan";

const deployment = (name: string, namespace = "apps"): K8sObject => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace } });

describe("diff.comparePatches as the drift a BundleDeployment ignores (Fleet's matching, JSON pointers)", () => {
  it("matches group and kind; an empty name or namespace matches any; remove operations count, other operations do not", () => {
    const patches = [
      { apiVersion: "apps/v1", kind: "Deployment", name: "web", jsonPointers: ["/spec/replicas"] },
      {
        apiVersion: "apps/v1beta1",
        kind: "Deployment",
        operations: [
          { op: "remove", path: "/spec/paused" },
          { op: "replace", path: "/spec/x", value: "1" },
        ],
      },
      { apiVersion: "apps/v1", kind: "Deployment", namespace: "other", jsonPointers: ["/spec/strategy"] },
      { apiVersion: "v1", kind: "Deployment", jsonPointers: ["/spec/minReadySeconds"] },
      { apiVersion: "apps/v1", kind: "StatefulSet", jsonPointers: ["/spec/replicas"] },
    ];
    expect(comparePatchPointers(deployment("web"), patches)).to.deep.equal(["/spec/replicas", "/spec/paused"]);
    expect(comparePatchPointers(deployment("api"), patches)).to.deep.equal(["/spec/paused"]);
    expect(comparePatchPointers(deployment("api", "other"), patches)).to.deep.equal(["/spec/paused", "/spec/strategy"]);
    expect(comparePatchPointers(deployment("web"), undefined)).to.deep.equal([]);
  });

  it("a deployment is unchanged when the last update deployed its deploymentId on that cluster", () => {
    const e = (bundle: string, cluster: string, id: string) => ({ gitRepo: "apps", bundle, cluster, deploymentId: `s-1:${id}` }) as PlanEntry;
    const same = e("web", "c1", "aaaaaaaaaaaabbbbbbbbbbbb");
    const changed = e("web", "c2", "aaaaaaaaaaaacccccccccccc");
    const fresh = e("db", "c1", "dddddddddddddddddddddddd");
    // The same options hash with other manifests is a change: the whole deploymentId counts.
    const unchanged = unchangedDeployments([same, changed, fresh], {
      "c1/apps/web": same.deploymentId,
      "c2/apps/web": "s-0:aaaaaaaaaaaacccccccccccc",
      "c1/apps/db": "s-1:x",
    });
    expect([...unchanged]).to.deep.equal([same]);
    expect(unchangedDeployments([same], undefined).size).to.equal(0);
  });
});
