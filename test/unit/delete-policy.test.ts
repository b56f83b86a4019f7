import { expect } from "chai";
import { K8sObject } from "../../core/model/k8s-object";
import {
  DELETE_PROPAGATION,
  deletePolicyOf,
  keptByHelm,
  namespaceRetain,
  RETAIN_REASONS,
  retainCode,
  retainCodeOf,
  RetainCode,
  sweepKeeps,
} from "../../core/desired/delete-policy";
import { desiredObjects } from "../../core/desired/objects";
import { RenderedDeployment } from "../../core/render/deployments";
import { PlanEntry } from "../../core/targeting/plan";
import { planEntry } from "../support/plan-entries";

const KEEP = { "helm.sh/resource-policy": "keep" };
const cm = (name: string, annotations?: Record<string, string>): K8sObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "apps", ...(annotations ? { annotations } : {}) },
});
const crd = (annotations?: Record<string, string>): K8sObject => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com", ...(annotations ? { annotations } : {}) },
});
const pair = (over: { paused?: boolean; keepResources?: boolean; deleteCRDResources?: boolean } = {}) => ({
  paused: !!over.paused,
  options: { keepResources: over.keepResources, deleteCRDResources: over.deleteCRDResources },
});

describe("the delete policy (core/desired/delete-policy.ts): what a prune keeps, why, and how it deletes", () => {
  it("one reason code per rule, in Fleet's and Helm's order: paused, keepResources, a chart's crds/, a CRD, Helm's keep policy", () => {
    expect(retainCode(pair(), cm("plain"))).to.equal(undefined);
    expect(retainCode(pair(), cm("kept", KEEP))).to.equal("helmKeep");
    expect(retainCode(pair(), cm("kept", { "helm.sh/resource-policy": " Keep " })), "Helm trims and lower-cases").to.equal("helmKeep");
    expect(retainCode(pair(), cm("other", { "helm.sh/resource-policy": "delete" }))).to.equal(undefined);
    expect(retainCode(pair(), crd(KEEP)), "fleet-render annotates every CRD unless deleteCRDResources").to.equal("crd");
    expect(retainCode(pair({ deleteCRDResources: true }), crd()), "deleteCRDResources: the CRD goes").to.equal(undefined);
    expect(retainCode(pair({ deleteCRDResources: true }), crd(KEEP)), "the chart's own keep policy still holds").to.equal("helmKeep");
    expect(retainCode(pair(), crd(), true)).to.equal("chartCrd");
    expect(retainCode(pair({ keepResources: true }), cm("plain"))).to.equal("keepResources");
    expect(retainCode(pair({ keepResources: true, paused: true }), crd(KEEP), true)).to.equal("paused");
  });

  it("the words a pair's inputs carry are the ones deployed stacks hold, and read back to their codes", () => {
    // Changing one of these is safe (the provider tells only kept from deleted), but it is a choice: pinned here.
    expect(RETAIN_REASONS).to.include({
      paused: "the bundle is paused",
      keepResources: "keepResources",
      chartCrd: "a chart's crds/ (Helm never deletes them)",
      helmKeep: "helm.sh/resource-policy: keep",
      namespace: "a bundle namespace: kept unless every bundle in it sets deleteNamespace",
      agentNamespace: "the agent's namespace: kept when the agent goes, as uninstalling Fleet's agent keeps it",
      legacy: "retained when it was deployed (keepResources, paused, or Helm's keep policy)",
    });
    for (const code of Object.keys(RETAIN_REASONS) as RetainCode[]) expect(retainCodeOf(RETAIN_REASONS[code])).to.equal(code);
    expect(retainCodeOf(undefined)).to.equal(undefined);
    expect(retainCodeOf("")).to.equal(undefined);
    expect(retainCodeOf("words of another version"), "kept, for a reason this version does not name").to.equal("legacy");
  });

  it("a bundle object's retain is its code's words; a state's object keeps the words it was rendered with unless the bundle is paused now", () => {
    const entry = (over: Partial<PlanEntry> = {}): PlanEntry => planEntry("app", "c1", { deploymentId: "s-1:x", ...over });
    const theCrd = crd(KEEP);
    const carried = cm("carried");
    const rendered: RenderedDeployment = {
      objects: [theCrd, carried],
      style: "yaml",
      warnings: [],
      chartCrds: new Set(),
      ignoredFields: new Map(),
      retainReasons: new Map([[carried, "keepResources"]]),
    };
    expect(desiredObjects(entry(), rendered).map((o) => o.retain)).to.deep.equal([RETAIN_REASONS.crd, "keepResources"]);
    expect(desiredObjects(entry({ paused: true }), rendered).map((o) => o.retain)).to.deep.equal([RETAIN_REASONS.paused, RETAIN_REASONS.paused]);
  });

  it("a cluster's bundle namespace is kept unless every bundle in it sets deleteNamespace; the journal never sweeps what a prune keeps, nor a Namespace", () => {
    expect(namespaceRetain(false)).to.equal("namespace");
    expect(namespaceRetain(true)).to.equal(undefined);
    expect(sweepKeeps({ kind: "ConfigMap" }, undefined)).to.equal(false);
    expect(sweepKeeps({ kind: "ConfigMap" }, RETAIN_REASONS.keepResources)).to.equal(true);
    expect(sweepKeeps({ kind: "Namespace" }, undefined)).to.equal(true);
  });

  it("one propagation for every pair: background, as Helm's uninstall, with the pair's owner labels", () => {
    expect(DELETE_PROPAGATION).to.equal("background");
    expect(deletePolicyOf({ "fleet.cattle.io/cluster": "c1" })).to.deep.equal({ propagation: "background", ownerLabels: { "fleet.cattle.io/cluster": "c1" } });
    expect(keptByHelm(cm("x"))).to.equal(false);
  });
});
