/**
 * A BundleDeployment is one engine resource; the reports speak of its objects (automation/engine/pair-steps.ts),
 * and a pair's state is a failure the update names (core/desired/records.ts pairFailures). Engine events
 * are synthetic here, shaped as the real engine sends them; test/e2e/bundle-deployment-unit.test.ts has
 * the real ones.
 */
import { expect } from "chai";
import { EngineEvent, OpType } from "@pulumi/pulumi/automation";
import { groupSteps } from "../../automation/engine/steps";
import { StepRecorder } from "../../automation/engine/step-recorder";
import { pairFailures } from "../../core/desired/records";
import { DeploymentRecord } from "../../core/desired/records";
import { bundleDeploymentEvent } from "../support/engine-events";

const BD = "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::c1/app";
const LEGACY_CHILD =
  "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment$kubernetes:core/v1:ConfigMap::c1/app/core:ConfigMap:ns:a";
const cm = (name: string, data: Record<string, string> = {}) => ({
  manifest: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns" }, data },
});

function pairEvent(
  op: OpType,
  inputs: Record<string, unknown>,
  oldInputs?: Record<string, unknown>,
  detailedDiff?: Record<string, unknown>,
  outputs?: Record<string, unknown>,
): EngineEvent {
  return bundleDeploymentEvent({ op, urn: BD, id: "c1/app", inputs, oldInputs, detailedDiff, outputs: (i) => outputs ?? i });
}

const grouped = (events: EngineEvent[], moving?: Set<string>) => {
  const r = new StepRecorder();
  for (const e of events) r.onEvent(e);
  return groupSteps(r.steps, r.failedUrns, moving).deployments.get("c1/app")!;
};
const ops = (d: ReturnType<typeof grouped>) => d.steps.map((s) => `${s.op} ${s.urn.split("::").pop()}${s.diffs.length ? ` ${s.diffs.join(",")}` : ""}`);

describe("a BundleDeployment's steps as its objects' (automation/engine/pair-steps.ts)", () => {
  it("a created pair creates its objects; a deleted one deletes them, except what its retain rules keep", () => {
    const objects = { "/ConfigMap/ns/a": cm("a"), "/ConfigMap/ns/k": { ...cm("k"), retain: "keepResources" } };
    const created = grouped([pairEvent("create", { objects })]);
    expect(ops(created)).to.deep.equal(["create c1/app/core:ConfigMap:ns:a", "create c1/app/core:ConfigMap:ns:k"]);
    expect(created).to.include({ created: 2, updated: 0, deleted: 0 });
    const deleted = grouped([pairEvent("delete", {}, { objects })]);
    expect(ops(deleted)).to.deep.equal(["delete c1/app/core:ConfigMap:ns:a"]);
  });

  it("an update names each object its detailed diff names: added, changed with its fields, removed", () => {
    const old = { objects: { "/ConfigMap/ns/a": cm("a", { k: "1" }), "/ConfigMap/ns/gone": cm("gone") } };
    const next = { objects: { "/ConfigMap/ns/a": cm("a", { k: "2" }), "/ConfigMap/ns/new": cm("new") } };
    const d = grouped([
      pairEvent("update", next, old, {
        'objects["/ConfigMap/ns/a"].manifest.data.k': { diffKind: "update", inputDiff: true },
        'objects["/ConfigMap/ns/new"]': { diffKind: "add", inputDiff: true },
        'objects["/ConfigMap/ns/gone"]': { diffKind: "delete", inputDiff: true },
        deploymentId: { diffKind: "update", inputDiff: true },
      }),
    ]);
    expect(ops(d).sort()).to.deep.equal([
      "create c1/app/core:ConfigMap:ns:new",
      "delete c1/app/core:ConfigMap:ns:gone",
      "update c1/app/core:ConfigMap:ns:a data.k",
    ]);
  });

  it("a pair whose objects are a secret (blinded in the engine's events) counts as one object, its own", () => {
    const blinded = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "[secret]" };
    const updated = grouped([
      pairEvent("update", { objects: blinded }, { objects: blinded }, { 'objects["/ConfigMap/ns/a"].manifest.data.password': { kind: "update" } }),
    ]);
    expect(updated).to.include({ created: 0, updated: 1, deleted: 0 });
    expect(updated.steps.map((s) => `${s.op} ${s.type}`)).to.deep.equal(["update pulumi-fleet:index:BundleDeployment"]);
  });

  it("the pair's state comes with its step; an apply the server refused is its report", () => {
    const objects = { "/ConfigMap/ns/a": cm("a") };
    const d = grouped([
      pairEvent(
        "update",
        { objects },
        { objects },
        { deploymentId: { diffKind: "update", inputDiff: true } },
        { objects, state: "ErrApplied", messages: ["ConfigMap/ns/a dry-run failed: denied"] },
      ),
    ]);
    expect(d.report).to.deep.equal({ state: "ErrApplied", applied: false, messages: ["ConfigMap/ns/a dry-run failed: denied"] });
    expect(d.steps, "a retry changes no object").to.deep.equal([]);
  });

  it("the move from per-object resources: adopted objects that stay are not counted, those it no longer holds are pruned, the old resources are only dropped", () => {
    const adopt = { "/ConfigMap/ns/a": cm("a"), "/ConfigMap/ns/dropped": cm("dropped") };
    const legacyDelete = {
      sequence: 0,
      timestamp: 0,
      resourcePreEvent: {
        metadata: {
          op: "delete",
          urn: LEGACY_CHILD,
          type: "kubernetes:core/v1:ConfigMap",
          provider: "",
          old: { type: "kubernetes:core/v1:ConfigMap", urn: LEGACY_CHILD, custom: true, parent: BD, id: "x", inputs: {}, outputs: {}, provider: "" },
        },
      },
    } as unknown as EngineEvent;
    const d = grouped([pairEvent("create-replacement", { objects: { "/ConfigMap/ns/a": cm("a") }, adopt }), legacyDelete], new Set([LEGACY_CHILD]));
    expect(ops(d)).to.deep.equal(["delete c1/app/core:ConfigMap:ns:dropped"]);
  });
});

