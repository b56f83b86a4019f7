/**
 * fleet.yaml correctDrift.enabled on a live cluster: after a hand edit, a plain `up` (no --refresh)
 * puts back the object of the bundle that has it; the object of a bundle without it stays edited and
 * `status` keeps reporting that bundle Modified until `up --refresh`.
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { CONFIGMAP } from "../support/git-fixtures";
import { liveStack } from "../support/live-stack";

const NS = "correct-drift-test";
const cmPath = (name: string) => `/api/v1/namespaces/${NS}/configmaps/${name}`;

describe("correctDrift on a live cluster", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("drift", {
    namespace: NS,
    paths: ["fixed", "loose"],
    files: {
      "fixed/fleet.yaml": `defaultNamespace: ${NS}\ncorrectDrift: {enabled: true}\n`,
      "fixed/cm.yaml": CONFIGMAP("fixed", { setting: "from-git" }),
      "loose/fleet.yaml": `defaultNamespace: ${NS}\n`,
      "loose/cm.yaml": CONFIGMAP("loose", { setting: "from-git" }),
    },
  });
  const edit = (name: string) => kubeRequest(s.cluster, "PATCH", cmPath(name), { body: { data: { setting: "by-hand" } } });
  const setting = async (name: string) => (await kubeGet(s.cluster, cmPath(name))).data.setting;
  const stateOf = async (bundle: string) => (await ops.status(s.options())).deployments.find((d) => d.bundle === bundle)!.state;

  it("a plain up corrects the bundle with correctDrift; the other stays Modified until up --refresh", async () => {
    await ops.up(s.options());
    await edit("fixed");
    await edit("loose");
    expect(await stateOf("drift-fixed")).to.equal("Modified");

    const corrected = await ops.up(s.options());
    expect(corrected.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed drift-fixed"]);
    expect(await setting("fixed")).to.equal("from-git");
    expect(await setting("loose")).to.equal("by-hand");
    expect(await stateOf("drift-fixed")).to.equal("Ready");
    expect(await stateOf("drift-loose")).to.equal("Modified");

    await ops.up(s.options({ refresh: true }));
    expect(await setting("loose")).to.equal("from-git");
    expect(await stateOf("drift-loose")).to.equal("Ready");
  });
});
