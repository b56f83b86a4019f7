import { expect } from "chai";
import * as path from "node:path";
import { deployFleet, DeployOptions } from "../../components";
import { StackConfig } from "../../core/config/stack";
import { runUnderMocks, Registration } from "../support/mock-engine";
import { localStack, reordered, withoutProdTarget } from "../support/fleet-fixtures";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";

const RENDER = "/tmp/pulumi-fleet-render";
const cacheRoot = tempDir("pf-cache-");
const run = (config: StackConfig, previous: DeployOptions["previous"] = null) =>
  runUnderMocks(() => deployFleet(config, { cacheRoot, previous }));
const names = (regs: Registration[]) => regs.map((r) => r.urn);
const k8sObjects = (regs: Registration[]) => regs.filter((r) => r.custom && r.type.startsWith("kubernetes:") && !r.type.startsWith("pulumi:providers"));

describe("Fleet component (Pulumi mocks)", function () {
  this.timeout(30_000);

  it("registers clusters, GitRepos and one BundleDeployment per plan entry, with stable names and providers", async () => {
    const { registrations: regs } = await run(localStack(RENDER));
    const byType = (t: string) => regs.filter((r) => r.type === t).map((r) => r.name).sort();
    expect(byType("pulumi-fleet:index:Fleet")).to.deep.equal(["fleet"]);
    expect(byType("pulumi-fleet:index:Cluster")).to.deep.equal(["dev-1", "dev-2", "prod-1"]);
    expect(byType("pulumi-fleet:index:GitRepo")).to.deep.equal(["examples"]);
    expect(byType("pulumi-fleet:index:BundleDeployment")).to.deep.equal([
      "dev-1/examples-helm", "dev-1/examples-kustomize", "dev-1/examples-simple",
      "dev-2/examples-helm", "dev-2/examples-kustomize", "dev-2/examples-simple",
      "prod-1/examples-helm", "prod-1/examples-kustomize", "prod-1/examples-simple",
    ]);

    const providers = regs.filter((r) => r.type === "pulumi:providers:kubernetes");
    expect(providers.map((p) => [p.name, p.inputs.clusterIdentifier, p.inputs.renderYamlToDirectory])).to.deep.equal([
      ["dev-1", "dev-1", path.join(RENDER, "dev-1")], ["dev-2", "dev-2", path.join(RENDER, "dev-2")], ["prod-1", "prod-1", path.join(RENDER, "prod-1")],
    ]);
    // Every Kubernetes object goes through its own cluster's provider, and lives under its BundleDeployment.
    for (const obj of k8sObjects(regs)) {
      const cluster = obj.name.split("/")[0];
      expect(obj.provider, obj.name).to.match(new RegExp(`::${cluster}::${cluster}-id$`));
    }
    for (const bd of regs.filter((r) => r.type === "pulumi-fleet:index:BundleDeployment")) {
      expect(bd.parent).to.match(/pulumi-fleet:index:GitRepo::examples$/);
    }
  });

  it("renders raw YAML as one resource per object, with ownership labels, namespaces and overlays per cluster", async () => {
    const { registrations: regs } = await run(localStack(RENDER));
    const simple = k8sObjects(regs).filter((r) => r.name.startsWith("dev-1/examples-simple/")).map((r) => [r.type, r.name]);
    expect(simple).to.deep.equal([
      ["kubernetes:apps/v1:Deployment", "dev-1/examples-simple/apps:Deployment:simple:hello"],
      ["kubernetes:core/v1:ConfigMap", "dev-1/examples-simple/core:ConfigMap:simple:app-config"],
      ["kubernetes:core/v1:Service", "dev-1/examples-simple/core:Service:simple:hello"],
    ]);
    const deployment = regs.find((r) => r.name === "prod-1/examples-simple/apps:Deployment:simple:hello")!;
    const meta = deployment.inputs.metadata as { namespace: string; labels: Record<string, string> };
    expect(meta.namespace).to.equal("simple");
    expect(meta.labels).to.include({
      "fleet.cattle.io/repo-name": "examples", "fleet.cattle.io/bundle-name": "examples-simple",
      "fleet.cattle.io/cluster": "prod-1", "app.kubernetes.io/managed-by": "pulumi-fleet",
    });
    // prod overlay patches replicas to 3; dev keeps the base.
    expect((deployment.inputs.spec as { replicas: number }).replicas).to.equal(3);
    const devDeployment = regs.find((r) => r.name === "dev-1/examples-simple/apps:Deployment:simple:hello")!;
    expect((devDeployment.inputs.spec as { replicas: number }).replicas).to.not.equal(3);

    const ns = regs.filter((r) => r.type === "kubernetes:core/v1:Namespace" && /^dev-1\/[^/]+$/.test(r.name)).map((r) => [r.name, (r.inputs.metadata as { labels: object }).labels, r.retainOnDelete]);
    expect(ns).to.deep.equal([
      ["dev-1/helm-app", { "fleet.cattle.io/cluster": "dev-1", "app.kubernetes.io/managed-by": "pulumi-fleet" }, true],
      ["dev-1/simple", { team: "platform", "fleet.cattle.io/cluster": "dev-1", "app.kubernetes.io/managed-by": "pulumi-fleet" }, true],
    ]);
    // Objects wait for their namespace.
    const nsUrn = regs.find((r) => r.name === "dev-1/simple" && r.type === "kubernetes:core/v1:Namespace")!.urn;
    expect(devDeployment.dependencies).to.include(nsUrn);
  });

  it("registers helm and kustomize bundles as their rendered objects, one resource each, as raw YAML", async () => {
    const { registrations: regs } = await run(localStack(RENDER));
    expect(regs.filter((r) => r.type === "kubernetes:helm.sh/v4:Chart" || r.type === "kubernetes:kustomize/v2:Directory")).to.deep.equal([]);
    const settings = regs.find((r) => r.name === "prod-1/examples-helm/core:ConfigMap:helm-app:helm-app-settings")!;
    expect(settings.parent).to.match(/BundleDeployment::prod-1\/examples-helm$/);
    expect(settings.inputs.data).to.deep.include({ cluster: "prod-1", region: "eu-west", environment: "prod", replicas: "5", memory: "512Mi" });
    expect((settings.inputs.metadata as { labels: Record<string, string> }).labels).to.include({ "fleet.cattle.io/bundle-name": "examples-helm", "fleet.cattle.io/cluster": "prod-1" });

    const kustomized = k8sObjects(regs).filter((r) => r.name.includes("/examples-kustomize/")).map((r) => r.name).sort();
    expect(kustomized).to.deep.equal([
      "dev-1/examples-kustomize/core:ConfigMap:kustomize-dev:kustomized", "dev-1/examples-kustomize/core:Namespace:_:kustomize-dev",
      "dev-2/examples-kustomize/core:ConfigMap:kustomize-dev:kustomized", "dev-2/examples-kustomize/core:Namespace:_:kustomize-dev",
      "prod-1/examples-kustomize/core:ConfigMap:kustomize-prod:kustomized", "prod-1/examples-kustomize/core:Namespace:_:kustomize-prod",
    ]);
  });

  it("config A then B (one target removed): exactly the dropped cluster's deployments disappear, nothing else changes", async () => {
    const a = await run(localStack(RENDER));
    const b = await run(withoutProdTarget(localStack(RENDER)));
    const removed = names(a.registrations).filter((u) => !b.byUrn.has(u));
    const added = names(b.registrations).filter((u) => !a.byUrn.has(u));
    expect(added).to.deep.equal([]);
    expect(removed.length).to.be.greaterThan(3);
    for (const urn of removed) {
      const name = urn.split("::").pop()!;
      // The prod-1 BundleDeployments, their objects, and the namespaces only they needed.
      expect(name, urn).to.match(/^prod-1\//);
    }
    expect(removed.filter((u) => u.includes("BundleDeployment::")).map((u) => u.split("::").pop())).to.deep.equal([
      "prod-1/examples-helm", "prod-1/examples-kustomize", "prod-1/examples-simple",
    ]);
    // The prod-1 provider and cluster stay (the cluster is still in the fleet), and no remaining input moves.
    for (const r of b.registrations) {
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

  describe("safety", () => {
    const previous = { gitRepos: { examples: { commit: "dir-x", clusters: ["dev-1", "dev-2", "prod-1"] } } };
    const matchingNothing = (c: StackConfig, allowEmpty: boolean) => ({
      ...c, gitRepos: c.gitRepos.map((r) => ({ ...r, allowEmpty, targets: [{ name: "typo", clusterGroup: "prdo" }] })),
    });

    it("refuses to empty a GitRepo that deployed to clusters, before registering anything", async () => {
      let regs: Registration[] = [];
      const err = await runUnderMocks(async () => {
        try {
          await deployFleet(matchingNothing(localStack(RENDER), false), { cacheRoot, previous });
        } catch (e) {
          return e as Error;
        }
        throw new Error("expected the guard to fail");
      }).then((r) => { regs = r.registrations; return r.result; });
      expect(err.message).to.match(/gitRepo examples: targets: matched 3 cluster\(s\) in the last deployment \(dev-1, dev-2, prod-1\) and matches none now/);
      expect(err.message).to.contain("allowEmpty: true");
      expect(regs).to.deep.equal([]);
    });

    it("reads the last deployment from the stack's own outputs", async () => {
      const r = await runUnderMocks(() => deployFleet(matchingNothing(localStack(RENDER), false), { cacheRoot }).then(() => "ok", (e: Error) => e.message),
        { stackOutputs: { summary: previous } });
      expect(r.result).to.match(/matches none now/);
      expect(r.registrations.map((x) => x.type)).to.deep.equal(["pulumi:pulumi:StackReference"]);
    });

    it("allowEmpty: true lets a GitRepo drop to zero clusters", async () => {
      const r = await run(matchingNothing(localStack(RENDER), true), previous);
      expect(r.registrations.filter((x) => x.type === "pulumi-fleet:index:BundleDeployment")).to.deep.equal([]);
    });

    it("a source that cannot be read fails before any registration", async () => {
      const config = localStack(RENDER);
      const broken = { ...config, gitRepos: [{ ...config.gitRepos[0], repo: "file:///nonexistent/repo.git" }] };
      const r = await runUnderMocks(() => deployFleet(broken, { cacheRoot, previous: null }).then(() => "ok", (e: Error) => e.message));
      expect(r.result).to.match(/gitRepo examples/);
      expect(r.registrations).to.deep.equal([]);
    });

    it("an invalid label value fails before any registration, naming the object, key and value", async () => {
      const repo = new TestRepo({
        "app/cm.yaml": CONFIGMAP("ok"),
        "app/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  labels:\n    owner: system:kube-controller-manager\n",
      });
      const config: StackConfig = { file: "stacks/Pulumi.test.yaml", fleetVersion: "0.13.1", agent: { apiServerURL: "https://fleet.example.com" }, renderDir: RENDER, clusters: [{ name: "c1", labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false }],
        clusterGroups: [], gitRepos: [gitRepoConfig({ name: "bad", repo: repo.url(), targets: [{ clusterName: "c1" }] })] };
      const r = await runUnderMocks(() => deployFleet(config, { cacheRoot, previous: null }).then(() => "ok", (e: Error) => e.message));
      expect(r.result).to.equal('gitRepo bad, bundle bad, cluster c1: metadata.labels: ConfigMap default/bad: invalid label value "system:kube-controller-manager" for key "owner": must be empty or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character');
      expect(r.registrations).to.deep.equal([]);
    });
  });

  describe("lifecycle options", () => {
    it("paused bundles keep their objects as deployed (ignoreChanges *, retained on delete) and say so", async () => {
      const config = localStack(RENDER);
      const paused = { ...config, gitRepos: config.gitRepos.map((r) => ({ ...r, paused: true })) };
      const r = await run(paused);
      for (const obj of k8sObjects(r.registrations).filter((o) => o.type !== "kubernetes:core/v1:Namespace" && !o.name.includes("/agent/"))) {
        expect(obj.ignoreChanges, obj.name).to.deep.equal(["*"]);
        expect(obj.retainOnDelete, obj.name).to.equal(true);
      }
      expect(r.warnings).to.include("bundle examples-simple is paused on cluster dev-1: its objects stay exactly as deployed (no update, no delete)");
    });

    it("a prune keeps what Helm's uninstall keeps: CRDs unless deleteCRDResources, a chart's crds/, keep-annotated objects", async () => {
      const crd = (group: string) => `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.${group}\n` +
        `spec:\n  group: ${group}\n  scope: Namespaced\n  names: {kind: Widget, plural: widgets}\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n`;
      const repo = new TestRepo({
        "raw/crd.yaml": crd("raw.example.com"),
        "raw/cm.yaml": CONFIGMAP("plain"),
        "raw/kept.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n  annotations: {helm.sh/resource-policy: \" Keep \"}\n",
        "asked/crd.yaml": crd("asked.example.com"),
        "asked/fleet.yaml": "deleteCRDResources: true\n",
        "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        "chart/crds/crd.yaml": crd("chart.example.com"),
        "chart/templates/cm.yaml": CONFIGMAP("from-chart"),
      });
      const clusters = [{ name: "c1", labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false }];
      const config: StackConfig = { file: "stacks/Pulumi.test.yaml", fleetVersion: "0.13.1", agent: { apiServerURL: "https://fleet.example.com" }, renderDir: RENDER, clusters, clusterGroups: [],
        gitRepos: [gitRepoConfig({ name: "keep", repo: repo.url(), paths: ["raw", "asked", "chart"], targets: [{ clusterSelector: {} }] })] };
      const r = await run(config);
      const retained = (name: string) => {
        const reg = r.registrations.find((x) => x.name === name);
        expect(reg, name).to.not.equal(undefined);
        return reg!.retainOnDelete;
      };
      expect(retained("c1/keep-raw/apiextensions.k8s.io:CustomResourceDefinition:_:widgets.raw.example.com")).to.equal(true);
      expect(retained("c1/keep-raw/core:ConfigMap:default:kept")).to.equal(true);
      expect(retained("c1/keep-raw/core:ConfigMap:default:plain")).to.equal(false);
      expect(retained("c1/keep-asked/apiextensions.k8s.io:CustomResourceDefinition:_:widgets.asked.example.com")).to.equal(false);
      expect(retained("c1/keep-chart/apiextensions.k8s.io:CustomResourceDefinition:_:widgets.chart.example.com")).to.equal(true);
      expect(retained("c1/keep-chart/core:ConfigMap:default:from-chart")).to.equal(false);
    });

    it("keepResources maps to retainOnDelete; dependsOn becomes a dependency on the same cluster", async () => {
      const repo = new TestRepo({
        "base/cm.yaml": CONFIGMAP("base"),
        "app/cm.yaml": CONFIGMAP("app"),
        "app/fleet.yaml": "keepResources: true\ndependsOn:\n  - name: deps-base\n",
      });
      const clusters = ["c1", "c2"].map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false }));
      const config: StackConfig = { file: "stacks/Pulumi.test.yaml", fleetVersion: "0.13.1", agent: { apiServerURL: "https://fleet.example.com" }, renderDir: RENDER, clusters, clusterGroups: [],
        gitRepos: [gitRepoConfig({ name: "deps", repo: repo.url(), paths: ["base", "app"], targets: [{ clusterSelector: {} }] })] };
      const r = await run(config);
      const app = r.registrations.find((x) => x.name === "c1/deps-app/core:ConfigMap:default:app")!;
      const base = r.registrations.find((x) => x.name === "c1/deps-base/core:ConfigMap:default:base")!;
      const baseC2 = r.registrations.find((x) => x.name === "c2/deps-base/core:ConfigMap:default:base")!;
      expect(app.retainOnDelete).to.equal(true);
      expect(base.retainOnDelete).to.equal(false);
      expect(app.dependencies).to.include(base.urn);
      expect(app.dependencies).to.not.include(baseC2.urn);
    });
  });
});