describe("a pair that did not reach Ready is a failure of the update, alone (core/plan/failures.ts)", () => {
  const record = (bundle: string, cluster: string) => ({ gitRepo: "r", bundle, cluster, objectCount: 2 }) as DeploymentRecord;
  it("ErrApplied, NotReady and WaitApplied fail with the provider's words; Ready and Modified do not", () => {
    const failures = pairFailures(
      {
        "c2/web": { state: "ErrApplied", messages: ["ConfigMap/ns/a dry-run failed: denied"], appliedDeploymentId: "s-1:old" },
        "c1/web": { state: "Ready", messages: [], appliedDeploymentId: "s-1:new" },
        "c1/db": { state: "NotReady", messages: ["timeout waiting for: [Deployment/ns/db status: 'InProgress']"], appliedDeploymentId: "s-1:new" },
        "c3/web": { state: "Modified", messages: ["ConfigMap/ns/a is modified"], appliedDeploymentId: "s-1:new" },
        "c3/db": { state: "WaitApplied", messages: ["waiting for c3/base is ErrApplied"], appliedDeploymentId: "" },
      },
      { "c2/web": record("web", "c2"), "c1/web": record("web", "c1"), "c1/db": record("db", "c1"), "c3/web": record("web", "c3"), "c3/db": record("db", "c3") },
    );
    expect(failures.map((f) => [f.cluster, f.bundle, f.reason, f.kept?.deploymentId ?? null])).to.deep.equal([
      ["c1", "db", "NotReady: timeout waiting for: [Deployment/ns/db status: 'InProgress']", "s-1:new"],
      ["c2", "web", "ErrApplied: ConfigMap/ns/a dry-run failed: denied", "s-1:old"],
      ["c3", "db", "WaitApplied: waiting for c3/base is ErrApplied", null],
    ]);
    expect(failures[1].message).to.equal("gitRepo r, bundle web, cluster c2: ErrApplied: ConfigMap/ns/a dry-run failed: denied");
  });
});

