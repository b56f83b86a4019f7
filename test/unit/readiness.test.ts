import { expect } from "chai";
import { describeNotReady, judgeReadiness } from "../../core/renderer/readiness";

const widget = (conditions: Record<string, unknown>[]) => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "w", namespace: "apps", generation: 1 },
  status: { observedGeneration: 1, conditions },
});

describe("readiness as Fleet's agent judges it (wrangler summary, ignore.conditions)", () => {
  it("a failing condition makes an object not ready; ignore.conditions that match all its keys remove it first", async () => {
    const failing = widget([{ type: "Ready", status: "False", reason: "Waiting", message: "backend down" }]);
    const judged = await judgeReadiness([
      { id: "plain", object: failing },
      { id: "ignored", object: failing, ignore: [{ type: "Ready", status: "False" }] },
      { id: "other-value", object: failing, ignore: [{ type: "Ready", status: "True" }] },
      { id: "extra-key", object: failing, ignore: [{ type: "Ready", status: "False", owner: "me" }] },
      { id: "healthy", object: widget([{ type: "Ready", status: "True" }]) },
      { id: "configmap", object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "apps" }, data: {} } },
    ]);
    expect(Object.fromEntries([...judged].map(([id, r]) => [id, r.ready]))).to.deep.equal({
      plain: false,
      ignored: true,
      "other-value": false,
      "extra-key": false,
      healthy: true,
      configmap: true,
    });
    expect(describeNotReady(failing, judged.get("plain")!)).to.match(/^Widget apps\/w: .*backend down/);
  });
});
