/**
 * The one migration of a stack's state (core/migrate): each earlier layout, as the versions that wrote
 * it left it (test/fixtures/migrate/, shaped after what test/e2e/upgrade-from-previous.test.ts deploys
 * with those versions), is recognised and moved; a current state is left as it is.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { CURRENT_LAYOUT, LAYOUTS, layoutOf, outputsShowEarlierLayout } from "../../core/migrate/layouts";
import { migrationNote, planMigration } from "../../core/migrate/migrate";
import { ExportedState, MOVED_FROM_PROVIDER, StateResource } from "../../core/migrate/state-shape";
import { RETAIN_REASONS } from "../../core/desired/delete-policy";
import { needsKubernetesProvider } from "../../automation/engine/toolchain";
import { deployedObjectsOf, legacySetupsOf } from "../../automation/engine/deployed-objects";
import { pairAdoptions, retiringPairs } from "../../core/migrate/adoptions";

const fixture = (name: string): ExportedState => JSON.parse(fs.readFileSync(path.join(__dirname, "../fixtures/migrate", `${name}.json`), "utf8"));
const resources = (s: ExportedState): StateResource[] => s.deployment?.resources ?? [];
const names = (urns: string[]) => urns.map((u) => u.slice(u.lastIndexOf("::") + 2));
const c1 = { configured: new Set(["c1"]) };

describe("the state's migration (core/migrate)", () => {
  it("numbers the layouts in order, the current one last", () => {
    expect(LAYOUTS.map((l) => l.version)).to.deep.equal([1, 2, 3, 4]);
    expect(CURRENT_LAYOUT).to.equal(4);
  });

  it("recognises each earlier layout by its shape, and a new or current state as current", () => {
    expect(layoutOf(resources(fixture("layout-1-chart-components")))).to.equal(1);
    expect(layoutOf(resources(fixture("layout-2-per-object")))).to.equal(2);
    expect(layoutOf(resources(fixture("layout-2-interrupted")))).to.equal(2);
    expect(layoutOf(resources(fixture("layout-3-pairs-without-gitrepo")))).to.equal(3);
    expect(layoutOf(resources(fixture("layout-4-current")))).to.equal(4);
    expect(layoutOf([])).to.equal(4);
  });

  it("layout 1: the objects under the Kubernetes provider's Chart and Directory components move into their pairs, the agent and namespaces into the ClusterSetup", () => {
    const m = planMigration(fixture("layout-1-chart-components"), c1);
    expect([m.from, m.to]).to.deep.equal([1, 4]);
    expect(m.steps.map((s) => [s.into, names(s.urns)])).to.deep.equal([
      [
        "pairs",
        ["c1/helm-app:helm-app/settings", "c1/kustomize:kustomize/settings", "c1/simple/core:ConfigMap:simple:cfg", "c1/simple/core:Service:simple:svc"],
      ],
      ["setups", ["c1-agent-ns", "c1-agent-sa", "c1-agent", "c1/simple"]],
    ]);
  });

  it("layout 2: makes exactly the moving resources state-only, on clusters still configured, and drops the Kubernetes providers nothing uses; the rest is unchanged", () => {
    const before = fixture("layout-2-per-object");
    const copy = JSON.parse(JSON.stringify(before));
    const m = planMigration(before, c1);
    expect(before, "the input is not mutated").to.deep.equal(copy);
    expect(m.moving).to.have.length(6);
    const after = new Map(resources(m.state).map((r) => [r.urn, r]));
    for (const r of resources(before)) {
      const moved = after.get(r.urn);
      if (r.type === "pulumi:providers:kubernetes") {
        // c1's objects all moved: its providers (its own, and the one applying as a user) go; the removed cluster's stays, to delete its objects as its removal says.
        expect(moved === undefined, r.urn).to.equal(!r.urn.endsWith("::gone"));
      } else if (m.moving.includes(r.urn)) {
        const { id: _id, provider, ...rest } = r;
        expect(moved, r.urn).to.deep.equal({ ...rest, custom: false, outputs: { ...r.outputs, [MOVED_FROM_PROVIDER]: provider } });
      } else {
        expect(moved, r.urn).to.deep.equal(r);
        if (r.urn.includes("::gone")) expect(m.moving, r.urn).to.not.include(r.urn);
      }
    }
    expect(
      resources(m.state)
        .filter((r) => r.type === "pulumi:providers:kubernetes")
        .map((r) => r.urn),
    ).to.deep.equal(["urn:pulumi:upgrade::pulumi-fleet::pulumi:providers:kubernetes::gone"]);
  });

  it("every earlier layout on configured clusters: the migrated state holds no Kubernetes provider, so the engine needs no Kubernetes plugin", () => {
    for (const name of ["layout-1-chart-components", "layout-2-interrupted", "layout-3-pairs-without-gitrepo"]) {
      const after = resources(planMigration(fixture(name), c1).state);
      expect(
        after.filter((r) => r.custom && r.type.startsWith("kubernetes:")).map((r) => r.urn),
        name,
      ).to.deep.equal([]);
      expect(needsKubernetesProvider(after), name).to.equal(false);
      const referenced = after.map((r) => r.provider).filter((p): p is string => !!p);
      for (const ref of referenced)
        expect(
          after.map((r) => r.urn),
          `${name}: ${ref}`,
        ).to.include(ref.slice(0, ref.lastIndexOf("::")));
    }
  });

  it("layout 2: hands each configured cluster's agent and namespace objects to its ClusterSetup, with their retain rules, read alike from the migrated state", () => {
    const m = planMigration(fixture("layout-2-per-object"), c1);
    expect(planMigration(m.state, c1).setups, "an interrupted move reads the same").to.deep.equal(m.setups);
    expect([...m.setups.keys()]).to.deep.equal(["c1"]);
    expect(m.setups.get("c1")!.map((o) => [o.manifest.kind, o.manifest.metadata.name, o.retain ?? null])).to.deep.equal([
      ["Namespace", "cattle-fleet-system", RETAIN_REASONS.agentNamespace],
      ["ServiceAccount", "fleet-agent", null],
      ["Deployment", "fleet-agent", null],
      ["Namespace", "simple", RETAIN_REASONS.namespace],
    ]);
  });

  it("the program's inputs read from a migrated state are those read from the state before (an up interrupted after the import)", () => {
    for (const name of ["layout-1-chart-components", "layout-2-per-object", "layout-3-pairs-without-gitrepo"]) {
      const before = resources(fixture(name));
      const migrated = planMigration(fixture(name), c1).state;
      const after = resources(migrated);
      expect(resources(planMigration(migrated, c1).state), `${name}: migrated again`).to.deep.equal(after);
      // Layout 3's pair is read under its name now; the per-object layouts' components keep their names.
      if (name.startsWith("layout-3")) expect([...deployedObjectsOf(after).keys()], name).to.deep.equal(["c1/examples/simple"]);
      else expect(deployedObjectsOf(after), name).to.deep.equal(deployedObjectsOf(before));
      expect(legacySetupsOf(after), name).to.deep.equal(legacySetupsOf(before));
    }
    // The user a bundle was applied as, which its provider's name said, is kept with the objects.
    const after = deployedObjectsOf(resources(planMigration(fixture("layout-2-per-object"), c1).state));
    expect(after.get("c1/examples/simple")?.account).to.equal("system:serviceaccount:apps:deployer");
  });

  it("an interrupted move (the marks of a failed up are there) is finished: the same steps, and nothing new to import where every mark is set", () => {
    const interrupted = fixture("layout-2-interrupted");
    const m = planMigration(interrupted, c1);
    expect(m.steps.map((s) => s.into)).to.deep.equal(["pairs", "setups"]);
    const again = planMigration(m.state, c1);
    expect(again.moving).to.deep.equal(m.moving);
    expect(again.state, "a migrated state migrates to itself").to.equal(m.state);
  });

  it("layout 3: the agents and namespaces move; its BundleDeployments are renamed in the state, under their GitRepo, and nothing else of them changes", () => {
    const before = fixture("layout-3-pairs-without-gitrepo");
    const m = planMigration(before, c1);
    expect(m.from).to.equal(3);
    expect(m.steps.map((s) => s.into)).to.deep.equal(["setups"]);
    const pair = resources(m.state).find((r) => r.type === "pulumi-fleet:index:BundleDeployment")!;
    const old = resources(before).find((r) => r.type === "pulumi-fleet:index:BundleDeployment")!;
    expect(pair).to.deep.equal({ ...old, urn: old.urn.replace(/::c1\/simple$/, "::c1/examples/simple") });
    expect([...m.renames]).to.deep.equal([[old.urn, pair.urn]]);
    expect(m.aliases).to.deep.equal({ "c1/examples/simple": "c1/simple" });
    expect(layoutOf(resources(m.state).filter((r) => !r.type.startsWith("kubernetes:") && r.type !== "pulumi:providers:kubernetes"))).to.equal(4);
  });

  it("a plain `pulumi up` tells an earlier layout from the outputs it reads: records without deploymentStates, or keyed without their GitRepo", () => {
    const record = { deploymentId: "s-1:a", gitRepo: "g" };
    expect(outputsShowEarlierLayout({ "c/g/b": record }, { "c/g/b": { state: "Ready" } }), "current").to.equal(false);
    expect(outputsShowEarlierLayout(undefined, undefined), "a new stack").to.equal(false);
    expect(outputsShowEarlierLayout({ "c/g/b": record }, undefined), "layouts 1 and 2: no deploymentStates").to.equal(true);
    expect(outputsShowEarlierLayout({ "c/b": record }, { "c/b": { state: "Ready" } }), "layout 3: keys without the GitRepo").to.equal(true);
  });

  it("the pairs' adoptions: each earlier deployment's objects, with their retain rules; those no longer deployed retire on configured clusters not left out", () => {
    const deployed = deployedObjectsOf(resources(planMigration(fixture("layout-2-per-object"), c1).state));
    const pairs = pairAdoptions(deployed);
    const earlier = [...deployed].filter(([, d]) => d.earlier).map(([key]) => key);
    expect(Object.keys(pairs)).to.deep.equal(earlier).and.to.not.be.empty;
    const [key] = earlier;
    expect(Object.values(pairs[key]).map((o) => o.manifest)).to.deep.equal(deployed.get(key)!.objects.map((o) => o.manifest));
    const cluster = key.split("/")[0];
    expect(retiringPairs(pairs, new Set(earlier), new Set([cluster])), "all still deployed").to.deep.equal([]);
    const retiring = retiringPairs(pairs, new Set(), new Set([cluster]));
    expect(retiring.map((r) => r.key)).to.deep.equal(earlier.filter((k) => k.startsWith(`${cluster}/`)).sort());
    expect(retiring[0].spec).to.deep.include({ deploymentId: "", objects: {}, adopt: pairs[retiring[0].key] });
    expect(retiring[0].spec.deletePolicy?.ownerLabels).to.include({ "fleet.cattle.io/cluster": cluster });
    expect(retiringPairs(pairs, new Set(), new Set(["elsewhere"])), "a cluster no longer configured: its old provider deletes").to.deep.equal([]);
    expect(retiringPairs(pairs, new Set(), new Set([cluster]), new Set([cluster])), "a cluster left out (unreachable)").to.deep.equal([]);
  });

  it("a current state: nothing moves, the same state comes back, and there is nothing to say", () => {
    const current = fixture("layout-4-current");
    const m = planMigration(current, c1);
    expect([m.from, m.steps, m.moving, m.setups.size, m.changed]).to.deep.equal([4, [], [], 0, false]);
    expect(m.state).to.equal(current);
    expect(migrationNote(m)).to.equal(undefined);
  });

  it("a Kubernetes provider instance left with nothing to manage is dropped, so the engine never loads that plugin for it", () => {
    const current = fixture("layout-4-current");
    const orphan: StateResource = {
      urn: "urn:pulumi:upgrade::pulumi-fleet::pulumi:providers:kubernetes::c1",
      type: "pulumi:providers:kubernetes",
      custom: true,
      id: "x",
    };
    const m = planMigration({ ...current, deployment: { ...current.deployment, resources: [...resources(current), orphan] } }, c1);
    expect([m.from, m.moving, m.changed]).to.deep.equal([3, [], true]);
    expect(resources(m.state)).to.deep.equal(resources(current));
    expect(needsKubernetesProvider(resources(m.state))).to.equal(false);
  });

  it("says what the next up moves, in the state only (the words preview and up print)", () => {
    const note = migrationNote(planMigration(fixture("layout-2-per-object"), c1))!;
    expect(note).to.include(
      "the next `up` moves those 2 resource(s) into one BundleDeployment per bundle and cluster, and the 4 resource(s) of the clusters' agents and namespaces into one ClusterSetup per cluster",
    );
    expect(note).to.include("in the state only");
    expect(migrationNote(planMigration(fixture("layout-3-pairs-without-gitrepo"), c1))).to.include(
      "the next `up` moves the 4 resource(s) of the clusters' agents and namespaces into one ClusterSetup per cluster, in the state only",
    );
  });
});
