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
      const a = c.agent;
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
});
