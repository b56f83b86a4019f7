/**
 * ignore.conditions on a live cluster. A custom resource reports a failing condition: `status` says
 * NotReady and names it, as Fleet's agent would (wrangler's summary). Listing that condition under
 * fleet.yaml's ignore.conditions makes the same object Ready, while a condition not listed still counts.
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { crdName, installStatusKind, StatusKind } from "../support/crds";
import { liveStack } from "../support/live-stack";

const NS = "ignore-conditions-test";
const KIND: StatusKind = { group: "conditions.example.com", kind: "Widget", plural: "widgets", singular: "widget" };
const CRD = crdName(KIND);
const WIDGET = `apiVersion: conditions.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 1\n`;
const fleetYaml = (ignore: string) => `defaultNamespace: ${NS}\n${ignore}`;

describe("ignore.conditions on a live cluster (status judged as Fleet's agent judges it)", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("ignorecond", {
    namespace: NS,
    paths: ["app"],
    files: { "app/widget.yaml": WIDGET, "app/fleet.yaml": fleetYaml("") },
    setup: ({ cluster }) => installStatusKind(cluster, KIND),
  });
  after(async () => {
    if (s.cluster) await kubeRequest(s.cluster, "DELETE", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`);
  });

  const setConditions = async (conditions: Record<string, string>[]) => {
    const path = `/apis/conditions.example.com/v1/namespaces/${NS}/widgets/w/status`;
    const live = await kubeGet(s.cluster, path);
    await kubeRequest(s.cluster, "PUT", path, { body: { ...live, status: { conditions } } });
  };
  const stateOf = async () => (await ops.status(s.options())).deployments.map((d) => `${d.state} ${d.message}`);

  it("a failing condition makes status NotReady, naming the object and its message", async () => {
    await ops.up(s.options());
    expect(await stateOf()).to.deep.equal(["Ready "]);
    await setConditions([{ type: "Ready", status: "False", reason: "Waiting", message: "backend down" }]);
    const [state] = await stateOf();
    expect(state).to.match(/^NotReady Widget ignore-conditions-test\/w: .*backend down/);
  });

  it("with the condition under ignore.conditions the object is Ready; another failing condition still counts", async () => {
    s.write("app/fleet.yaml", fleetYaml('ignore:\n  conditions:\n    - type: Ready\n      status: "False"\n'));
    await ops.up(s.options());
    expect(await stateOf()).to.deep.equal(["Ready "]);
    await setConditions([
      { type: "Ready", status: "False", message: "backend down" },
      { type: "Failed", status: "True", message: "quota exceeded" },
    ]);
    const [state] = await stateOf();
    expect(state)
      .to.match(/^NotReady Widget ignore-conditions-test\/w: .*quota exceeded/)
      .and.not.match(/backend down/);
  });
});
