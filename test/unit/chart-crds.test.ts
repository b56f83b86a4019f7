/**
 * A chart's crds/ through their lifecycle (core/desired/objects.ts, the GitRepo's chartCrds): by default
 * as Helm and Fleet's agent install them, created at the install and never updated (createOnly: the
 * provider's crds.go), a change said in the preview; CreateReplace applies them like any object. Real
 * git, the real renderer, fake facts; live: tools/fleet-provider live_hooks_test.go and
 * test/e2e/chart-crds.test.ts.
 */
import { expect } from "chai";
import { parseStackConfig, StackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { fakeFacts } from "../support/fake-facts";
import { gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { deployedAfter } from "../support/deployed-after";
import { renderStack } from "../support/fleet-fixtures";
import { errorOf } from "../support/errors";

const cacheRoot = tempDir("pf-cache-");
const KEY = "apiextensions.k8s.io/CustomResourceDefinition//widgets.x.example.com";

function fleetOf(repo: string, chartCrds?: "CreateReplace"): StackConfig {
  return renderStack(
    ["c1"],
    [{ ...gitRepoConfig({ name: "t", repo, paths: ["chart"], targets: [{ clusterSelector: {} }] }), ...(chartCrds ? { chartCrds } : {}) }],
  );
}

const crd = (versions: string[]) =>
  "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.x.example.com\n" +
  "spec:\n  group: x.example.com\n  scope: Namespaced\n  names: {kind: Widget, plural: widgets}\n  versions:\n" +
  versions.map((v, i) => `  - {name: ${v}, served: true, storage: ${i === versions.length - 1}, schema: {openAPIV3Schema: {type: object}}}\n`).join("");
const CHART = (versions: string[]) => ({
  "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
  "chart/fleet.yaml": "defaultNamespace: web\n",
  "chart/crds/widget.yaml": crd(versions),
  "chart/templates/w.yaml": `apiVersion: x.example.com/${versions[versions.length - 1]}\nkind: Widget\nmetadata:\n  name: w\n`,
});

describe("a chart's crds/: created as Helm installs them, or replaced as Flux's CreateReplace (core/desired/objects.ts)", function () {
  this.timeout(120_000);

  it("is read from the stack file: Create by default, CreateReplace when asked, anything else refused naming the field", () => {
    const read = (chartCrds?: unknown) =>
      parseStackConfig(
        { gitRepos: [{ name: "t", repo: "https://example.com/r.git", ...(chartCrds === undefined ? {} : { chartCrds }) }] },
        "stacks/Pulumi.test.yaml",
        "/p",
      ).gitRepos[0].chartCrds;
    expect(read()).to.equal(undefined);
    expect(read("Create")).to.equal(undefined);
    expect(read("CreateReplace")).to.equal("CreateReplace");
    expect(errorOf(() => read("Replace"))).to.include('gitRepos[0].chartCrds: must be one of Create, CreateReplace (got "Replace")');
  });

  it("by default each is only created, and a change of it is said, not applied; CreateReplace applies it", async () => {
    const repo = new TestRepo(CHART(["v1"]));
    const first = await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot });
    const [d] = first.deployments;
    expect(d.spec.objects[KEY]).to.include({ createOnly: true, retain: "a chart's crds/ (Helm never deletes them)" });
    expect(d.spec.objects["x.example.com/Widget/web/w"]).not.to.have.property("createOnly");
    const { previous, deployed } = deployedAfter(first);

    repo.commit(CHART(["v1", "v2"]));
    const changed = await desiredState(fleetOf(repo.url()), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(changed.deployments[0].spec.objects[KEY].createOnly).to.equal(true);
    expect(changed.deployments[0].warnings.filter((w) => w.includes("crds/"))).to.deep.equal([
      "bundle t-chart on cluster c1: CustomResourceDefinition widgets.x.example.com changed in the chart's crds/ and is not updated: Helm, and so Fleet's agent, " +
        "applies a chart's crds/ only at its install (the stack file's chartCrds: CreateReplace for this GitRepo applies them at every change, as Flux's upgrade.crds does)",
    ]);

    // A CRD new in a later release is not created either (Helm's upgrade leaves crds/ alone): said too.
    repo.commit({ "chart/crds/gadget.yaml": crd(["v1"]).replaceAll("widget", "gadget").replaceAll("Widget", "Gadget") });
    const added = await desiredState(fleetOf(repo.url()), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(added.deployments[0].warnings.filter((w) => w.includes("is new in the chart's crds/"))).to.have.length(1);
    const replaced = await desiredState(fleetOf(repo.url(), "CreateReplace"), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(replaced.deployments[0].spec.objects[KEY]).not.to.have.property("createOnly");
    expect(replaced.deployments[0].warnings.filter((w) => w.includes("crds/"))).to.deep.equal([]);
  });

  it("an unchanged deployment taken from the state keeps its crds/ only created", async () => {
    const repo = new TestRepo(CHART(["v1"]));
    const first = await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot });
    const { previous, deployed } = deployedAfter(first);
    const again = await desiredState(fleetOf(repo.url()), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(again.deployments[0].spec).to.deep.equal(first.deployments[0].spec);
  });
});
