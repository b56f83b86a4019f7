import { expect } from "chai";
import { needsSecrets, stateOf, StateResource } from "../../automation/engine/deployed-objects";
import { toEngineObjects } from "../../core/model/pair";

// A secret as `pulumi stack export` (without --show-secrets) shows it.
const cipher = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "v1:abc" };
const provider: StateResource = {
  urn: "urn:pulumi:s::p::pulumi:providers:pulumi-fleet::fleet:s",
  type: "pulumi:providers:pulumi-fleet",
  id: "1",
  custom: true,
  inputs: { clusters: cipher },
};
const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: "app" } };
const setup = (cluster: string): StateResource => ({
  urn: `urn:pulumi:s::p::pulumi-fleet:index:ClusterSetup::${cluster}`,
  type: "pulumi-fleet:index:ClusterSetup",
  custom: true,
  provider: `${provider.urn}::1`,
  inputs: { cluster, objects: toEngineObjects({ "/Namespace//app": { manifest: namespace } }), secretObjects: cipher },
});
const pair = (cluster: string, objects: unknown): StateResource => ({
  urn: `urn:pulumi:s::p::pulumi-fleet:index:BundleDeployment::${cluster}/r/b`,
  type: "pulumi-fleet:index:BundleDeployment",
  custom: true,
  provider: `${provider.urn}::1`,
  inputs: { cluster, deploymentId: "d", objects },
});
const known =
  (...names: string[]) =>
  async () =>
    new Set(names);

describe("reading the state: decrypted only when the operation needs a secret (automation/engine/deployed-objects.ts)", () => {
  it("a cluster's setup secrets and the access of configured clusters are not needed", async () => {
    const resources = [provider, setup("c1"), pair("c1", toEngineObjects({}))];
    expect(await needsSecrets(resources, known("c1"))).to.equal(false);
    // Read without decrypting: the setup's namespaces are there, its secret objects and the access untouched.
    const state = stateOf({ deployment: { resources } });
    expect(state.access).to.deep.equal({});
    expect(state.deployed.get("c1/r/b")?.appliedDeploymentId).to.equal(undefined);
  });

  it("a deployment holding a secret, a secret output, a cluster no longer configured, or clusters not known, are", async () => {
    expect(await needsSecrets([provider, pair("c1", cipher)], known("c1"))).to.equal(true);
    expect(await needsSecrets([{ urn: "urn:pulumi:s::p::pulumi:pulumi:Stack::p-s", type: "pulumi:pulumi:Stack", outputs: { x: cipher } }], known())).to.equal(
      true,
    );
    expect(await needsSecrets([provider, setup("c1"), setup("gone")], known("c1"))).to.equal(true);
    expect(await needsSecrets([provider, setup("c1/as/deployer")], known("c1"))).to.equal(false);
    expect(await needsSecrets([provider, setup("c1")], async () => undefined)).to.equal(true);
  });
});
