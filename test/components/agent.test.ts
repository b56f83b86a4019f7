import { expect } from "chai";
import { fleetProgram } from "../../components/program";
import { desiredState } from "../../core/desired/state";
import { runUnderMocks } from "../support/mock-engine";
import { localStack } from "../support/fleet-fixtures";
import { fakeFacts } from "../support/fake-facts";
import { tempDir } from "../support/git-fixtures";

const cacheRoot = tempDir("pf-cache-");

describe("Agent component (Pulumi mocks)", function () {
  this.timeout(30_000);

  it("registers each cluster's agent objects as core describes them, under the cluster's provider; the token only as a secret", async () => {
    const config = { ...localStack("/tmp/r"), agent: { apiServerURL: "https://fleet.example.com", token: "t0ken", priorityClass: { value: 10 }, podDisruptionBudget: { maxUnavailable: 1 } } };
    const desired = await desiredState(config, fakeFacts(), { cacheRoot });
    const { registrations } = await runUnderMocks(() => fleetProgram(config, { cacheRoot, previous: null }));
    for (const c of desired.clusters) {
      const reg = (role: string) => registrations.find((r) => r.name === `${c.name}/agent/${role}`)!;
      const a = c.agent!;
      const expected: [string, object | undefined][] = [["namespace", a.namespace], ["serviceaccount", a.serviceAccount], ["clusterrole", a.clusterRole],
        ["clusterrolebinding", a.clusterRoleBinding], ["priorityclass", a.priorityClass], ["pdb", a.podDisruptionBudget], ["deployment", a.deployment]];
      for (const [role, manifest] of expected) {
        expect(reg(role).inputs, role).to.deep.include(manifest);
        expect(reg(role).provider, role).to.match(new RegExp(`::${c.name}::${c.name}-id$`));
      }
      expect(reg("clusterrolebinding").dependencies).to.include(reg("clusterrole").urn);
      expect(reg("deployment").dependencies).to.include.members([reg("namespace").urn, reg("serviceaccount").urn, reg("secret").urn]);
      // Registered as a secret: the SDK's secret signature around the value.
      expect(reg("secret").inputs.stringData).to.deep.equal({ "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value: a.secret.stringData });
      expect(a.secret.stringData).to.deep.equal({ apiServerURL: "https://fleet.example.com", apiServerCA: "", token: "t0ken" });
    }
  });
  it("agent.enabled: false registers no agent; the agent's namespace is kept on delete and changes owner through aliases, never deleted", async () => {
    const base = localStack("/tmp/r");
    // The agent in the namespace a bundle deploys into (examples/simple), the case where an owner change must not delete it.
    const config = (enabled: boolean) => ({ ...base, agent: { apiServerURL: "https://fleet.example.com", namespace: "simple", enabled } });
    const on = (await runUnderMocks(() => fleetProgram(config(true), { cacheRoot, previous: null }))).registrations;
    const off = (await runUnderMocks(() => fleetProgram(config(false), { cacheRoot, previous: null }))).registrations;
    expect(off.filter((r) => r.type === "pulumi-fleet:index:Agent" || r.name.includes("/agent/"))).to.deep.equal([]);
    const agentNs = on.find((r) => r.name === "dev-1/agent/namespace")!;
    const clusterNs = off.find((r) => r.name === "dev-1/simple")!;
    expect(agentNs.retainOnDelete).to.equal(true);
    // Each aliases the other: its name, under its parent (the mocks' URNs drop the parents' own parents,
    // so the chain is checked on live clusters, test/e2e/agent-switch.test.ts).
    const aliases = (r: typeof agentNs) => r.aliases.map((a) => JSON.parse(a).spec as { name: string; parenturn: string })
      .map((a) => `${a.parenturn.slice(a.parenturn.lastIndexOf("$") + 1)} > ${a.name}`);
    expect(aliases(clusterNs)).to.deep.equal(["pulumi-fleet:index:Agent::dev-1 > dev-1/agent/namespace"]);
    expect(aliases(agentNs)).to.deep.equal(["pulumi-fleet:index:Cluster::dev-1 > dev-1/simple"]);
  });
});
