/**
 * The engine's events of a pair whose set is kept in its content (core/model/pair.ts contentForm) hold
 * each object's identity and digest, not its manifest: the reports still speak of its objects
 * (automation/engine/pair-steps.ts), and an adopted object it holds unchanged (same digest) is not counted.
 */
import { expect } from "chai";
import { EngineEvent, OpType } from "@pulumi/pulumi/automation";
import { groupSteps } from "../../automation/engine/steps";
import { StepRecorder } from "../../automation/engine/step-recorder";
import { objectDigest } from "../../core/model/content-digest";
import { bundleDeploymentEvent } from "../support/engine-events";

const BD = "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::c1/app";
const manifest = (name: string, data: Record<string, string> = {}) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns" }, data });
const inContent = (name: string, data: Record<string, string> = {}) => ({ apiVersion: "v1", digest: objectDigest(manifest(name, data)) });

function steps(op: OpType, inputs: Record<string, unknown>, oldInputs?: Record<string, unknown>, detailedDiff?: Record<string, unknown>): string[] {
  const r = new StepRecorder();
  r.onEvent(bundleDeploymentEvent({ op, urn: BD, id: "c1/app", inputs, oldInputs, detailedDiff, outputs: (i) => i }) as EngineEvent);
  return groupSteps(r.steps, r.failedUrns)
    .deployments.get("c1/app")!
    .steps.map((s) => `${s.op} ${s.urn.split("::").pop()}`);
}

describe("a pair with content: its steps as its objects' (pair-steps.ts)", () => {
  it("a created pair creates its objects, named by their identities", () => {
    expect(steps("create", { content: "c", objects: { "/ConfigMap/ns/a": inContent("a"), "/ConfigMap/ns/b": inContent("b") } })).to.deep.equal([
      "create c1/app/core:ConfigMap:ns:a",
      "create c1/app/core:ConfigMap:ns:b",
    ]);
  });

  it("an object the diff names as changed is updated", () => {
    const olds = { content: "c", objects: { "/ConfigMap/ns/a": inContent("a") } };
    const news = { content: "d", objects: { "/ConfigMap/ns/a": inContent("a", { k: "v" }) } };
    expect(steps("update", news, olds, { 'objects["/ConfigMap/ns/a"].manifest': { kind: "update" } })).to.deep.equal(["update c1/app/core:ConfigMap:ns:a"]);
  });

  it("an adopted object with the digest it is registered with is not counted; a changed one is updated", () => {
    const adopt = { "/ConfigMap/ns/a": { manifest: manifest("a") }, "/ConfigMap/ns/b": { manifest: manifest("b") } };
    const objects = { "/ConfigMap/ns/a": inContent("a"), "/ConfigMap/ns/b": inContent("b", { changed: "yes" }) };
    expect(steps("create", { content: "c", objects, adopt })).to.deep.equal(["update c1/app/core:ConfigMap:ns:b"]);
  });
});
