import { expect } from "chai";
import * as path from "node:path";
import { fleetProgram } from "../../components/program";
import { desiredState } from "../../core/desired/state";
import { DeployOptions } from "../../core/desired/options";
import { StackConfig } from "../../core/config/stack";
import { runUnderMocks, Registration } from "../support/mock-engine";
import { localStack, reordered, withoutProdTarget } from "../support/fleet-fixtures";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { fakeFacts } from "../support/fake-facts";
import { Fleet } from "../../components/fleet";
import { stackProviderName } from "../../core/desired/types";
import { ContentManifests, contentForm, DeletePolicy, EngineObject, fromEngineObjects, toEngineObjects } from "../../core/model/pair";
import { RETAIN_REASONS } from "../../core/desired/delete-policy";

const RENDER = "/tmp/pulumi-fleet-render";
/** The stack's one pulumi-fleet provider, under the mocks' stack name. */
const STACK_PROVIDER = stackProviderName("test");
const PROVIDER_REF = new RegExp(`pulumi:providers:pulumi-fleet::${STACK_PROVIDER}::${STACK_PROVIDER}-id$`);
const cacheRoot = tempDir("pf-cache-");
const run = (config: StackConfig, previous: DeployOptions["previous"] = null) => runUnderMocks(() => fleetProgram(config, { cacheRoot, previous }));
const names = (regs: Registration[]) => regs.map((r) => r.urn);
/** The BundleDeployments: one engine resource per (bundle, cluster) pair. */
const pairs = (regs: Registration[]) => regs.filter((r) => r.custom && r.type === "pulumi-fleet:index:BundleDeployment");
type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  spec?: { replicas?: number };
  data?: Record<string, string>;
};
/** A pair's BundleContent (components/content.ts), by the digest its inputs name. */
const contentOf = (r: Registration, regs: Registration[]) =>
  regs.find((c) => c.type === "pulumi-fleet:index:BundleContent" && c.name === r.inputs.content)?.inputs.objects as ContentManifests | undefined;
/** A pair's objects, by key (group/kind/namespace/name), their manifests from its content. */
const objectsOf = (r: Registration, regs: Registration[]) =>
  Object.fromEntries(
    Object.entries(
      fromEngineObjects(r.inputs.objects as Record<string, EngineObject>, contentOf(r, regs), (r.inputs.deletePolicy as DeletePolicy).ownerLabels),
    ).map(([k, o]) => [k, o.manifest as unknown as Manifest]),
  );
const pair = (regs: Registration[], key: string) => pairs(regs).find((r) => r.name === key)!;

