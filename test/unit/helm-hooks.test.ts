/**
 * Helm hooks (core/render/deployments.ts, core/desired/objects.ts desiredHooks): a chart's install,
 * upgrade and delete hooks leave the pair's set and become its `hooks` input, which the provider runs at
 * their phases (tools/fleet-provider hooks.go; live: its live_hooks_test.go and test/e2e/helm-hooks.test.ts).
 * Test and rollback hooks, unknown events and delete policies are left out, each said. Real git, the
 * real renderer, fake facts.
 */
import { expect } from "chai";
import { StackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { PairHook, PairSpec, pairSpecFromEngine, registeredSet } from "../../core/model/pair";
import { fakeFacts } from "../support/fake-facts";
import { gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { deployedAfter } from "../support/deployed-after";
import { renderStack } from "../support/fleet-fixtures";

const cacheRoot = tempDir("pf-cache-");

function fleetOf(repo: string): StackConfig {
  return renderStack(["c1"], [gitRepoConfig({ name: "t", repo, paths: ["chart"], targets: [{ clusterSelector: {} }] })]);
}

const hook = (kind: string, name: string, annotations: Record<string, string>) =>
  `apiVersion: ${kind === "Job" ? "batch/v1" : "v1"}\nkind: ${kind}\nmetadata:\n  name: ${name}\n  annotations: ${JSON.stringify(annotations)}\n` +
  (kind === "Job" ? "spec:\n  template:\n    spec: {restartPolicy: Never, containers: [{name: j, image: busybox}]}\n" : "data: {k: v}\n");

const CHART = (fleetYaml: string) => ({
  "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
  "chart/fleet.yaml": fleetYaml,
  "chart/templates/app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata: {k: v}\n",
  "chart/templates/migrate.yaml": hook("Job", "migrate", {
    "helm.sh/hook": "pre-install,pre-upgrade",
    "helm.sh/hook-weight": "5",
    "helm.sh/hook-delete-policy": "hook-succeeded,before-hook-creation",
  }),
  "chart/templates/seed.yaml": hook("ConfigMap", "seed", { "helm.sh/hook": "post-upgrade,test", "helm.sh/hook-delete-policy": "whenever" }),
  "chart/templates/goodbye.yaml": hook("ConfigMap", "goodbye", { "helm.sh/hook": "pre-delete" }),
  "chart/templates/smoke.yaml": hook("Job", "smoke", { "helm.sh/hook": "test" }),
  "chart/templates/back.yaml": hook("ConfigMap", "back", { "helm.sh/hook": "pre-rollback" }),
});

const parsed = (h: PairHook) => ({
  ...h,
  manifest: JSON.parse(h.manifest!) as { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } },
});

describe("Helm hooks become the pair's hooks, run at their phases (core/render/deployments.ts)", function () {
  this.timeout(120_000);

  it("install, upgrade and delete hooks leave the set for `hooks`, placed and labelled as the set; test and rollback hooks are left out, said", async () => {
    const repo = new TestRepo(CHART("defaultNamespace: web\n"));
    const s = await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot });
    expect(s.failures).to.deep.equal([]);
    const [d] = s.deployments;
    expect(Object.keys(d.spec.objects)).to.deep.equal(["/ConfigMap/web/app"]);
    const hooks = d.spec.hooks!.map(parsed);
    expect(hooks.map((h) => [h.manifest.kind, h.manifest.metadata.name, h.events, h.weight, h.deletePolicies])).to.have.deep.members([
      ["Job", "migrate", ["pre-install", "pre-upgrade"], 5, ["hook-succeeded", "before-hook-creation"]],
      ["ConfigMap", "seed", ["post-upgrade"], 0, ["whenever"]],
      ["ConfigMap", "goodbye", ["pre-delete"], 0, undefined],
    ]);
    const labels = (d.objects[0].manifest.metadata.labels ?? {}) as Record<string, string>;
    expect(Object.keys(labels).length).to.be.greaterThan(0);
    for (const h of hooks) {
      expect(h.manifest.metadata.namespace, h.manifest.metadata.name).to.equal("web");
      expect(h.manifest.metadata.labels, h.manifest.metadata.name).to.include(labels);
    }
    expect(d.spec.hookTimeoutSeconds).to.equal(undefined);
    expect(d.warnings.filter((w) => w.includes(": hook ")).map((w) => w.replace("bundle t-chart on cluster c1: ", ""))).to.have.members([
      "hook ConfigMap seed (helm.sh/hook: post-upgrade,test): test left out: Fleet never runs test hooks",
      'hook ConfigMap seed (helm.sh/hook: post-upgrade,test): helm.sh/hook-delete-policy "whenever" is not one Helm knows: it deletes nothing, and, as in Helm, a policy given replaces the default (before-hook-creation)',
      "hook Job smoke (helm.sh/hook: test): left out: Fleet never runs test hooks",
      "hook ConfigMap back (helm.sh/hook: pre-rollback): left out: pre-rollback runs only on a Helm rollback, which no run is",
    ]);
  });

  it("helm.timeoutSeconds is each hook's timeout; a bundle without hooks registers no hook field", async () => {
    const repo = new TestRepo(CHART("defaultNamespace: web\nhelm:\n  timeoutSeconds: 90\n"));
    const [d] = (await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot })).deployments;
    expect(d.spec.hookTimeoutSeconds).to.equal(90);
    expect(d.spec.timeoutSeconds).to.equal(90);
    const plain = new TestRepo({ "chart/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: {k: v}\n" });
    const [p] = (await desiredState(fleetOf(plain.url()), fakeFacts(), { cacheRoot })).deployments;
    expect(p.spec).not.to.have.any.keys("hooks", "hookTimeoutSeconds");
  });

  it("an unchanged deployment taken from the state keeps its hooks as the state holds them", async () => {
    const repo = new TestRepo(CHART("defaultNamespace: web\n"));
    const first = await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot });
    const { previous, deployed } = deployedAfter(first);
    const again = await desiredState(fleetOf(repo.url()), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(again.deployments[0].spec).to.deep.equal(first.deployments[0].spec);
    // Taken from the state, not rendered again: a weight only the state holds comes through.
    const held = deployed.get(first.deployments[0].key)!;
    held.spec = { ...held.spec!, hooks: held.spec!.hooks!.map((h) => ({ ...h, weight: h.weight + 100 })) };
    const fromState = await desiredState(fleetOf(repo.url()), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(fromState.deployments[0].spec.hooks!.map((h) => h.weight)).to.have.members([105, 100, 100]);
  });

  it("keepResources runs no delete hook (Fleet's agent then deletes only the release's history)", async () => {
    const repo = new TestRepo(CHART("defaultNamespace: web\nkeepResources: true\n"));
    const [d] = (await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot })).deployments;
    expect(d.spec.hooks!.map((h) => parsed(h).manifest.metadata.name)).to.have.members(["migrate", "seed"]);
  });
});

