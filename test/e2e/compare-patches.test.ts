/**
 * diff.comparePatches on a live cluster: a field the bundle lists is changed on the cluster; `status`
 * stays Ready, `up --refresh` and correctDrift leave it, while a hand edit of another field is still
 * drift and put back; a new value for it in git is applied (the deployment changed), as in Fleet.
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { CONFIGMAP } from "../support/git-fixtures";
import { liveStack } from "../support/live-stack";

const NS = "compare-patches-test";
const CM = `/api/v1/namespaces/${NS}/configmaps/tuned`;
const FLEET_YAML = `defaultNamespace: ${NS}
correctDrift: {enabled: true}
diff:
  comparePatches:
  - {apiVersion: v1, kind: ConfigMap, name: tuned, jsonPointers: [/data/setting]}
`;

describe("diff.comparePatches on a live cluster", function () {
  this.timeout(10 * 60_000);
  const cm = (setting: string) => CONFIGMAP("tuned", { setting, other: "from-git" });
  const s = liveStack("cmp", { namespace: NS, paths: ["app"], files: { "app/fleet.yaml": FLEET_YAML, "app/cm.yaml": cm("from-git") } });
  const data = async () => (await kubeGet(s.cluster, CM)).data;
  const state = async () => (await ops.status(s.options())).deployments.find((d) => d.bundle === "cmp-app")!;

  it("the listed field may change on the cluster; other fields are still drift; a new value in git is applied", async () => {
    await ops.up(s.options());
    await kubeRequest(s.cluster, "PATCH", CM, { body: { data: { setting: "by-a-controller" } } });
    expect((await state()).state, "a listed field is not drift").to.equal("Ready");
    await ops.up(s.options({ refresh: true }));
    expect(await data(), "up --refresh leaves it").to.deep.equal({ setting: "by-a-controller", other: "from-git" });

    await kubeRequest(s.cluster, "PATCH", CM, { body: { data: { other: "by-hand" } } });
    const drifted = await state();
    expect(drifted.state, drifted.message).to.equal("Modified");
    await ops.up(s.options());
    expect(await data(), "correctDrift puts back the other field only").to.deep.equal({ setting: "by-a-controller", other: "from-git" });

    s.write("app/cm.yaml", cm("new-in-git"));
    await ops.up(s.options());
    expect(await data(), "a new version of the bundle is applied whole").to.deep.equal({ setting: "new-in-git", other: "from-git" });
  });
});
