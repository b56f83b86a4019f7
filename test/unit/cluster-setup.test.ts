/**
 * A cluster's namespaces and agent as one set (core/desired/setup.ts), and the move from an earlier
 * version's per-object agent and namespace resources (automation/engine/deployed-objects.ts legacySetupsOf).
 */
import { setupAdoptions } from "../../core/migrate/adoptions";
import { DeployedObject } from "../../core/desired/facts";
import { expect } from "chai";
import { clusterSetup } from "../../core/desired/setup";
import { agentObjects } from "../../core/desired/agent";
import { resolveClusterAgents } from "../../core/agent/effective";
import { carriedAccessOf, deployedObjectsOf, legacySetupsOf, StateResource } from "../../automation/engine/deployed-objects";
import { DesiredNamespace } from "../../core/desired/types";
import { localStack } from "../support/fleet-fixtures";
import { RETAIN_REASONS } from "../../core/desired/delete-policy";

const namespace = (name: string, kept: boolean): DesiredNamespace => ({
  name: `c1/${name}`,
  metadata: { name, labels: { "fleet.cattle.io/cluster": "c1", "app.kubernetes.io/managed-by": "pulumi-fleet" } },
  retainOnDelete: kept,
});
const agent = () => {
  const config = { ...localStack("/tmp/r"), agent: { apiServerURL: "https://fleet.example.com", token: "t0ken" } };
  return agentObjects("c1", resolveClusterAgents(config).get("dev-1")!.agent!);
};

describe("a cluster's setup: its namespaces and agent as one set (core/desired/setup.ts)", () => {
  it("holds the namespaces and the agent's objects, the token apart as a secret object, deleted only if still labelled for the cluster", () => {
    const spec = clusterSetup("c1", [namespace("app", true), namespace("tmp", false)], agent())!;
    expect(Object.keys(spec.objects).sort()).to.deep.equal([
      "/Namespace//app",
      "/Namespace//cattle-fleet-system",
      "/Namespace//tmp",
      "/ServiceAccount/cattle-fleet-system/fleet-agent",
      "apps/Deployment/cattle-fleet-system/fleet-agent",
      "rbac.authorization.k8s.io/ClusterRole//fleet-agent-cattle-fleet-system",
      "rbac.authorization.k8s.io/ClusterRoleBinding//fleet-agent-cattle-fleet-system",
    ]);
    expect(Object.keys(spec.secretObjects!)).to.deep.equal(["/Secret/cattle-fleet-system/fleet-agent-bootstrap"]);
    expect(JSON.stringify(spec.objects)).to.not.include("t0ken");
    expect([
      spec.objects["/Namespace//app"].retain,
      spec.objects["/Namespace//tmp"].retain,
      spec.objects["/Namespace//cattle-fleet-system"].retain,
    ]).to.deep.equal([RETAIN_REASONS.namespace, undefined, RETAIN_REASONS.agentNamespace]);
    expect(spec.deletePolicy).to.deep.equal({
      propagation: "background",
      ownerLabels: { "fleet.cattle.io/cluster": "c1", "app.kubernetes.io/managed-by": "pulumi-fleet" },
    });
    expect(spec.timeoutSeconds, "up waits for the agent to be ready").to.equal(600);
  });

  it("its deploymentID follows its objects; without an agent there is no wait; with nothing to create there is no setup", () => {
    const a = clusterSetup("c1", [namespace("app", true)], undefined)!;
    expect(a.timeoutSeconds).to.equal(undefined);
    expect(clusterSetup("c1", [namespace("app", true)], undefined)!.deploymentId).to.equal(a.deploymentId);
    expect(clusterSetup("c1", [namespace("app", false)], undefined)!.deploymentId).to.not.equal(a.deploymentId);
    expect(clusterSetup("c1", [], undefined)).to.equal(undefined);
  });

  it("adopts what an earlier version created for the cluster, with its retain rules; of a Secret only its identity (core/migrate/adoptions.ts)", () => {
    const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "app" } };
    const secret = { apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "app" }, stringData: { token: "t0ken" } };
    const objects = [{ manifest: ns, retain: RETAIN_REASONS.namespace }, { manifest: secret }] as unknown as DeployedObject[];
    expect(
      setupAdoptions(
        new Map([
          ["c1", objects],
          ["c2", []],
        ]),
      ),
    ).to.deep.equal({
      c1: {
        "/Namespace//app": { manifest: ns, retain: RETAIN_REASONS.namespace },
        "/Secret/app/s": { manifest: { apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "app" } } },
      },
    });
    expect(clusterSetup("c1", [namespace("app", true)], undefined)!.adopt, "the desired state adopts nothing: the program adds the migration's").to.equal(
      undefined,
    );
  });
});

