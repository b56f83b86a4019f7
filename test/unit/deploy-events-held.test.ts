/**
 * A dependsOn pair held at its gate in one `up` (WaitApplied: created, nothing applied) and applied in
 * the next, when the bundle it depends on became Ready: that second `up` is the pair's first deploy and
 * must give one "deployed" event. The steps are shaped as the engine records them: the second update's
 * detailed diff is the provider's (tools/fleet-provider decide.go diffPair), which named only `waitFor`
 * (the gate's state was the only input that changed) until heldObjects named the objects it applies.
 */
import { expect } from "chai";
import { EngineEvent, OpType } from "@pulumi/pulumi/automation";
import { deployEvents, formatDeployEvent } from "../../automation/reports/deploy-events";
import { decideAfterUp } from "../../automation/notify/events";
import { deploysOf, observedAfterUp, recordedStates } from "../../automation/notify/observe";
import { StepRecorder } from "../../automation/engine/step-recorder";
import { groupSteps } from "../../automation/engine/steps";
import { PairReport } from "../../core/model/pair";
import { DeploymentRecord } from "../../core/desired/records";
import { bundleDeploymentEvent } from "../support/engine-events";

const KEY = "c1/apps/web";
const BD = `urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::${KEY}`;
const cm = (name: string) => ({ manifest: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "web" }, data: { k: "v" } }) });
const objects = { "/ConfigMap/web/a": cm("a"), "/ConfigMap/web/b": cm("b") };
const held = { deploymentId: "s-1:web", objects, waitFor: [{ name: "c1/apps/db", state: "NotReady" }] };
const open = { ...held, waitFor: [{ name: "c1/apps/db", state: "Ready" }] };
const record: DeploymentRecord = {
  gitRepo: "apps",
  bundle: "web",
  cluster: "c1",
  target: "all",
  deploymentId: "s-1:web",
  commit: "abc",
  namespace: "web",
  paused: false,
  objectCount: 2,
  revision: 1,
};

function pairStep(
  op: OpType,
  inputs: Record<string, unknown>,
  state: string,
  oldInputs?: Record<string, unknown>,
  detailedDiff?: Record<string, unknown>,
): EngineEvent {
  return bundleDeploymentEvent({ op, urn: BD, id: KEY, inputs, oldInputs, detailedDiff, outputs: () => ({ state, messages: [] }) });
}

const events = (e: EngineEvent, before: Record<string, DeploymentRecord>) => {
  const r = new StepRecorder();
  r.onEvent(e);
  return deployEvents(groupSteps(r.steps, r.failedUrns), before, { [KEY]: record });
};
const change = (diffKind: string) => ({ diffKind, inputDiff: true });
const report = (state: string): Record<string, PairReport> => ({
  [KEY]: { state: state as PairReport["state"], messages: [], appliedDeploymentId: state === "Ready" ? "s-1:web" : "" },
});

describe("deploy events of a pair a dependsOn gate held back (automation/reports/deploy-events.ts)", () => {
  it("the first `up` (WaitApplied) deploys nothing; the second, where the gate opened, deploys once, creating its objects", () => {
    // First up: the pair is created but its gate holds it: nothing applied, no event (its record is written all the same).
    expect(events(pairStep("create", held, "WaitApplied"), {})).to.deep.equal([]);

    // What the provider's diff gave before the fix: only the gate's state changed among the inputs.
    const before = events(pairStep("update", open, "Ready", held, { waitFor: change("update") }), { [KEY]: record });
    expect(before, "an update that names no object is a no-op to the operations: this was the missing event").to.deep.equal([]);

    // As diffPair gives it now: the objects the gate held back are added.
    const second = events(
      pairStep("update", open, "Ready", held, {
        waitFor: change("update"),
        'objects["/ConfigMap/web/a"]': change("add"),
        'objects["/ConfigMap/web/b"]': change("add"),
      }),
      { [KEY]: record },
    );
    expect(second.map(formatDeployEvent)).to.deep.equal(["Deployed bundle web to c1 deploymentID=s-1:web commit=abc (2 created, 0 updated, 0 deleted)"]);

    // The webhooks' event carries that deploy's words, once.
    const { deployed, pruned } = deploysOf(second);
    const memory = recordedStates(report("WaitApplied"));
    const d = decideAfterUp(memory, observedAfterUp(report("Ready"), { [KEY]: record }, []), deployed, pruned, { stack: "s", time: "t" });
    expect(d.events.map((e) => [e.type, e.previousState, e.message])).to.deep.equal([["deployed", "WaitApplied", formatDeployEvent(second[0])]]);
    expect(decideAfterUp(d.memory, observedAfterUp(report("Ready"), { [KEY]: record }, []), new Map(), [], { stack: "s", time: "t" }).events).to.deep.equal([]);
  });
});
