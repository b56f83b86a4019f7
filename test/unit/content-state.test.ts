/**
 * The program's reuse of the state (automation/engine/deployed-objects.ts, read by core/desired/from-state.ts
 * deployedAsBefore) when each render is kept once: a pair in the state names its BundleContent, whose
 * manifests, with the pair's owner labels, are its objects, so an unchanged deployment is not rendered
 * again; a pair whose content is missing is never taken as deployed as before.
 */
import { expect } from "chai";
import { contentsIn, deployedObjectsOf, StateResource } from "../../automation/engine/deployed-objects";
import { contentForm, pairObjects, registeredSet, toEngineObjects } from "../../core/model/pair";
import { heldObjects, heldSpec } from "../../core/desired/held";
import { DeploymentRecord } from "../../core/desired/records";

const owner = { "fleet.cattle.io/repo-name": "r", "fleet.cattle.io/bundle-name": "b", "fleet.cattle.io/cluster": "c1" };
const manifest = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "app", labels: { team: "x", ...owner } }, data: { k: "v" } };
const objects = pairObjects([{ key: "/ConfigMap/app/a", manifest, retain: "kept" }]);
const form = contentForm(objects, owner)!;
const content: StateResource = {
  urn: `urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:BundleContent::${form.content}`,
  type: "pulumi-fleet:index:BundleContent",
  custom: true,
  inputs: { objects: form.manifests },
};
const pair = (name: string): StateResource => ({
  urn: `urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:BundleDeployment::${name}`,
  type: "pulumi-fleet:index:BundleDeployment",
  custom: true,
  inputs: { deploymentId: "d:1", cluster: "c1", content: form.content, objects: form.objects, deletePolicy: { propagation: "background", ownerLabels: owner } },
  outputs: { appliedDeploymentId: "d:1", state: "Ready" },
});

describe("the state's contents, read back for the program (deployed-objects.ts)", () => {
  it("a pair's objects are its content's manifests with its owner labels: what it applied", () => {
    expect(contentsIn([content]).get(form.content)).to.deep.equal(form.manifests);
    const deployed = deployedObjectsOf([content, pair("c1/r/b")]).get("c1/r/b")!;
    expect(deployed.appliedDeploymentId).to.equal("d:1");
    expect(deployed.objects).to.deep.equal([{ manifest, retain: "kept" }]);
    expect(deployed.spec!.objects).to.deep.equal(objects);
    expect(deployed.spec, "the content's digest is the component's to register again").to.not.have.property("content");
  });

  it("a pair whose content is not in the state keeps its objects' identities and is not taken as deployed as before", () => {
    const deployed = deployedObjectsOf([pair("c1/r/b")]).get("c1/r/b")!;
    expect(deployed.appliedDeploymentId).to.equal(undefined);
    expect(deployed.objects.map((o) => o.manifest)).to.deep.equal([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "app" } }]);
  });
});

describe("a held pair whose content is not in the state (held.ts heldSpec, pair.ts registeredSet)", () => {
  const record = { gitRepo: "r", bundle: "b", cluster: "c1", deploymentId: "d:1", commit: "c0ffee" } as unknown as DeploymentRecord;

  it("registers the inputs the state holds (its content and digests), not its objects' identities as manifests", () => {
    const state = pair("c1/r/b");
    const deployed = deployedObjectsOf([state]).get("c1/r/b")!;
    const spec = heldSpec(record, deployed, heldObjects(deployed));
    const registered = registeredSet(spec, true);
    expect(registered.content).to.equal(form.content);
    expect(registered.manifests, "no BundleContent is registered from identities").to.equal(undefined);
    expect({ ...spec, objects: toEngineObjects(registered.objects), content: registered.content }).to.deep.equal(state.inputs);
  });

  it("a pair whose content is there registers its render kept apart, as before", () => {
    const deployed = deployedObjectsOf([content, pair("c1/r/b")]).get("c1/r/b")!;
    const registered = registeredSet(heldSpec(record, deployed, heldObjects(deployed)), true);
    expect(registered).to.deep.equal(form);
  });
});
