/** Which Helm hooks a pair's step runs, as a preview tells them (automation/engine/hook-runs.ts). */
import { expect } from "chai";
import { hookRuns } from "../../automation/engine/hook-runs";

const hook = (kind: string, name: string, events: string[], weight = 0) => ({
  events,
  weight,
  manifest: JSON.stringify({ apiVersion: "v1", kind, metadata: { name, namespace: "web" } }),
});
const HOOKS = [
  hook("Job", "migrate", ["pre-install", "pre-upgrade"], 5),
  hook("ConfigMap", "seed", ["pre-upgrade"], -1),
  hook("Job", "notify", ["post-install", "post-upgrade"]),
  hook("Job", "goodbye", ["pre-delete"]),
];

describe("the Helm hooks a pair's step runs (automation/engine/hook-runs.ts)", () => {
  it("an install runs the install hooks, an upgrade (a new deploymentId) the upgrade hooks, a deletion the delete hooks, each phase by weight", () => {
    expect(hookRuns({ op: "create", inputs: { deploymentId: "a", hooks: HOOKS } })).to.deep.equal([
      "pre-install Job web/migrate",
      "post-install Job web/notify",
    ]);
    expect(hookRuns({ op: "update", oldInputs: { deploymentId: "a", hooks: HOOKS }, inputs: { deploymentId: "b", hooks: HOOKS } })).to.deep.equal([
      "pre-upgrade ConfigMap web/seed",
      "pre-upgrade Job web/migrate",
      "post-upgrade Job web/notify",
    ]);
    expect(hookRuns({ op: "delete", oldInputs: { deploymentId: "b", hooks: HOOKS } })).to.deep.equal(["pre-delete Job web/goodbye"]);
  });

  it("an update of the same release (a retry, a gate) and a pair without hooks run none; secret hooks are one line", () => {
    expect(hookRuns({ op: "update", oldInputs: { deploymentId: "a", hooks: HOOKS }, inputs: { deploymentId: "a", hooks: HOOKS } })).to.deep.equal([]);
    expect(hookRuns({ op: "create", inputs: { deploymentId: "a" } })).to.deep.equal([]);
    expect(hookRuns({ op: "same", inputs: { deploymentId: "a", hooks: HOOKS } })).to.deep.equal([]);
    const secret = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "[secret]" };
    expect(hookRuns({ op: "create", inputs: { deploymentId: "a", hooks: secret } })).to.deep.equal([
      "pre-install and post-install hooks (a secret: not shown)",
    ]);
  });
});
