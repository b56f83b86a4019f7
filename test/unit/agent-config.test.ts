import { expect } from "chai";
import { Field } from "../../core/config/reader";
import { parseAgentSettings } from "../../core/config/agent-settings";
import { resolveAgent, resolveAgents } from "../../core/agent/effective";
import { StackConfig } from "../../core/config/stack";
import { canonicalPem, canonicalQuantity } from "../../core/agent/canonical";

const CA = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\nZmFrZQ==\n-----END CERTIFICATE-----\n";
const settings = (raw: unknown, path = "agent") => parseAgentSettings(new Field(raw, path, { file: "stacks/Pulumi.test.yaml" }));
/** Every agent needs the management endpoint; most cases set it globally. */
const MGMT = { apiServerURL: "https://fleet.example.com" };
const withMgmt = (raw: Record<string, unknown> = {}) => settings({ ...MGMT, ...raw });

describe("agent effective configuration", () => {
  it("canonical quantities and PEM", () => {
    expect(["0.5", "500m", "1000m", "1", "1024Mi", "1Gi", "1e3", "1k", "1.5Gi", "100M", "0"].map(canonicalQuantity)).to.deep.equal([
      "500m",
      "500m",
      "1",
      "1",
      "1Gi",
      "1Gi",
      "1k",
      "1k",
      "1.5Gi",
      "100M",
      "0",
    ]);
    expect(canonicalPem(CA.replace(/\n/g, "\r\n") + "\r\n\r\n")).to.equal(CA);
    expect(canonicalPem("  " + CA.replace(/\n/g, "  \n"))).to.equal(CA);
  });

  it("the same effective config from different sources is byte-identical", () => {
    const fromGlobal = resolveAgent(
      "c1",
      withMgmt({
        apiServerURL: "https://api:6443",
        apiServerCA: CA,
        env: { B: "2", A: "1" },
        tolerations: [
          { key: "b", operator: "Exists" },
          { key: "a", operator: "Equal", value: "x" },
        ],
        resources: { requests: { cpu: "0.5", memory: "1024Mi" } },
      }),
      {},
      "0.13.1",
    );
    const fromCluster = resolveAgent(
      "c1",
      withMgmt({ env: { C: "ignored" }, apiServerCA: "" }),
      settings(
        {
          apiServerURL: "https://api:6443",
          apiServerCA: CA.replace(/\n/g, "\r\n"),
          env: { A: "1", B: "2" },
          tolerations: [
            { operator: "Equal", value: "x", key: "a" },
            { key: "b", operator: "Exists" },
          ],
          resources: { requests: { memory: "1Gi", cpu: "500m" } },
        },
        "clusters[0].agent",
      ),
      "v0.13.1",
    );
    expect(JSON.stringify(fromCluster.config)).to.equal(JSON.stringify(fromGlobal.config));
    expect(fromCluster.hash).to.equal(fromGlobal.hash);
  });

  it("API server URL and CA: the cluster's own setting when non-empty, then the global one, else an error (Fleet's precedence)", () => {
    const global = settings({ apiServerURL: "https://rancher.example.com", apiServerCA: CA });
    const own = settings({ apiServerURL: "https://rancher-eu.example.com" }, "clusters[0].agent");
    expect(resolveAgent("eu", global, own, "0.13.1").config).to.include({ apiServerURL: "https://rancher-eu.example.com", apiServerCA: CA });
    expect(resolveAgent("eu", global, settings({ apiServerURL: "" }, "clusters[0].agent"), "0.13.1").config.apiServerURL).to.equal(
      "https://rancher.example.com",
    );
    // No CA anywhere is allowed (the agent then trusts the system store), as in Fleet.
    expect(resolveAgent("eu", withMgmt(), {}, "0.13.1").config.apiServerCA).to.equal("");
    expect(() => resolveAgent("eu", settings({ apiServerCA: CA }), {}, "0.13.1")).to.throw(
      "cluster eu: agent.apiServerURL: missing apiServerURL in fleet config: set agent.apiServerURL (or this cluster's agent.apiServerURL)",
    );
  });

  it("the cluster's kubeconfig (the runner's route to it) is not an agent setting: rotating its server or CA changes nothing", () => {
    const kubeconfig = (server: string) =>
      `apiVersion: v1\nclusters: [{name: k, cluster: {server: "${server}"}}]\ncontexts: [{name: c, context: {cluster: k}}]\ncurrent-context: c\n`;
    const config = (server: string) =>
      ({
        file: "stacks/Pulumi.test.yaml",
        fleetVersion: "0.13.1",
        agent: MGMT,
        clusters: [{ name: "c1", kubeconfig: kubeconfig(server) }],
      }) as unknown as StackConfig;
    const before = resolveAgents(config("https://10.0.0.1:6443")).get("c1")!;
    const after = resolveAgents(config("https://lb.example.com:443")).get("c1")!;
    expect(after.hash).to.equal(before.hash);
    expect(after.config.apiServerURL).to.equal("https://fleet.example.com");
    expect(() => resolveAgents({ ...config("https://10.0.0.1:6443"), agent: {} })).to.throw(
      "stacks/Pulumi.test.yaml cluster c1: agent.apiServerURL: missing apiServerURL",
    );
  });

  it("each single effective change changes exactly that field", () => {
    const base = resolveAgent("c1", withMgmt({ env: { A: "1" } }), {}, "0.13.1");
    const changed = resolveAgent("c1", withMgmt({ env: { A: "2" } }), {}, "0.13.1");
    const diff = Object.keys(base.config).filter((k) => JSON.stringify((base.config as never)[k]) !== JSON.stringify((changed.config as never)[k]));
    expect(diff).to.deep.equal(["env"]);
    expect(changed.hash).to.not.equal(base.hash);
  });

  it("the image follows the platform version unless pinned; a per-cluster pin wins", () => {
    expect(resolveAgent("c1", withMgmt(), {}, "0.13.1").config.image).to.equal("rancher/fleet-agent:v0.13.1");
    expect(resolveAgent("c1", withMgmt(), {}, "0.13.2").config.image).to.equal("rancher/fleet-agent:v0.13.2");
    const pinned = resolveAgent("c1", withMgmt(), settings({ imageTag: "v0.12.9" }), "0.13.2");
    expect([pinned.config.image, pinned.pinned]).to.deep.equal(["rancher/fleet-agent:v0.12.9", true]);
    // Pinning the tag that already runs is not a change.
    expect(resolveAgent("c1", withMgmt(), settings({ imageTag: "v0.13.1" }), "0.13.1").hash).to.equal(resolveAgent("c1", withMgmt(), {}, "0.13.1").hash);
    expect(resolveAgent("c1", withMgmt({ privateRepoURL: "registry.example.com/" }), {}, "0.13.1").config.image).to.equal(
      "registry.example.com/rancher/fleet-agent:v0.13.1",
    );
    expect(() => resolveAgent("c1", withMgmt(), {}, undefined)).to.throw(
      "cluster c1: fleetVersion: the agent image tag follows fleetVersion, which is not set",
    );
  });

  it("invalid settings are errors naming the file and field", () => {
    expect(() => settings({ checkinInterval: "15 minutes" })).to.throw(
      'stacks/Pulumi.test.yaml: agent.checkinInterval: must be a Go duration such as 15m or 1h30m (got "15 minutes")',
    );
    expect(() => settings({ tlsMode: "loose" }, "clusters[2].agent")).to.throw(
      "stacks/Pulumi.test.yaml: clusters[2].agent.tlsMode: must be one of system-store, strict",
    );
    expect(() => settings({ labels: { owner: "system:kube-controller-manager" } })).to.throw("agent.labels.owner: invalid label");
    expect(() => settings({ resources: { limits: { memory: "lots" } } })).to.throw('agent.resources.limits.memory: invalid quantity "lots"');
    expect(() => settings({ podDisruptionBudget: { minAvailable: "1", maxUnavailable: "1" } })).to.throw("set exactly one of minAvailable and maxUnavailable");
    expect(() => settings({ imageTage: "v1" })).to.throw("agent.imageTage: unknown field");
    expect(() => settings({ podDisruptionBudget: { maxUnavailable: "one" } })).to.throw(
      'agent.podDisruptionBudget.maxUnavailable: must be a non-negative integer or a percentage such as "50%" (got "one")',
    );
  });

  it('a PDB count is a number however it is written (the API server rejects "1" as a string); percentages stay strings', () => {
    const hashOf = (pdb: unknown) => resolveAgent("c1", withMgmt({ podDisruptionBudget: pdb }), {}, "0.13.1");
    expect(hashOf({ maxUnavailable: "1" }).config.podDisruptionBudget).to.deep.equal({ maxUnavailable: 1 });
    expect(hashOf({ maxUnavailable: "1" }).hash).to.equal(hashOf({ maxUnavailable: 1 }).hash);
    expect(hashOf({ minAvailable: "50%" }).config.podDisruptionBudget).to.deep.equal({ minAvailable: "50%" });
  });
});
