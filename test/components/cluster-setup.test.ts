/**
 * Each cluster's namespaces and agent are one ClusterSetup resource (core/desired/setup.ts), applied by
 * pulumi-fleet's provider as a BundleDeployment is: no per-object resource, no Kubernetes provider.
 */
import { expect } from "chai";
import { fleetProgram } from "../../components/program";
import { desiredState } from "../../core/desired/state";
import { runUnderMocks } from "../support/mock-engine";
import { localStack } from "../support/fleet-fixtures";
import { fakeFacts } from "../support/fake-facts";
import { tempDir } from "../support/git-fixtures";
import { EngineObject, fromEngineObjects } from "../../core/model/pair";
import { RETAIN_REASONS } from "../../core/desired/delete-policy";

const cacheRoot = tempDir("pf-cache-");
const SECRET_SIG = "4dabf18193072939515e22adb298388d";
type Objects = Record<string, { manifest: Record<string, any>; retain?: string }>;

describe("ClusterSetup component: a cluster's namespaces and agent as one set (Pulumi mocks)", function () {
  this.timeout(30_000);

  it("registers each cluster's agent objects as core describes them, through the stack's pulumi-fleet provider naming the cluster; the token only as a secret", async () => {
    const config = {
      ...localStack("/tmp/r"),
      agent: { apiServerURL: "https://fleet.example.com", token: "t0ken", priorityClass: { value: 10 }, podDisruptionBudget: { maxUnavailable: 1 } },
    };
    const desired = await desiredState(config, fakeFacts(), { cacheRoot });
    const { registrations } = await runUnderMocks(() => fleetProgram(config, { cacheRoot, previous: null }));
    for (const c of desired.clusters) {
      const setup = registrations.find((r) => r.type === "pulumi-fleet:index:ClusterSetup" && r.name === c.name)!;
      expect(setup.provider).to.match(/pulumi:providers:pulumi-fleet::fleet:test::fleet:test-id$/);
      expect(setup.inputs.cluster).to.equal(c.name);
      const objects = fromEngineObjects(setup.inputs.objects as Record<string, EngineObject>) as Objects;
      const a = c.agent!;
      const expected: [string, object | undefined][] = [
        ["/Namespace//cattle-fleet-system", a.namespace],
        ["/ServiceAccount/cattle-fleet-system/fleet-agent", a.serviceAccount],
        ["rbac.authorization.k8s.io/ClusterRole//fleet-agent-cattle-fleet-system", a.clusterRole],
        ["rbac.authorization.k8s.io/ClusterRoleBinding//fleet-agent-cattle-fleet-system", a.clusterRoleBinding],
        ["scheduling.k8s.io/PriorityClass//fleet-agent-cattle-fleet-system", a.priorityClass],
        ["policy/PodDisruptionBudget/cattle-fleet-system/fleet-agent", a.podDisruptionBudget],
        ["apps/Deployment/cattle-fleet-system/fleet-agent", a.deployment],
      ];
      for (const [key, manifest] of expected) expect(objects[key]?.manifest, key).to.deep.include(manifest);
      expect(objects["/Namespace//cattle-fleet-system"].retain).to.equal(RETAIN_REASONS.agentNamespace);
      expect(JSON.stringify(objects), "the token is not among the readable objects").to.not.include("t0ken");
      // The Secret is a property of its own, registered as a secret: the SDK's signature around the value.
      const secret = setup.inputs.secretObjects as Record<string, unknown>;
      expect(secret[SECRET_SIG]).to.equal("1b47061264138c4ac30d75fd1eb44270");
      expect(
        (fromEngineObjects(secret.value as Record<string, EngineObject>) as Objects)["/Secret/cattle-fleet-system/fleet-agent-bootstrap"].manifest.stringData,
      ).to.deep.equal(a.secret.stringData);
      expect(a.secret.stringData).to.deep.equal({ apiServerURL: "https://fleet.example.com", apiServerCA: "", token: "t0ken" });
      expect(
        registrations.filter((r) => r.type.startsWith("kubernetes:") || r.type === "pulumi:providers:kubernetes"),
        "no Kubernetes provider resource",
      ).to.deep.equal([]);
    }
  });

  it("agent.enabled: false leaves only the namespaces; one a bundle uses stays the same object of the set, never deleted", async () => {
    const base = localStack("/tmp/r");
    // The agent in the namespace a bundle deploys into (examples/simple), the case where an owner change must not delete it.
    const config = (enabled: boolean) => ({ ...base, agent: { apiServerURL: "https://fleet.example.com", namespace: "simple", enabled } });
    const setupOf = async (enabled: boolean) =>
      (await runUnderMocks(() => fleetProgram(config(enabled), { cacheRoot, previous: null }))).registrations.find(
        (r) => r.type === "pulumi-fleet:index:ClusterSetup" && r.name === "dev-1",
      )!;
    const on = await setupOf(true);
    const off = await setupOf(false);
    expect(Object.keys(off.inputs.objects as Objects).sort()).to.deep.equal(["/Namespace//helm-app", "/Namespace//simple"]);
    expect(off.inputs.secretObjects).to.equal(undefined);
    // The same key in both: switching the agent off updates the namespace's retain reason, it never leaves the set.
    expect((on.inputs.objects as Objects)["/Namespace//simple"].retain).to.equal(RETAIN_REASONS.agentNamespace);
    expect((off.inputs.objects as Objects)["/Namespace//simple"].retain).to.equal(RETAIN_REASONS.namespace);
  });
});