describe("components register the desired state (Pulumi mocks)", function () {
  this.timeout(30_000);

  it("registers clusters, GitRepos and one BundleDeployment resource per plan entry, with stable names and providers", async () => {
    const { registrations: regs } = await run(localStack(RENDER));
    const byType = (t: string) =>
      regs
        .filter((r) => r.type === t)
        .map((r) => r.name)
        .sort();
    expect(byType("pulumi-fleet:index:Fleet")).to.deep.equal(["fleet"]);
    expect(byType("pulumi-fleet:index:Cluster")).to.deep.equal(["dev-1", "dev-2", "prod-1"]);
    expect(byType("pulumi-fleet:index:GitRepo")).to.deep.equal(["examples"]);
    expect(
      pairs(regs)
        .map((r) => r.name)
        .sort(),
    ).to.deep.equal([
      "dev-1/examples/examples-helm",
      "dev-1/examples/examples-kustomize",
      "dev-1/examples/examples-simple",
      "dev-2/examples/examples-helm",
      "dev-2/examples/examples-kustomize",
      "dev-2/examples/examples-simple",
      "prod-1/examples/examples-helm",
      "prod-1/examples/examples-kustomize",
      "prod-1/examples/examples-simple",
    ]);
    expect(
      regs.filter((r) => r.custom && r.type.startsWith("kubernetes:") && r.parent.includes("BundleDeployment")),
      "no per-object resources",
    ).to.deep.equal([]);

    // One provider for the stack, pulumi-fleet's, with every cluster's access: no Kubernetes provider, and
    // no provider per cluster (a plugin process each).
    expect(regs.filter((r) => r.type === "pulumi:providers:kubernetes")).to.deep.equal([]);
    const providers = regs.filter((r) => r.type === "pulumi:providers:pulumi-fleet");
    expect(providers.map((p) => p.name)).to.deep.equal([STACK_PROVIDER]);
    expect(providers[0].inputs.clusters).to.deep.equal(
      Object.fromEntries(["dev-1", "dev-2", "prod-1"].map((c) => [c, { clusterIdentifier: c, renderYamlToDirectory: path.join(RENDER, c) }])),
    );
    // Each cluster's namespaces and agent: one ClusterSetup under the cluster, naming it.
    for (const setup of regs.filter((r) => r.type === "pulumi-fleet:index:ClusterSetup")) {
      expect(setup.provider).to.match(PROVIDER_REF);
      expect(setup.inputs.cluster).to.equal(setup.name);
      expect(setup.parent).to.match(new RegExp(`pulumi-fleet:index:Cluster::${setup.name}$`));
    }
    expect(byType("pulumi-fleet:index:ClusterSetup")).to.deep.equal(["dev-1", "dev-2", "prod-1"]);
    expect(
      regs.filter((r) => r.custom && r.type.startsWith("kubernetes:")),
      "no per-object resources at all",
    ).to.deep.equal([]);
    // Every pair goes through the stack's provider, naming its own cluster, under its GitRepo.
    for (const bd of pairs(regs)) {
      const cluster = bd.name.split("/")[0];
      expect(bd.provider, bd.name).to.match(PROVIDER_REF);
      expect(bd.inputs.cluster, bd.name).to.equal(cluster);
      expect(bd.parent).to.match(/pulumi-fleet:index:GitRepo::examples$/);
    }
  });

  it("renders raw YAML as the pair's objects, with ownership labels, namespaces and overlays per cluster", async () => {
    const { registrations: regs } = await run(localStack(RENDER));
    expect(Object.keys(objectsOf(pair(regs, "dev-1/examples/examples-simple"), regs)).sort()).to.deep.equal([
      "/ConfigMap/simple/app-config",
      "/Service/simple/hello",
      "apps/Deployment/simple/hello",
    ]);
    const deployment = objectsOf(pair(regs, "prod-1/examples/examples-simple"), regs)["apps/Deployment/simple/hello"];
    expect(deployment.metadata.namespace).to.equal("simple");
    expect(deployment.metadata.labels).to.include({
      "fleet.cattle.io/repo-name": "examples",
      "fleet.cattle.io/bundle-name": "examples-simple",
      "fleet.cattle.io/cluster": "prod-1",
      "app.kubernetes.io/managed-by": "pulumi-fleet",
    });
    // prod overlay patches replicas to 3; dev keeps the base.
    expect(deployment.spec!.replicas).to.equal(3);
    const dev = pair(regs, "dev-1/examples/examples-simple");
    expect(objectsOf(dev, regs)["apps/Deployment/simple/hello"].spec!.replicas).to.not.equal(3);

    const setup = regs.find((r) => r.type === "pulumi-fleet:index:ClusterSetup" && r.name === "dev-1")!;
    const ns = Object.values(fromEngineObjects(setup.inputs.objects as Record<string, EngineObject>) as Record<string, { manifest: Manifest; retain?: string }>)
      .filter((o) => o.manifest.kind === "Namespace" && o.manifest.metadata.name !== "cattle-fleet-system")
      .map((o) => [o.manifest.metadata.name, o.manifest.metadata.labels, o.retain]);
    expect(ns).to.deep.equal([
      ["helm-app", { "fleet.cattle.io/cluster": "dev-1", "app.kubernetes.io/managed-by": "pulumi-fleet" }, RETAIN_REASONS.namespace],
      ["simple", { team: "platform", "fleet.cattle.io/cluster": "dev-1", "app.kubernetes.io/managed-by": "pulumi-fleet" }, RETAIN_REASONS.namespace],
    ]);
    // The pair waits for its cluster's setup, which creates its namespace.
    expect(dev.dependencies).to.include(setup.urn);
  });

  it("a deployment whose lookups read a Secret has its objects registered as a secret, the others in the clear (issue 41)", async () => {
    const desired = await desiredState(localStack(RENDER), fakeFacts(), { cacheRoot });
    const d = desired.deployments.find((x) => x.key === "dev-1/examples/examples-simple")!;
    d.secret = true;
    const { registrations: regs } = await runUnderMocks(() => new Fleet("fleet", desired));
    // The SDK's secret signature around the value.
    expect(pair(regs, d.key).inputs.objects).to.deep.equal({
      "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
      value: JSON.parse(JSON.stringify(toEngineObjects(d.spec.objects))),
    });
    expect(pair(regs, "dev-2/examples/examples-simple").inputs.objects).to.not.have.property("4dabf18193072939515e22adb298388d");
    // The provider's messages (an API server refusal may quote a value) and live views are secrets in the state too.
    expect(pair(regs, d.key).additionalSecretOutputs).to.deep.equal(["messages", "live"]);
    expect(pair(regs, "dev-2/examples/examples-simple").additionalSecretOutputs).to.deep.equal([]);
  });

  it("registers helm and kustomize bundles as their rendered objects in their pair, as raw YAML", async () => {
    const { registrations: regs } = await run(localStack(RENDER));
    expect(regs.filter((r) => r.type === "kubernetes:helm.sh/v4:Chart" || r.type === "kubernetes:kustomize/v2:Directory")).to.deep.equal([]);
    const settings = objectsOf(pair(regs, "prod-1/examples/examples-helm"), regs)["/ConfigMap/helm-app/helm-app-settings"];
    expect(settings.data).to.deep.include({ cluster: "prod-1", region: "eu-west", environment: "prod", replicas: "5", memory: "512Mi" });
    expect(settings.metadata.labels).to.include({ "fleet.cattle.io/bundle-name": "examples-helm", "fleet.cattle.io/cluster": "prod-1" });
    const kustomized = pairs(regs)
      .filter((r) => r.name.includes("/examples-kustomize"))
      .flatMap((r) => Object.keys(objectsOf(r, regs)).map((k) => `${r.name} ${k}`))
      .sort();
    expect(kustomized).to.deep.equal([
      "dev-1/examples/examples-kustomize /ConfigMap/kustomize-dev/kustomized",
      "dev-1/examples/examples-kustomize /Namespace//kustomize-dev",
      "dev-2/examples/examples-kustomize /ConfigMap/kustomize-dev/kustomized",
      "dev-2/examples/examples-kustomize /Namespace//kustomize-dev",
      "prod-1/examples/examples-kustomize /ConfigMap/kustomize-prod/kustomized",
      "prod-1/examples/examples-kustomize /Namespace//kustomize-prod",
    ]);
  });

  it("config A then B (one target removed): exactly the dropped cluster's deployments disappear, nothing else changes", async () => {
    const a = await run(localStack(RENDER));
    const b = await run(withoutProdTarget(localStack(RENDER)));
    const removed = names(a.registrations).filter((u) => !b.byUrn.has(u));
    const added = names(b.registrations).filter((u) => !a.byUrn.has(u));
    expect(added).to.deep.equal([]);
    // Besides the pairs, the contents only prod-1 deployed (its overlays): each registered once, named by its digest.
    const contents = new Set(a.registrations.filter((r) => r.type === "pulumi-fleet:index:BundleContent").map((r) => r.urn));
    expect(removed.filter((u) => !contents.has(u)).length).to.equal(3);
    const prodContents = new Set(
      pairs(a.registrations)
        .filter((r) => r.name.startsWith("prod-1/"))
        .map((r) => r.inputs.content),
    );
    expect(removed.filter((u) => contents.has(u)).map((u) => u.split("::").pop())).to.have.members([...prodContents].map(String));
    for (const urn of removed.filter((u) => !contents.has(u))) {
      const name = urn.split("::").pop()!;
      // The prod-1 BundleDeployments, their objects, and the namespaces only they needed.
      expect(name, urn).to.match(/^prod-1\//);
    }
    expect(removed.filter((u) => u.includes("BundleDeployment::")).map((u) => u.split("::").pop())).to.deep.equal([
      "prod-1/examples/examples-helm",
      "prod-1/examples/examples-kustomize",
      "prod-1/examples/examples-simple",
    ]);
    // The prod-1 provider and cluster stay (the cluster is still in the fleet), and no remaining input
    // moves but prod-1's setup: the namespaces only those deployments needed leave it.
    expect(
      Object.keys(b.byUrn.get(a.registrations.find((r) => r.type === "pulumi-fleet:index:ClusterSetup" && r.name === "prod-1")!.urn)!.inputs.objects as object),
    ).to.not.include("/Namespace//helm-app");
    for (const r of b.registrations.filter((x) => !(x.type === "pulumi-fleet:index:ClusterSetup" && x.name === "prod-1"))) {
      expect(r.inputs, r.urn).to.deep.equal(a.byUrn.get(r.urn)!.inputs);
      expect(r.dependencies, r.urn).to.deep.equal(a.byUrn.get(r.urn)!.dependencies);
    }
  });

  it("the same config twice, and reordered, registers identical URNs and inputs", async () => {
    const a = await run(localStack(RENDER));
    const again = await run(localStack(RENDER));
    const shuffled = await run(reordered(localStack(RENDER)));
    for (const other of [again, shuffled]) {
      expect(names(other.registrations)).to.deep.equal(names(a.registrations));
      for (const r of other.registrations) expect(r.inputs, r.urn).to.deep.equal(a.byUrn.get(r.urn)!.inputs);
    }
  });

  it("reads the last deployment from the stack's own outputs (a StackReference to itself)", async () => {
    const previous = { gitRepos: { examples: { commit: "dir-x", clusters: ["dev-1", "dev-2", "prod-1"] } } };
    const config = localStack(RENDER);
    const matchingNothing = { ...config, gitRepos: config.gitRepos.map((r) => ({ ...r, targets: [{ name: "typo", clusterGroup: "prdo" }] })) };
    const r = await runUnderMocks(
      () =>
        fleetProgram(matchingNothing, { cacheRoot }).then(
          () => "ok",
          (e: Error) => e.message,
        ),
      { stackOutputs: { summary: previous } },
    );
    expect(r.result).to.match(/matches none now/);
    expect(r.registrations.map((x) => x.type)).to.deep.equal(["pulumi:pulumi:StackReference"]);
  });

  it("registers exactly the desired state: each pair's spec, provider, gates and dependencies; its warnings", async () => {
    const repo = new TestRepo({
      "raw/crd.yaml":
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n" +
        "spec:\n  group: example.com\n  scope: Namespaced\n  names: {kind: Widget, plural: widgets}\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n",
      "raw/w.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
      "raw/cm.yaml": CONFIGMAP("plain"),
      "raw/kept.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n  annotations: {helm.sh/resource-policy: keep}\n",
      "raw/fleet.yaml": "defaultNamespace: raw\nhelm:\n  timeoutSeconds: 30\n",
      "app/cm.yaml": CONFIGMAP("app"),
      "app/fleet.yaml": "keepResources: true\ndependsOn:\n  - name: m-raw\n",
      "paused/cm.yaml": CONFIGMAP("paused"),
    });
    const clusters = ["c1", "c2"].map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false }));
    const config: StackConfig = {
      file: "stacks/Pulumi.test.yaml",
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com" },
      renderDir: RENDER,
      clusters,
      clusterGroups: [],
      gitRepos: [
        gitRepoConfig({ name: "m", repo: repo.url(), paths: ["raw", "app"], targets: [{ clusterSelector: {} }] }),
        gitRepoConfig({ name: "p", repo: repo.url(), paths: ["paused"], paused: true, targets: [{ clusterName: "c1" }] }),
      ],
    };
    const desired = await desiredState(config, fakeFacts(), { cacheRoot });
    const r = await run(config);
    const byName = new Map(r.registrations.map((x) => [x.name, x]));
    const urnOf = (name: string) => byName.get(name)!.urn;
    for (const d of desired.deployments) {
      const bd = byName.get(d.key)!;
      expect([bd.type, bd.custom], d.key).to.deep.equal(["pulumi-fleet:index:BundleDeployment", true]);
      expect(bd.parent, d.key).to.match(new RegExp(`GitRepo::${d.gitRepo}$`));
      expect(bd.provider, d.key).to.match(PROVIDER_REF);
      const { waitFor, ...inputs } = bd.inputs as Record<string, unknown> & { waitFor?: { name: string }[] };
      // Each render's manifests are registered once, as JSON text, in the BundleContent the pair names (core/model/pair.ts contentForm).
      const form = contentForm(d.spec.objects, d.spec.deletePolicy.ownerLabels)!;
      expect(inputs, d.key).to.deep.equal(JSON.parse(JSON.stringify({ ...d.spec, content: form.content, cluster: d.cluster, objects: form.objects })));
      const content = byName.get(form.content)!;
      expect([content.type, content.inputs.objects, content.parent], d.key).to.deep.equal([
        "pulumi-fleet:index:BundleContent",
        form.manifests,
        r.registrations.find((x) => x.type === "pulumi-fleet:index:Fleet")!.urn,
      ]);
      expect(
        (waitFor ?? []).map((w) => w.name),
        d.key,
      ).to.deep.equal(d.dependsOn);
      // It waits for the pairs it depends on and, when its cluster creates namespaces for it, for the cluster's setup.
      const setupUrn = r.registrations.find((x) => x.type === "pulumi-fleet:index:ClusterSetup" && x.name === d.cluster)!.urn;
      expect(bd.dependencies, d.key).to.deep.equal(
        [
          urnOf(contentForm(d.spec.objects, d.spec.deletePolicy.ownerLabels)!.content),
          ...d.dependsOn.map(urnOf),
          ...(d.clusterNamespaces.length ? [setupUrn] : []),
        ].sort(),
      );
    }
    expect(desired.deployments).to.have.length(5);
    expect(r.warnings).to.deep.equal(desired.deployments.flatMap((d) => d.warnings));
    expect(r.warnings).to.include("bundle p-paused is paused on cluster c1: its objects stay exactly as deployed (no update, no delete)");
    const raw = desired.deployments.find((d) => d.key === "c1/m/m-raw")!;
    expect(raw.spec.timeoutSeconds).to.equal(30);
    expect(raw.spec.objects["/ConfigMap/raw/kept"].retain).to.equal("helm.sh/resource-policy: keep");
    expect(Object.values(desired.deployments.find((d) => d.key === "c1/m/m-app")!.spec.objects).map((o) => o.retain)).to.deep.equal(["keepResources"]);
    expect(desired.deployments.find((d) => d.key === "c1/p/p-paused")!.spec.paused).to.equal(true);
    const c1 = r.registrations.find((x) => x.type === "pulumi-fleet:index:ClusterSetup" && x.name === "c1")!;
    expect((c1.inputs.objects as Record<string, { retain?: string }>)["/Namespace//raw"].retain).to.equal(RETAIN_REASONS.namespace);
  });
});
