import { expect } from "chai";
import { Field } from "../../core/config/reader";
import { parseAgentSettings } from "../../core/agent/settings";
import { resolveAgent } from "../../core/agent/effective";
import { clusterOwnValues } from "../../core/agent/kubeconfig";
import { canonicalPem, canonicalQuantity } from "../../core/agent/canonical";

const CA = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\nZmFrZQ==\n-----END CERTIFICATE-----\n";
const settings = (raw: unknown, path = "agent") => parseAgentSettings(new Field(raw, path, { file: "stacks/Pulumi.test.yaml" }));
const kubeconfig = (server: string, ca: string) => `apiVersion: v1
current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "${server}", certificate-authority-data: ${Buffer.from(ca).toString("base64")}}}]
`;

describe("agent effective configuration", () => {
  it("canonical quantities and PEM", () => {
    expect(["0.5", "500m", "1000m", "1", "1024Mi", "1Gi", "1e3", "1k", "1.5Gi", "100M", "0"].map(canonicalQuantity))
      .to.deep.equal(["500m", "500m", "1", "1", "1Gi", "1Gi", "1k", "1k", "1.5Gi", "100M", "0"]);
    expect(canonicalPem(CA.replace(/\n/g, "\r\n") + "\r\n\r\n")).to.equal(CA);
    expect(canonicalPem("  " + CA.replace(/\n/g, "  \n"))).to.equal(CA);
  });

  it("the same effective config from different sources is byte-identical", () => {
    const fromGlobal = resolveAgent("c1", settings({ apiServerURL: "https://api:6443", apiServerCA: CA, env: { B: "2", A: "1" },
      tolerations: [{ key: "b", operator: "Exists" }, { key: "a", operator: "Equal", value: "x" }], resources: { requests: { cpu: "0.5", memory: "1024Mi" } } }), {}, {}, "0.13.1");
    const fromCluster = resolveAgent("c1", settings({ env: { C: "ignored" } }), settings({
      apiServerURL: "", // empty falls back... to nothing here, the kubeconfig carries it
      env: { A: "1", B: "2" }, tolerations: [{ operator: "Equal", value: "x", key: "a" }, { key: "b", operator: "Exists" }],
      resources: { requests: { memory: "1Gi", cpu: "500m" } },
    }, "clusters[0].agent"), clusterOwnValues(kubeconfig("https://api:6443", CA.replace(/\n/g, "\r\n"))), "v0.13.1");
    expect(JSON.stringify(fromCluster.config)).to.equal(JSON.stringify(fromGlobal.config));
    expect(fromCluster.hash).to.equal(fromGlobal.hash);
  });

  it("a value the cluster carries itself wins over the global one (fleet#3061)", () => {
    const global = settings({ apiServerURL: "https://rancher.example.com" });
    const own = clusterOwnValues(kubeconfig("https://10.53.0.1:443", CA));
    const a = resolveAgent("local", global, {}, own, "0.13.1");
    expect(a.config.apiServerURL).to.equal("https://10.53.0.1:443");
    // Changing only the global URL does not touch a cluster that carries its own: same hash.
    expect(resolveAgent("local", settings({ apiServerURL: "https://moved.example.com" }), {}, own, "0.13.1").hash).to.equal(a.hash);
  });

  it("each single effective change changes exactly that field", () => {
    const base = resolveAgent("c1", settings({ env: { A: "1" } }), {}, {}, "0.13.1");
    const changed = resolveAgent("c1", settings({ env: { A: "2" } }), {}, {}, "0.13.1");
    const diff = Object.keys(base.config).filter((k) => JSON.stringify((base.config as never)[k]) !== JSON.stringify((changed.config as never)[k]));
    expect(diff).to.deep.equal(["env"]);
    expect(changed.hash).to.not.equal(base.hash);
  });

  it("the image follows the platform version unless pinned; a per-cluster pin wins", () => {
    expect(resolveAgent("c1", {}, {}, {}, "0.13.1").config.image).to.equal("rancher/fleet-agent:v0.13.1");
    expect(resolveAgent("c1", {}, {}, {}, "0.13.2").config.image).to.equal("rancher/fleet-agent:v0.13.2");
    const pinned = resolveAgent("c1", {}, settings({ imageTag: "v0.12.9" }), {}, "0.13.2");
    expect([pinned.config.image, pinned.pinned]).to.deep.equal(["rancher/fleet-agent:v0.12.9", true]);
    // Pinning the tag that already runs is not a change.
    expect(resolveAgent("c1", {}, settings({ imageTag: "v0.13.1" }), {}, "0.13.1").hash).to.equal(resolveAgent("c1", {}, {}, {}, "0.13.1").hash);
    expect(resolveAgent("c1", settings({ privateRepoURL: "registry.example.com/" }), {}, {}, "0.13.1").config.image).to.equal("registry.example.com/rancher/fleet-agent:v0.13.1");
    expect(() => resolveAgent("c1", {}, {}, {}, undefined)).to.throw("cluster c1: fleetVersion: the agent image tag follows fleetVersion, which is not set");
  });

  it("invalid settings are errors naming the file and field", () => {
    expect(() => settings({ checkinInterval: "15 minutes" })).to.throw('stacks/Pulumi.test.yaml: agent.checkinInterval: must be a Go duration such as 15m or 1h30m (got "15 minutes")');
    expect(() => settings({ tlsMode: "loose" }, "clusters[2].agent")).to.throw("stacks/Pulumi.test.yaml: clusters[2].agent.tlsMode: must be one of system-store, strict");
    expect(() => settings({ labels: { owner: "system:kube-controller-manager" } })).to.throw("agent.labels.owner: invalid label");
    expect(() => settings({ resources: { limits: { memory: "lots" } } })).to.throw('agent.resources.limits.memory: invalid quantity "lots"');
    expect(() => settings({ podDisruptionBudget: { minAvailable: "1", maxUnavailable: "1" } })).to.throw("set exactly one of minAvailable and maxUnavailable");
    expect(() => settings({ imageTage: "v1" })).to.throw("agent.imageTage: unknown field");
    expect(() => settings({ podDisruptionBudget: { maxUnavailable: "one" } })).to.throw('agent.podDisruptionBudget.maxUnavailable: must be a non-negative integer or a percentage such as "50%" (got "one")');
  });

  it("a PDB count is a number however it is written (the API server rejects \"1\" as a string); percentages stay strings", () => {
    const hashOf = (pdb: unknown) => resolveAgent("c1", settings({ podDisruptionBudget: pdb }), {}, {}, "0.13.1");
    expect(hashOf({ maxUnavailable: "1" }).config.podDisruptionBudget).to.deep.equal({ maxUnavailable: 1 });
    expect(hashOf({ maxUnavailable: "1" }).hash).to.equal(hashOf({ maxUnavailable: 1 }).hash);
    expect(hashOf({ minAvailable: "50%" }).config.podDisruptionBudget).to.deep.equal({ minAvailable: "50%" });
  });
});
