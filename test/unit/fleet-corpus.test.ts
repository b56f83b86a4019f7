/**
 * Fleet repositories in the shapes public ones have (test/corpus/<repository>/), each with what Fleet
 * v0.16 does with it, checked against the desired state (render mode: every object as `up` would
 * register it). Fleet's behaviour, for each shape:
 * - fleet.yaml is decoded by Go's encoding/json (after sigs.k8s.io/yaml): a key that matches a field
 *   without regard to case is that field, at every level; a key no field has is ignored.
 * - Each bundle is its own BundleDeployment per cluster: one that cannot be read or rendered fails (the
 *   GitRepo and Bundle show the error) and the others deploy.
 * - dependsOn: the agent deploys nothing while it finds no Ready BundleDeployment of the dependency on
 *   its cluster ("list bundledeployments: no bundles matching labels ...", "dependent bundle(s) are not
 *   ready"); a bundle that waits for a waiting one waits too.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { StackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { DesiredState } from "../../core/desired/types";
import { fakeFacts } from "../support/fake-facts";
import { gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";

const CORPUS = path.join(__dirname, "..", "corpus");
const cacheRoot = tempDir("pf-corpus-");

/** Every file of a corpus repository, by path from its root. */
function filesOf(dir: string, rel = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) Object.assign(out, filesOf(dir, p));
    else out[p] = fs.readFileSync(path.join(dir, p), "utf8");
  }
  return out;
}

/** The repository committed to git, targeted at a dev and a prod cluster, as its desired state. */
async function deployCorpus(name: string): Promise<DesiredState> {
  const repo = new TestRepo(filesOf(path.join(CORPUS, name)));
  const config: StackConfig = {
    file: "stacks/Pulumi.corpus.yaml",
    fleetVersion: "0.16.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    renderDir: tempDir("pf-corpus-render-"),
    clusterGroups: [],
    clusters: [
      { name: "dev-1", labels: { env: "dev" }, annotations: {}, templateValues: {}, deleteUnreachable: false },
      { name: "prod-1", labels: { env: "prod" }, annotations: {}, templateValues: {}, deleteUnreachable: false },
    ],
    gitRepos: [gitRepoConfig({ name, repo: repo.url(), targets: [{ clusterSelector: {} }] })],
  };
  return desiredState(config, fakeFacts(), { cacheRoot });
}

const keys = (s: DesiredState) => s.deployments.map((d) => d.key).sort();
const objectsOf = (s: DesiredState, key: string) => s.deployments.find((d) => d.key === key)!.objects.map((o) => o.manifest);
const warnings = (s: DesiredState) => [...new Set(s.fleet.bundles.flatMap((b) => b.warnings ?? []))];