describe("the update's counts come from the engine's own summary event (automation/engine/step-recorder.ts)", () => {
  it("the recorder keeps the summary event's resourceChanges: `up` reads no history entry back", () => {
    const r = new StepRecorder();
    expect(r.changes, "before the engine finished").to.equal(undefined);
    r.onEvent({
      sequence: 1,
      timestamp: 0,
      summaryEvent: { maybeCorrupt: false, durationSeconds: 1, resourceChanges: { same: 46, update: 2 }, policyPacks: {} },
    } as EngineEvent);
    expect(r.changes).to.deep.equal({ same: 46, update: 2 });
  });
});

describe("the recorder keeps a pair's inputs only for a step that changes it (automation/engine/step-recorder.ts)", () => {
  it("an unchanged pair's objects are not kept (a large fleet's preview is all such steps); a changed one's are", () => {
    const urn = (n: string) => `urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::${n}`;
    const state = (n: string) => ({
      type: "pulumi-fleet:index:BundleDeployment",
      urn: urn(n),
      custom: true,
      parent: "",
      id: n,
      inputs: { objects: { a: {} } },
      outputs: { state: "Ready" },
      provider: "",
    });
    const r = new StepRecorder();
    for (const [op, n] of [
      ["same", "kept"],
      ["update", "changed"],
    ] as const)
      r.onEvent({
        sequence: 1,
        timestamp: 0,
        resourcePreEvent: { metadata: { op, urn: urn(n), type: "pulumi-fleet:index:BundleDeployment", old: state(n), new: state(n), provider: "" } },
      } as EngineEvent);
    const [same, update] = r.steps;
    expect([same.op, same.inputs, same.oldInputs, same.outputs]).to.deep.equal(["same", undefined, undefined, { state: "Ready" }]);
    expect([update.op, update.inputs, update.oldInputs]).to.deep.equal(["update", { objects: { a: {} } }, { objects: { a: {} } }]);
  });
});

describe("a cluster's setup (its namespaces and agent) in the reports (automation/engine/steps.ts)", () => {
  const SETUP = "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:Cluster$pulumi-fleet:index:ClusterSetup::c1";
  const ns = { manifest: { apiVersion: "v1", kind: "Namespace", metadata: { name: "app" } } };
  const deployment = { manifest: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "fleet-agent", namespace: "cattle-fleet-system" } } };
  const blinded = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "[secret]" };

  it("switching the agent off counts its objects, the blinded Secret by its key, as the agent's deletes; a namespace is not the agent's", () => {
    const state = (inputs: Record<string, unknown>) => ({
      type: "pulumi-fleet:index:ClusterSetup",
      urn: SETUP,
      custom: true,
      parent: "",
      id: "c1",
      inputs,
      outputs: inputs,
      provider: "",
    });
    const before = { objects: { "/Namespace//app": ns, "apps/Deployment/cattle-fleet-system/fleet-agent": deployment }, secretObjects: blinded };
    const after = { objects: { "/Namespace//app": { ...ns, retain: "kept" } } };
    const r = new StepRecorder();
    r.onEvent({
      sequence: 0,
      timestamp: 0,
      resOutputsEvent: {
        metadata: {
          op: "update",
          urn: SETUP,
          type: "pulumi-fleet:index:ClusterSetup",
          provider: "",
          new: state(after),
          old: state(before),
          detailedDiff: {
            'objects["apps/Deployment/cattle-fleet-system/fleet-agent"]': { diffKind: "delete", inputDiff: true },
            'objects["/Namespace//app"].retain': { diffKind: "update", inputDiff: true },
            'secretObjects["/Secret/cattle-fleet-system/fleet-agent-bootstrap"]': { diffKind: "delete", inputDiff: true },
          },
        },
      },
    } as unknown as EngineEvent);
    const groups = groupSteps(r.steps, r.failedUrns);
    expect(groups.deployments.size).to.equal(0);
    expect(groups.agents.get("c1")).to.include({ created: 0, updated: 0, deleted: 2, replaced: 0 });
  });
});
