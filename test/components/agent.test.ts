import { expect } from "chai";
import { deployFleet } from "../../components";
import { StackConfig } from "../../core/config/stack";
import { runUnderMocks, Registration } from "../support/mock-engine";
import { localStack } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

const cacheRoot = tempDir("pf-cache-");
const run = (config: StackConfig) => runUnderMocks(() => deployFleet(config, { cacheRoot, previous: null }));
const agentRegs = (regs: Registration[]) => regs.filter((r) => r.name.includes("/agent/") || r.type === "pulumi-fleet:index:Agent");
const withAgent = (c: StackConfig, global: Record<string, unknown>, perCluster: Record<string, Record<string, unknown>> = {}): StackConfig => ({
  ...c, agent: { apiServerURL: "https://fleet.example.com", ...global }, clusters: c.clusters.map((cl) => (perCluster[cl.name] ? { ...cl, agent: perCluster[cl.name] } : cl)),
});

describe("Agent component (Pulumi mocks)", function () {
  this.timeout(30_000);

  it("one agent per cluster under its provider: fixed names, Recreate, one replica, config hash in the pod template", async () => {
    const { registrations } = await run(localStack("/tmp/r"));
    const deployments = registrations.filter((r) => r.type === "kubernetes:apps/v1:Deployment" && r.name.includes("/agent/"));
    expect(deployments.map((d) => d.name)).to.deep.equal(["dev-1/agent/deployment", "dev-2/agent/deployment", "prod-1/agent/deployment"]);
    const d = deployments[0];
    expect(d.provider).to.match(/::dev-1::dev-1-id$/);
    const spec = d.inputs.spec as { replicas: number; strategy: { type: string }; revisionHistoryLimit: number; template: { metadata: { annotations: Record<string, string> }; spec: { containers: { image: string }[] } } };
    expect(spec).to.include({ replicas: 1, revisionHistoryLimit: 2 });
    expect(spec.strategy).to.deep.equal({ type: "Recreate" });
    expect(spec.template.spec.containers[0].image).to.equal("rancher/fleet-agent:v0.13.1");
    expect(Object.keys(spec.template.metadata.annotations)).to.deep.equal(["pulumi-fleet.io/agent-config-hash"]);
    expect((d.inputs.metadata as { name: string; namespace: string })).to.include({ name: "fleet-agent", namespace: "cattle-fleet-system" });
  });

  it("the same effective config reached from another source registers byte-identical inputs", async () => {
    const a = await run(withAgent(localStack("/tmp/r"), { env: { B: "2", A: "1" }, resources: { requests: { cpu: "0.5" } } }));
    const b = await run(withAgent(localStack("/tmp/r"), { env: { Z: "global-only" } }, Object.fromEntries(["dev-1", "dev-2", "prod-1"].map((n) => [n, { env: { A: "1", B: "2" }, resources: { requests: { cpu: "500m" } } }]))));
    const ia = agentRegs(a.registrations), ib = agentRegs(b.registrations);
    expect(ib.map((r) => r.urn)).to.deep.equal(ia.map((r) => r.urn));
    for (const [i, r] of ib.entries()) expect(JSON.stringify(r.inputs), r.urn).to.equal(JSON.stringify(ia[i].inputs));
  });

  it("one effective change: only the Deployment's pod template (that field and the hash) changes", async () => {
    const a = await run(withAgent(localStack("/tmp/r"), { env: { A: "1" } }));
    const b = await run(withAgent(localStack("/tmp/r"), { env: { A: "2" } }));
    const changed = agentRegs(b.registrations).filter((r) => JSON.stringify(r.inputs) !== JSON.stringify(a.byUrn.get(r.urn)!.inputs)).map((r) => r.name);
    expect(changed).to.deep.equal(["dev-1/agent/deployment", "dev-2/agent/deployment", "prod-1/agent/deployment"]);
  });

  it("a platform version bump moves every non-pinned agent's image and leaves pinned ones alone", async () => {
    const base = withAgent(localStack("/tmp/r"), {}, { "prod-1": { imageTag: "v0.13.1" } });
    const a = await run(base);
    const b = await run({ ...base, fleetVersion: "0.13.2" });
    const image = (r: { byUrn: Map<string, Registration>; registrations: Registration[] }, cluster: string) =>
      ((r.registrations.find((x) => x.name === `${cluster}/agent/deployment`)!.inputs.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0].image);
    expect(["dev-1", "dev-2", "prod-1"].map((c) => image(b, c))).to.deep.equal(["rancher/fleet-agent:v0.13.2", "rancher/fleet-agent:v0.13.2", "rancher/fleet-agent:v0.13.1"]);
    const changed = agentRegs(b.registrations).filter((r) => JSON.stringify(r.inputs) !== JSON.stringify(a.byUrn.get(r.urn)!.inputs)).map((r) => r.name);
    expect(changed).to.deep.equal(["dev-1/agent/deployment", "dev-2/agent/deployment"]);
  });
});
