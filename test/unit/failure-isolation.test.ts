/**
 * A broken bundle fails alone (core/plan/failures.ts, held.ts): every failure a (bundle, cluster)
 * pair can have leaves the others deploying, and a pair that deployed before keeps exactly what the
 * state holds. Fake facts, real git and the real renderer.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { StackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { DesiredState } from "../../core/desired/types";
import { fakeFacts } from "../support/fake-facts";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { deployedAfter } from "../support/deployed-after";

const cacheRoot = tempDir("pf-cache-");

function fleetOf(repo: string, paths: string[]): StackConfig {
  return {
    file: "stacks/Pulumi.test.yaml",
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    renderDir: "/tmp/pulumi-fleet-render",
    clusterGroups: [],
    clusters: [
      { name: "c1", labels: { env: "dev" }, annotations: {}, templateValues: {}, deleteUnreachable: false },
      { name: "c2", labels: { env: "prod", region: "eu" }, annotations: {}, templateValues: {}, deleteUnreachable: false },
    ],
    gitRepos: [gitRepoConfig({ name: "t", repo, paths, targets: [{ clusterSelector: {} }] })],
  };
}

const keys = (s: DesiredState) => s.deployments.map((d) => `${d.key}${d.held ? " held" : ""}`).sort();
const failed = (s: DesiredState) => s.failures.map((f) => `${f.cluster}/${f.bundle} ${f.kept ? "kept" : "new"}: ${f.reason}`);

describe("a broken bundle fails alone (core/plan/failures.ts, held.ts)", function () {
  this.timeout(60_000);

  it("a GitRepo that cannot be read as a whole keeps everything it deployed, frozen, and says why on each deployment", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a"), "b/cm.yaml": CONFIGMAP("b") });
    const first = await desiredState(fleetOf(repo.url(), ["a", "b"]), fakeFacts(), { cacheRoot });
    const { previous, deployed } = deployedAfter(first);
    // A symlinked fleet.yaml refuses the whole GitRepo's read (checkout.ts): nothing of it may be pruned.
    repo.commit({ "a/fleet.yaml": null });
    fs.symlinkSync("/etc/hostname", path.join(repo.dir, "a/fleet.yaml"));
    repo.commit({});
    const s = await desiredState(fleetOf(repo.url(), ["a", "b"]), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(keys(s)).to.deep.equal(["c1/t/t-a held", "c1/t/t-b held", "c2/t/t-a held", "c2/t/t-b held"]);
    expect(s.failures.every((f) => f.kept && f.reason.startsWith("kept as deployed: the GitRepo could not be read: "))).to.equal(true);
    expect(s.summary.gitRepos.t.clusters).to.deep.equal(["c1", "c2"]);
  });

  it("a fleet.yaml broken after a good deploy: the other bundles update, the broken one keeps the state's objects frozen, its record and its namespace", async () => {
    const repo = new TestRepo({
      "a/cm.yaml": CONFIGMAP("a"),
      "b/cm.yaml": CONFIGMAP("b"),
      "c/cm.yaml": CONFIGMAP("c"),
      "c/fleet.yaml": "namespace: team-c\nnamespaceLabels:\n  owner: c\n",
    });
    const first = await desiredState(fleetOf(repo.url(), ["a", "b", "c"]), fakeFacts(), { cacheRoot });
    const { previous, deployed } = deployedAfter(first);
    repo.commit({
      "a/cm.yaml": CONFIGMAP("a", { k: "new" }),
      "b/cm.yaml": CONFIGMAP("b", { k: "new" }),
      "c/fleet.yaml": "namespace: team-c\nhelm: [not, a, mapping\n",
    });
    const s = await desiredState(fleetOf(repo.url(), ["a", "b", "c"]), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(keys(s)).to.deep.equal(["c1/t/t-a", "c1/t/t-b", "c1/t/t-c held", "c2/t/t-a", "c2/t/t-b", "c2/t/t-c held"]);
    expect(s.deployments.find((d) => d.key === "c1/t/t-a")!.objects[0].manifest.data).to.deep.equal({ k: "new" });
    const held = s.deployments.find((d) => d.key === "c1/t/t-c")!;
    const before = first.deployments.find((d) => d.key === "c1/t/t-c")!;
    // Exactly as registered before: the BundleDeployment's inputs unchanged (no update), and the record unchanged (the next up renders it again).
    expect(held.objects.map((o) => [o.key, o.manifest, o.retain])).to.deep.equal(before.objects.map((o) => [o.key, o.manifest, o.retain]));
    expect(held.spec).to.deep.equal(before.spec);
    expect(held.record).to.deep.equal(before.record);
    expect(s.records["c1/t/t-c"]).to.deep.equal(before.record);
    // Its namespace stays as registered, though no bundle that deploys now needs it.
    expect(s.clusters[0].namespaces.find((ns) => ns.metadata.name === "team-c")).to.deep.equal(
      first.clusters[0].namespaces.find((ns) => ns.metadata.name === "team-c"),
    );
    expect(held.clusterNamespaces).to.deep.equal(["team-c"]);
    expect(failed(s)).to.have.length(2);
    expect(s.failures[0]).to.include({ gitRepo: "t", bundle: "t-c", cluster: "c1" });
    expect(s.failures[0].message).to.match(/^c\/fleet\.yaml.*gitRepo t, bundle t-c, cluster c1: /);
    expect(s.failures[0].kept).to.deep.equal({ deploymentId: before.record.deploymentId, objects: 1 });
    expect(held.warnings[0]).to.match(
      /^bundle t-c on cluster c1 failed: c\/fleet\.yaml.*gitRepo t, bundle t-c, cluster c1: .* \(kept as last deployed: 1 object\(s\), deploymentID …/,
    );
    // The summary still counts it (the next update's guards), and the GitRepo is not "emptied".
    expect(s.summary.gitRepos.t.clusters).to.deep.equal(["c1", "c2"]);
    expect(s.summary.clusters.c1.map((l) => l.split(" ")[0])).to.deep.equal(["t-a", "t-b", "t-c"]);
  });

  it("without the state (a plain pulumi up), a failure of a deployed pair stops everything, naming it; a new pair that fails still fails alone", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a"), "c/cm.yaml": CONFIGMAP("c") });
    const first = await desiredState(fleetOf(repo.url(), ["a", "c"]), fakeFacts(), { cacheRoot });
    const { previous } = deployedAfter(first);
    repo.commit({ "c/fleet.yaml": "helm: [broken\n", "d/cm.yaml": CONFIGMAP("d"), "d/fleet.yaml": "dependsOn:\n  - name: t-nowhere\n" });
    const message = await desiredState(fleetOf(repo.url(), ["a", "c"]), fakeFacts({ previous }), { cacheRoot }).then(
      () => "no failure",
      (e: Error) => e.message,
    );
    expect(message).to.match(
      /gitRepo t, bundle t-c, cluster c1: .*without the stack's state, as in a plain `pulumi up`, a failed bundle deployment cannot keep its objects as they are, so nothing was changed; `npm run up` keeps them/,
    );
    const fresh = await desiredState(fleetOf(repo.url(), ["a", "d"]), fakeFacts({ previous }), { cacheRoot });
    expect(keys(fresh)).to.deep.equal(["c1/t/t-a", "c2/t/t-a"]);
    expect(failed(fresh)[0]).to.match(
      /^c1\/t-d new: dependsOn t-nowhere, which is not deployed to this cluster: Fleet's agent finds no bundle deployment of it/,
    );
  });

  it("dependsOn a bundle that is not targeted at a cluster fails there alone, and what waits for it waits; elsewhere all deploy", async () => {
    const repo = new TestRepo({
      "db/cm.yaml": CONFIGMAP("db"),
      "db/fleet.yaml":
        "targetCustomizations:\n  - name: only-prod\n    clusterSelector: {matchLabels: {env: prod}}\n  - name: not-dev\n    clusterSelector: {matchLabels: {env: dev}}\n    doNotDeploy: true\n",
      "app/cm.yaml": CONFIGMAP("app"),
      "app/fleet.yaml": "dependsOn:\n  - name: t-db\n",
      "web/cm.yaml": CONFIGMAP("web"),
      "web/fleet.yaml": "dependsOn:\n  - name: t-app\n",
      "other/cm.yaml": CONFIGMAP("other"),
    });
    const s = await desiredState(fleetOf(repo.url(), ["db", "app", "web", "other"]), fakeFacts(), { cacheRoot });
    expect(keys(s)).to.deep.equal(["c1/t/t-other", "c2/t/t-app", "c2/t/t-db", "c2/t/t-other", "c2/t/t-web"]);
    expect(failed(s)).to.deep.equal([
      "c1/t-app new: dependsOn t-db, which is not deployed to this cluster: Fleet's agent finds no bundle deployment of it (no bundles matching labels fleet.cattle.io/bundle-name=t-db) and never deploys this one",
      "c1/t-web new: dependent bundle(s) are not ready: [t-app] (failed on this cluster)",
    ]);
  });

  it("helm values that cannot be templated for one cluster fail that cluster only", async () => {
    const repo = new TestRepo({
      "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
      "app/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  region: {{ .Values.region | quote }}\n",
      "app/fleet.yaml": "helm:\n  values:\n    region: ${ .ClusterLabels.region }\n",
    });
    const s = await desiredState(fleetOf(repo.url(), ["app"]), fakeFacts(), { cacheRoot });
    expect(keys(s)).to.deep.equal(["c2/t/t-app"]);
    expect(failed(s)).to.have.length(1);
    expect(failed(s)[0]).to.match(/^c1\/t-app new: .*region/);
  });

  it("a template that fails to render, a bundle name produced twice and a values file that is missing fail alone", async () => {
    const repo = new TestRepo({
      "bad-chart/Chart.yaml": "apiVersion: v2\nname: bad\nversion: 0.1.0\n",
      "bad-chart/templates/cm.yaml": '{{ fail "this chart refuses" }}\n',
      "x/cm.yaml": CONFIGMAP("x"),
      "x/fleet.yaml": "name: same\n",
      "y/cm.yaml": CONFIGMAP("y"),
      "y/fleet.yaml": "name: same\n",
      "vals/Chart.yaml": "apiVersion: v2\nname: vals\nversion: 0.1.0\n",
      "vals/templates/cm.yaml": CONFIGMAP("vals"),
      "vals/fleet.yaml": "helm:\n  chart: .\n  valuesFiles: [missing.yaml]\n",
      "good/cm.yaml": CONFIGMAP("good"),
    });
    const s = await desiredState(fleetOf(repo.url(), ["bad-chart", "x", "y", "vals", "good"]), fakeFacts(), { cacheRoot });
    expect(keys(s)).to.deep.equal(["c1/t/t-good", "c2/t/t-good"]);
    expect(failed(s)).to.deep.equal([
      "/same new: bundle name same is produced by both x and y; set a distinct name in fleet.yaml",
      "c1/t-bad-chart new: " + s.failures[1].reason,
      "c2/t-bad-chart new: " + s.failures[2].reason,
      "/t-vals new: values file not found",
    ]);
    expect(s.failures[1].reason).to.match(/this chart refuses/);
    expect(s.failures[3].message).to.equal("vals/missing.yaml gitRepo t, bundle t-vals: helm.valuesFiles: values file not found");
  });

  it("a bundle that cannot be read holds every bundle its GitRepo deployed that is not read now: its fleet.yaml may have named it", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a"), "b/cm.yaml": CONFIGMAP("b"), "b/fleet.yaml": "name: custom-b\n" });
    const first = await desiredState(fleetOf(repo.url(), ["a", "b"]), fakeFacts(), { cacheRoot });
    const { previous, deployed } = deployedAfter(first);
    repo.commit({ "b/fleet.yaml": "name: custom-b\nnamespace: [\n" });
    const s = await desiredState(fleetOf(repo.url(), ["a", "b"]), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(keys(s)).to.deep.equal(["c1/t/custom-b held", "c1/t/t-a", "c2/t/custom-b held", "c2/t/t-a"]);
    // The bundle's own failure is under the name its path gives (fleet.yaml, which names it, cannot be read); the held ones say why they stay.
    expect(s.failures.map((f) => `${f.cluster}/${f.bundle}`)).to.deep.equal(["c1/custom-b", "c2/custom-b", "/t-b"]);
    expect(s.failures[0].reason).to.match(/^kept as deployed, not pruned: bundle\(s\) t-b of this GitRepo could not be read/);
  });

  it("an object a held deployment owns is not taken over by another bundle: that bundle fails instead", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("shared"), "b/cm.yaml": CONFIGMAP("b") });
    const first = await desiredState(fleetOf(repo.url(), ["a", "b"]), fakeFacts(), { cacheRoot });
    const { previous, deployed } = deployedAfter(first);
    repo.commit({ "a/fleet.yaml": "helm: [broken\n", "b/cm.yaml": CONFIGMAP("shared") });
    const s = await desiredState(fleetOf(repo.url(), ["a", "b"]), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(keys(s)).to.deep.equal(["c1/t/t-a held", "c1/t/t-b held", "c2/t/t-a held", "c2/t/t-b held"]);
    expect(s.failures.find((f) => f.cluster === "c1" && f.bundle === "t-b")!.reason).to.equal(
      "ConfigMap default/shared is also deployed by bundle t-a of GitRepo t on this cluster, which failed and keeps its objects as last deployed; an object has one owner",
    );
  });
});