describe("a pair's hooks in its BundleContent (core/model/pair.ts contentForm)", function () {
  this.timeout(120_000);

  it("install and upgrade hooks are kept once in the content and read back whole; a delete hook stays in the pair", async () => {
    const repo = new TestRepo(CHART("defaultNamespace: web\n"));
    const [d] = (await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot })).deployments;
    const form = registeredSet(d.spec, true)!;
    expect(form.content).to.be.a("string");
    const byName = (h: PairHook) => (h.manifest ? parsed(h).manifest.metadata.name : h.object);
    expect(form.hooks!.map(byName)).to.have.members(["batch/Job/web/migrate", "/ConfigMap/web/seed", "goodbye"]);
    const kept = form.hooks!.filter((h) => h.manifest === undefined);
    expect(kept.map((h) => [h.object, typeof h.digest, h.digest!.length > 0])).to.have.deep.members([
      ["batch/Job/web/migrate", "string", true],
      ["/ConfigMap/web/seed", "string", true],
    ]);
    expect(Object.keys(form.manifests!).filter((k) => k.startsWith("hooks["))).to.have.length(2);
    // Two clusters of one render share it: the content leaves out the owner labels (which name the cluster).
    expect(Object.values(form.manifests!).some((m) => m.includes(`"${Object.keys(d.spec.deletePolicy.ownerLabels)[0]}"`))).to.equal(false);
    // Read back from the state: the same hooks, manifests and all.
    const back = pairSpecFromEngine({ ...d.spec, content: form.content, objects: form.objects as PairSpec["objects"], hooks: form.hooks }, form.manifests);
    expect(back.hooks).to.deep.equal(d.spec.hooks);
  });
});
