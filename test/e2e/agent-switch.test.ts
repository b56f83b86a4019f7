/**
 * The agent switch on a live cluster (`agent.enabled`). Switching the agent off removes its objects in
 * the same `up` and needs no management endpoint; switching it on deploys it again. The bundle here
 * deploys into the agent's own namespace, the case where the namespace changes owner (the agent's
 * resource, then the cluster's, then the agent's): it must never be deleted, since everything in it
 * would go with it.
 */
import { expect } from "chai";
import { kubeGet } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { StackConfig } from "../../core/config/stack";
import { liveStack } from "../support/live-stack";

const NS = "agent-switch-test";
const CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata: {name: app-settings}
data: {mode: blue}
`;
const AGENT_OBJECTS = [
  `/apis/apps/v1/namespaces/${NS}/deployments/fleet-agent`,
  `/api/v1/namespaces/${NS}/serviceaccounts/fleet-agent`,
  `/api/v1/namespaces/${NS}/secrets/fleet-agent-bootstrap`,
  `/apis/rbac.authorization.k8s.io/v1/clusterroles/fleet-agent-${NS}`,
  `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/fleet-agent-${NS}`,
];

describe("the agent switch (agent.enabled) on a live cluster", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("agentswitch", {
    namespace: NS,
    paths: ["app"],
    agent: { namespace: NS },
    files: { "app/fleet.yaml": `defaultNamespace: ${NS}\n`, "app/configmap.yaml": CONFIGMAP },
  });
  /** The stack's config with the agent switched off: no management endpoint at all. */
  const agentOff = (): StackConfig => ({ ...s.options().config!, agent: { enabled: false, namespace: NS } });
  const uid = async (path: string) => (await kubeGet(s.cluster, path))?.metadata.uid as string | undefined;
  const present = async () =>
    Promise.all(AGENT_OBJECTS.map(async (p) => `${p.split("/").slice(-2).join("/")} ${(await kubeGet(s.cluster, p)) ? "present" : "absent"}`));
  const agentSteps = (r: ops.OperationResult) =>
    [...r.groups.agents.values()].map((a) => `${a.cluster} +${a.created} ~${a.updated} -${a.deleted} ±${a.replaced}`);

  it("off removes the agent in the same up, keeping its namespace and the bundle in it; on deploys it again; each then previews no change", async () => {
    await ops.up(s.options());
    const namespace = await uid(`/api/v1/namespaces/${NS}`);
    const configMap = await uid(`/api/v1/namespaces/${NS}/configmaps/app-settings`);
    expect(namespace && configMap, "first up created the namespace and the ConfigMap").to.be.a("string");
    expect(
      (await present()).every((p) => p.endsWith("present")),
      (await present()).join(", "),
    ).to.equal(true);

    const off = await ops.up(s.options({ config: agentOff() }));
    expect(await present()).to.deep.equal(AGENT_OBJECTS.map((p) => `${p.split("/").slice(-2).join("/")} absent`));
    expect(await uid(`/api/v1/namespaces/${NS}`), "namespace kept: it changed owner through its alias").to.equal(namespace);
    expect(await uid(`/api/v1/namespaces/${NS}/configmaps/app-settings`)).to.equal(configMap);
    expect(off.events, "the bundle did not change").to.deep.equal([]);
    expect(agentSteps(off), "the agent's five objects deleted, the namespace not").to.deep.equal([`${s.cluster.name} +0 ~0 -5 ±0`]);
    await ops.preview(s.options({ config: agentOff(), expectNoChanges: true }));

    const on = await ops.up(s.options());
    expect(agentSteps(on).map((x) => x.replace(/~\d+/, "~n"))).to.deep.equal([`${s.cluster.name} +5 ~n -0 ±0`]);
    expect(
      (await present()).every((p) => p.endsWith("present")),
      (await present()).join(", "),
    ).to.equal(true);
    expect(await uid(`/api/v1/namespaces/${NS}`)).to.equal(namespace);
    expect(await uid(`/api/v1/namespaces/${NS}/configmaps/app-settings`)).to.equal(configMap);
    await ops.preview(s.options({ expectNoChanges: true }));
  });
});