describe("the move from an earlier version's agent and namespace resources (automation/engine/deployed-objects.ts)", () => {
  const root = "urn:pulumi:s::pulumi-fleet::pulumi:pulumi:Stack::pulumi-fleet-s";
  const fleet = "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet::fleet";
  const cluster = "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:Cluster::c1";
  const agentUrn = "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:Cluster$pulumi-fleet:index:Agent::c1";
  const child = (type: string, name: string, parent: string, inputs: Record<string, unknown>, retainOnDelete = false): StateResource => ({
    urn: `${parent.replace("::", "$").split("::")[0]}$${type}::${name}`,
    type,
    custom: true,
    parent,
    inputs,
    retainOnDelete,
  });
  const resources: StateResource[] = [
    { urn: root, type: "pulumi:pulumi:Stack", custom: false },
    { urn: fleet, type: "pulumi-fleet:index:Fleet", custom: false, parent: root },
    { urn: cluster, type: "pulumi-fleet:index:Cluster", custom: false, parent: fleet },
    { urn: agentUrn, type: "pulumi-fleet:index:Agent", custom: false, parent: cluster },
    child(
      "kubernetes:core/v1:Namespace",
      "c1/agent/namespace",
      agentUrn,
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "cattle-fleet-system" } },
      true,
    ),
    child("kubernetes:apps/v1:Deployment", "c1/agent/deployment", agentUrn, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "fleet-agent", namespace: "cattle-fleet-system" },
    }),
    child("kubernetes:core/v1:Namespace", "c1/app", cluster, { apiVersion: "v1", kind: "Namespace", metadata: { name: "app", labels: {} } }, true),
    child("kubernetes:core/v1:Namespace", "c1/tmp", cluster, { apiVersion: "v1", kind: "Namespace", metadata: { name: "tmp", labels: {} } }),
  ];

  it("finds each cluster's agent objects and namespaces, with the retain rules they were registered with, to mark retained and adopt", () => {
    const { objects, urns } = legacySetupsOf(resources);
    expect(urns).to.have.length(4);
    expect(objects.get("c1")!.map((o) => [o.manifest.kind, o.manifest.metadata.name, o.retain])).to.deep.equal([
      ["Namespace", "cattle-fleet-system", RETAIN_REASONS.agentNamespace],
      ["Deployment", "fleet-agent", undefined],
      ["Namespace", "app", RETAIN_REASONS.namespace],
      ["Namespace", "tmp", undefined],
    ]);
    expect(legacySetupsOf(resources.slice(0, 4)).urns, "nothing to move").to.deep.equal([]);
  });

  it("a failed deployment keeps the namespaces its cluster's setup created for it, never the agent's", () => {
    const setup: StateResource = {
      urn: `${cluster.replace("::pulumi-fleet:index:Cluster::c1", "::pulumi-fleet:index:Cluster$pulumi-fleet:index:ClusterSetup::c1")}`,
      type: "pulumi-fleet:index:ClusterSetup",
      custom: true,
      parent: cluster,
      inputs: {
        objects: {
          "/Namespace//app": { manifest: { apiVersion: "v1", kind: "Namespace", metadata: { name: "app", labels: {} } }, retain: RETAIN_REASONS.namespace },
          "/Namespace//cattle-fleet-system": {
            manifest: { apiVersion: "v1", kind: "Namespace", metadata: { name: "cattle-fleet-system", labels: {} } },
            retain: RETAIN_REASONS.agentNamespace,
          },
        },
      },
    };
    const pair: StateResource = {
      urn: `${fleet}$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::c1/r/b`.replace(
        fleet,
        "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet",
      ),
      type: "pulumi-fleet:index:BundleDeployment",
      custom: true,
      inputs: {
        deploymentId: "d",
        objects: {
          "/ConfigMap/app/a": { manifest: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "app" } } },
          "/ConfigMap/cattle-fleet-system/b": { manifest: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b", namespace: "cattle-fleet-system" } } },
        },
      },
    };
    const deployed = deployedObjectsOf([...resources.slice(0, 3), setup, pair]);
    expect(deployed.get("c1/r/b")!.namespaces).to.deep.equal([{ name: "c1/app", metadata: { name: "app", labels: {} }, retainOnDelete: true }]);
  });
});

describe("a cluster removed from the stack keeps its access until its pairs are gone (automation/engine/deployed-objects.ts carriedAccessOf)", () => {
  it("carries the stack provider's access for each cluster key a pair or setup in the state names through it, and nothing else", () => {
    const provider = "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi:providers:pulumi-fleet::fleet:s";
    const legacyProvider = "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi:providers:pulumi-fleet::old";
    const access = {
      gone: { clusterIdentifier: "gone", kubeconfig: "k" },
      "gone/as/u": { clusterIdentifier: "gone" },
      unused: { clusterIdentifier: "unused" },
    };
    const pair = (name: string, cluster: string, via = provider): StateResource => ({
      urn: `urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:BundleDeployment::${name}`,
      type: "pulumi-fleet:index:BundleDeployment",
      custom: true,
      provider: `${via}::id1`,
      inputs: { cluster },
    });
    const resources: StateResource[] = [
      { urn: provider, id: "id1", type: "pulumi:providers:pulumi-fleet", custom: true, inputs: { clusters: access } },
      { urn: legacyProvider, id: "id2", type: "pulumi:providers:pulumi-fleet", custom: true, inputs: { clusterIdentifier: "old" } },
      pair("gone/r/a", "gone"),
      pair("gone/r/b", "gone/as/u"),
      pair("old/r/c", "old", legacyProvider),
      {
        urn: "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:ClusterSetup::gone",
        type: "pulumi-fleet:index:ClusterSetup",
        custom: true,
        provider: `${provider}::id1`,
        inputs: { cluster: "gone" },
      },
    ];
    expect(carriedAccessOf(resources)).to.deep.equal({ gone: access.gone, "gone/as/u": access["gone/as/u"] });
  });
});