describe("Fleet repositories from the wild (test/corpus), as Fleet deploys them", function () {
  this.timeout(60_000);

  it("capitalised-fields: Go-style keys are the fields they match (namespace, its labels and annotations, helm, a customization), each said", async () => {
    const s = await deployCorpus("capitalised-fields");
    expect(keys(s)).to.deep.equal(["dev-1/capitalised-fields/capitalised-fields-web", "prod-1/capitalised-fields/capitalised-fields-web"]);
    const replicas = (c: string) =>
      objectsOf(s, `${c}/capitalised-fields/capitalised-fields-web`).map((o) => [
        o.metadata.namespace,
        o.metadata.name,
        (o.spec as { replicas: number }).replicas,
      ]);
    expect(replicas("dev-1")).to.deep.equal([["web", "web-release", 2]]);
    expect(replicas("prod-1")).to.deep.equal([["web", "web-release", 5]]);
    const ns = s.clusters[0].namespaces.find((n) => n.metadata.name === "web")!;
    expect(ns.metadata.labels.team).to.equal("web");
    expect(ns.metadata.annotations).to.deep.equal({ owner: "web-team@example.com" });
    expect(warnings(s).join("\n"))
      .to.contain("DefaultNamespace: read as defaultNamespace")
      .and.contain("ReleaseName: read as releaseName")
      .and.contain("ClusterSelector: read as clusterSelector");
    expect(s.failures).to.deep.equal([]);
  });

  it("gitrepo-as-fleet-yaml: a GitRepo object committed as fleet.yaml is read as one whose every key is unknown: ignored, each said; the manifests deploy", async () => {
    const s = await deployCorpus("gitrepo-as-fleet-yaml");
    expect(keys(s)).to.deep.equal(["dev-1/gitrepo-as-fleet-yaml/gitrepo-as-fleet-yaml-app", "prod-1/gitrepo-as-fleet-yaml/gitrepo-as-fleet-yaml-app"]);
    expect(
      objectsOf(s, "dev-1/gitrepo-as-fleet-yaml/gitrepo-as-fleet-yaml-app").map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`),
    ).to.deep.equal(["ConfigMap default/app-settings"]);
    const text = warnings(s).join("\n");
    for (const key of ["apiVersion", "kind", "metadata", "spec"]) expect(text).to.contain(`${key}: unknown field, ignored as Fleet ignores it`);
  });

  it("team-monorepo: one team's broken fleet.yaml fails that bundle alone; the other teams deploy", async () => {
    const s = await deployCorpus("team-monorepo");
    expect(keys(s)).to.deep.equal([
      "dev-1/team-monorepo/team-monorepo-team-a",
      "dev-1/team-monorepo/team-monorepo-team-c",
      "prod-1/team-monorepo/team-monorepo-team-a",
      "prod-1/team-monorepo/team-monorepo-team-c",
    ]);
    expect(s.failures.map((f) => [f.bundle, f.cluster, f.file, !!f.kept])).to.deep.equal([["team-monorepo-team-b", "", "team-b/fleet.yaml", false]]);
    expect(s.failures[0].message).to.match(/^team-b\/fleet\.yaml:\d+ gitRepo team-monorepo, bundle team-monorepo-team-b: /);
    expect(s.warnings.join("\n")).to.match(/failed: team-b\/fleet\.yaml:\d+ gitRepo team-monorepo, bundle team-monorepo-team-b: .*\(nothing deployed\)/);
  });

  it("depends-on-not-targeted: where the dependency is not deployed its dependants fail with Fleet's words and everything else deploys; elsewhere all deploy in order", async () => {
    const s = await deployCorpus("depends-on-not-targeted");
    expect(keys(s)).to.deep.equal([
      "prod-1/depends-on-not-targeted/depends-on-not-targeted-api",
      "prod-1/depends-on-not-targeted/depends-on-not-targeted-db",
      "prod-1/depends-on-not-targeted/depends-on-not-targeted-web",
    ]);
    expect(s.deployments.map((d) => d.key)).to.deep.equal([
      "prod-1/depends-on-not-targeted/depends-on-not-targeted-db",
      "prod-1/depends-on-not-targeted/depends-on-not-targeted-api",
      "prod-1/depends-on-not-targeted/depends-on-not-targeted-web",
    ]);
    expect(s.failures.map((f) => `${f.cluster}/${f.bundle}: ${f.reason}`)).to.deep.equal([
      "dev-1/depends-on-not-targeted-api: dependsOn depends-on-not-targeted-db, which is not deployed to this cluster: Fleet's agent finds no bundle deployment of it " +
        "(no bundles matching labels fleet.cattle.io/bundle-name=depends-on-not-targeted-db) and never deploys this one",
      "dev-1/depends-on-not-targeted-web: dependent bundle(s) are not ready: [depends-on-not-targeted-api] (failed on this cluster)",
    ]);
  });

  it("kompose: manifests with nulls, empty maps and an empty status deploy, registered without what the API server ignores (no diff, no drift)", async () => {
    const s = await deployCorpus("kompose");
    expect(keys(s)).to.deep.equal(["dev-1/kompose/kompose-app", "prod-1/kompose/kompose-app"]);
    const [deployment, service] = ["Deployment", "Service"].map((k) => objectsOf(s, "dev-1/kompose/kompose-app").find((o) => o.kind === k)!);
    expect(deployment).to.not.have.property("status");
    expect(deployment.metadata).to.not.have.property("creationTimestamp");
    const pod = deployment.spec as { strategy: object; template: { metadata: object; spec: { containers: { env: object[]; resources: object }[] } } };
    expect(pod.template.metadata).to.not.have.property("creationTimestamp");
    expect(pod.template.spec.containers[0].env).to.deep.equal([{ name: "DEBUG" }]);
    // What the API server keeps as written stays: empty structs, and a status with content (a CRD without a status subresource stores it).
    expect(pod.strategy).to.deep.equal({});
    expect(pod.template.spec.containers[0].resources).to.deep.equal({});
    expect(service.status).to.deep.equal({ loadBalancer: {} });
    expect(
      objectsOf(s, "dev-1/kompose/kompose-app")
        .map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)
        .sort(),
    ).to.deep.equal(["Deployment kompose/web", "Service kompose/web"]);
    expect(s.failures).to.deep.equal([]);
  });
});
