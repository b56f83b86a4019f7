import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { readBundles } from "../../core/bundles/read";
import { renderBundle, renderObjects } from "../support/render";
import { resolveSource } from "../../core/source/git";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { GitRepoConfig } from "../../core/config/git-repo";

/** Commits the files to a real repository, resolves it through the git source, reads its bundles. */
async function bundlesOf(files: Record<string, string>, over: Partial<GitRepoConfig> = {}, setup?: (r: TestRepo) => void) {
  const repo = new TestRepo(files);
  setup?.(repo);
  const cfg = gitRepoConfig({ name: "repo", repo: repo.url(), ...over });
  const src = await resolveSource(cfg, tempDir("pf-cache-"));
  return readBundles(src.dir, cfg);
}

async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected an error");
}

describe("bundle reader (Fleet rules, real git)", () => {
  it("discovers bundles: root with manifests, subdirectories with fleet.yaml, nested bundles separate", async () => {
    const bundles = await bundlesOf({
      "cm.yaml": CONFIGMAP("root"),
      "plain/cm.yaml": CONFIGMAP("plain"),
      "app/fleet.yaml": "defaultNamespace: app\n",
      "app/cm.yaml": CONFIGMAP("app"),
      "app/nested/fleet.yaml": "{}\n",
      "app/nested/cm.yaml": CONFIGMAP("nested"),
      "README.md": "docs",
    });
    expect(bundles.map((b) => [b.name, b.path])).to.deep.equal([
      ["repo", "."],
      ["repo-app", "app"],
      ["repo-app-nested", "app/nested"],
    ]);
    const root = bundles[0];
    expect(root.files.map((f) => f.name)).to.include("plain/cm.yaml");
    const app = await renderObjects(bundles[1]);
    expect(app.map((o) => o.metadata.name)).to.deep.equal(["app"]); // the nested bundle's files are not the parent's manifests
    expect(app[0].metadata.namespace).to.equal("app");
  });

  it("expands path globs to directories, and fails on a path that matches nothing", async () => {
    const files = {
      "apps/a/fleet.yaml": "{}\n",
      "apps/a/cm.yaml": CONFIGMAP("a"),
      "apps/b/fleet.yaml": "{}\n",
      "apps/b/cm.yaml": CONFIGMAP("b"),
      "apps/x.yaml": CONFIGMAP("x"),
    };
    const bundles = await bundlesOf(files, { paths: ["apps/*"] });
    expect(bundles.map((b) => b.name)).to.deep.equal(["repo-apps-a", "repo-apps-b"]);
    expect(await errorOf(bundlesOf(files, { paths: ["missing"] })))
      .to.contain("gitRepo repo")
      .and.contain('path "missing" matches no directory');
  });

  it("applies .fleetignore and skips hidden files", async () => {
    const [b] = await bundlesOf({
      "fleet.yaml": "{}\n",
      ".fleetignore": "# comment\nignored.yaml\nskipdir/*\n",
      "cm.yaml": CONFIGMAP("kept"),
      "ignored.yaml": CONFIGMAP("ignored"),
      "skipdir/cm.yaml": CONFIGMAP("skipped"),
      "sub/.fleetignore": "*.json\n",
      "sub/a.json": "{}",
      "sub/b.yaml": CONFIGMAP("b"),
      ".hidden.yaml": CONFIGMAP("hidden"),
      ".github/workflow.yaml": "on: push\n",
    });
    expect(b.files.map((f) => f.name)).to.deep.equal(["cm.yaml", "sub/b.yaml"]);
  });

  it("every setting given that is not honoured yet (or honoured differently) is a warning naming the file, field and value; defaults say nothing", async () => {
    const [b] = await bundlesOf(
      {
        "fleet.yaml": [
          "serviceAccount: deployer",
          "forceSyncGeneration: 2",
          "correctDrift: {enabled: true, force: true}",
          "diff: {comparePatches: [{kind: Deployment, name: web, jsonPointers: [/spec/replicas], operations: [{op: remove, path: /spec/paused}, {op: replace, path: /spec/x, value: x}]}]}",
          "ignore: {conditions: [{type: Ready}]}",
          "rolloutStrategy: {maxUnavailable: 1}",
          "helm: {chart: ./chart, timeoutSeconds: 60, atomic: true, maxHistory: 3, force: true, takeOwnership: true, waitForJobs: true}",
          "dependsOn: [{name: db, acceptedStates: [Ready, Modified]}]",
          "targetCustomizations:",
          "  - name: prod",
          "    clusterSelector: {matchLabels: {env: prod}}",
          "    helm: {atomic: true}",
          "    ignore: {conditions: [{type: Stalled}]}",
        ].join("\n"),
        "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        "chart/templates/cm.yaml": CONFIGMAP("x"),
      },
      { serviceAccount: "repo-sa" },
    );
    const fields = b.warnings!.map((w) => w.split(": ").slice(0, 2).join(": "));
    expect(fields).to.deep.equal([
      "fleet.yaml: helm.maxHistory",
      "fleet.yaml: helm.atomic",
      "fleet.yaml: helm.waitForJobs",
      "fleet.yaml: helm.force",
      "fleet.yaml: diff.comparePatches[0].operations[1].op",
      "fleet.yaml: correctDrift.force",
      "fleet.yaml: targetCustomizations[0].helm.atomic",
      "fleet.yaml: targetCustomizations[0].ignore.conditions",
      "fleet.yaml: dependsOn[0].acceptedStates",
    ]);
    // rolloutStrategy is honoured (core/targeting/rollout.ts): read, not warned here.
    expect(b.rolloutStrategy).to.deep.equal({ partitions: [], maxUnavailable: 1 });
    expect(b.warnings!.join("\n"))
      .to.contain("helm.atomic: true is not honoured yet: the engine does not roll back a failed update")
      // The provider acts on helm.force (fluxcd/pkg/ssa's Force): the user is told what it destroys, never that it is ignored.
      .and.contain("helm.force: true is honoured differently: an object whose immutable fields changed is deleted and recreated")
      .and.not.match(/helm\.force: true is not honoured/)
      .and.not.contain("serviceAccount"); // honoured: core/desired/service-accounts.ts
    // The top-level ignore is honoured (status); a target's is dropped by Fleet's merge, and said so.
    expect(b.options.ignore).to.deep.equal({ conditions: [{ type: "Ready" }] });
    // acceptedStates: [Ready] is Fleet's default (no warning); an unknown state is refused, as Fleet's reader refuses it.
    const [ready] = await bundlesOf({ "fleet.yaml": "dependsOn: [{name: db, acceptedStates: [Ready]}]\n", "cm.yaml": CONFIGMAP("x") });
    expect(ready.warnings).to.deep.equal([]);
    let refused = "";
    await bundlesOf({ "fleet.yaml": "dependsOn: [{name: db, acceptedStates: [Ready, Healthy]}]\n", "cm.yaml": CONFIGMAP("x") }).catch((e: Error) => {
      refused = e.message;
    });
    expect(refused).to.contain('dependsOn[0].acceptedStates[1]: invalid state "Healthy", valid values are: Ready, NotReady');
    const [plain] = await bundlesOf({
      "fleet.yaml": "helm: {chart: ./chart, atomic: false, timeoutSeconds: 0}\ncorrectDrift: {enabled: false}\n",
      "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    });
    expect(plain.warnings).to.deep.equal([]);
  });

  it("reads top-level helm.valuesFiles only when helm.chart or helm.repo is set, as Fleet does, and says so; a target's always", async () => {
    // Fleet v0.16.0 internal/bundlereader/resources.go, readResources: parseValuesFiles(base, spec.Helm) runs only under
    // `spec.Helm.Chart != "" || spec.Helm.Repo != ""`, a target's unconditionally; ignoreApplyConfigs leaves every listed file
    // out of the resources either way. The bundle directory as the chart: the chart's defaults, extra.yaml neither merged nor deployed.
    const chart = {
      "Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
      "values.yaml": "replicaCount: 3\n",
      "templates/cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {replicas: "{{ .Values.replicaCount }}"}\n',
      "extra.yaml": "replicaCount: 7\n",
    };
    const [own] = await bundlesOf({ ...chart, "fleet.yaml": "helm:\n  valuesFiles: [extra.yaml]\n" });
    expect(own.style).to.deep.equal({ kind: "helm", path: "." });
    expect(own.options.helm!.values).to.equal(undefined);
    expect(own.files.map((f) => f.name)).not.to.include("extra.yaml");
    expect((await renderObjects(own))[0].data).to.deep.equal({ replicas: "3" });
    expect(own.warnings).to.deep.equal([
      'fleet.yaml: helm.valuesFiles: ["extra.yaml"] is not read, as in Fleet: Fleet reads top-level valuesFiles only when ' +
        "helm.chart or helm.repo is set, so their values are not merged, and the files are still left out of the bundle (set helm.chart: . to merge them)",
    ]);
    // What ignoreApplyConfigs leaves out is said file by file: `./v/prod.yaml` is neither `v/prod.yaml` nor `prod.yaml`, so it stays.
    const [mixed] = await bundlesOf({ ...chart, "v/prod.yaml": "replicaCount: 9\n", "fleet.yaml": "helm:\n  valuesFiles: [extra.yaml, ./v/prod.yaml]\n" });
    expect(mixed.files.map((f) => f.name))
      .to.include("v/prod.yaml")
      .and.not.to.include("extra.yaml");
    expect(mixed.warnings).to.deep.equal([
      'fleet.yaml: helm.valuesFiles: ["extra.yaml","./v/prod.yaml"] is not read, as in Fleet: Fleet reads top-level valuesFiles only when ' +
        'helm.chart or helm.repo is set, so their values are not merged, and ["extra.yaml"] is still left out of the bundle; ["./v/prod.yaml"] stays in it ' +
        "(Fleet leaves out only a path as written or a base name) (set helm.chart: . to merge them)",
    ]);
    // Not read, so not refused either: a missing file is no error in Fleet.
    const [missing] = await bundlesOf({ ...chart, "fleet.yaml": "helm:\n  valuesFiles: [missing.yaml]\n" });
    expect(missing.warnings).to.have.length(1);
    // helm.chart: . names the same chart and reads them; a target's valuesFiles are read without chart or repo.
    const [named] = await bundlesOf({ ...chart, "fleet.yaml": "helm:\n  chart: .\n  valuesFiles: [extra.yaml]\n" });
    expect((await renderObjects(named))[0].data).to.deep.equal({ replicas: "7" });
    expect(named.warnings).to.deep.equal([]);
    const [target] = await bundlesOf({
      ...chart,
      "fleet.yaml": "targetCustomizations:\n  - name: all\n    clusterSelector: {}\n    helm: {valuesFiles: [extra.yaml]}\n",
    });
    expect(target.targets[0].helm!.values).to.deep.equal({ replicaCount: 7 });
    expect(target.files.map((f) => f.name)).not.to.include("extra.yaml");
    // ignoreApplyConfigs (same file) lists each values file and its filepath.Base, matched against every relative path.
    const [based] = await bundlesOf({
      "fleet.yaml": "helm:\n  chart: ./c\n  valuesFiles: [./v/prod.yaml]\n",
      "v/prod.yaml": "a: 1\n",
      "prod.yaml": CONFIGMAP("p"),
      "c/Chart.yaml": chart["Chart.yaml"],
    });
    expect(based.options.helm!.values).to.deep.equal({ a: 1 });
    expect(based.files.map((f) => f.name).sort()).to.deep.equal(["c/Chart.yaml", "v/prod.yaml"]);
  });

  it("reads YAML as Fleet does (sigs.k8s.io/yaml, YAML 1.1), not as a YAML 1.2 parser would", async () => {
    const [b] = await bundlesOf({
      "fleet.yaml": 'helm:\n  chart: ./chart\n  values: {enabled: yes, legacy: on, port: 010, big: 1_000, plain: "yes", n: kept}\n  valuesFiles: [v.yaml]\n',
      "v.yaml": "fromFile: Off\nmode: 0644\n",
      "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
      "chart/templates/cm.yaml": CONFIGMAP("x"),
    });
    // 1.2 would give "yes", "on", 10, "1_000", "Off", 644 and the key "n".
    expect(b.options.helm!.values).to.deep.equal({ enabled: true, legacy: true, port: 8, big: 1000, plain: "yes", false: "kept", fromFile: false, mode: 420 });
  });

  it("reads fleet.yaml options, values files, and names targets like Fleet", async () => {
    const [b] = await bundlesOf(
      {
        "fleet.yaml": [
          "name: custom-name",
          "labels: {tier: web}",
          "helm:",
          "  chart: ./chart",
          "  values: {a: 1, nested: {x: 1, y: 1}}",
          "  valuesFiles: [extra-values.yaml]",
          "targetCustomizations:",
          "  - clusterSelector: {matchLabels: {env: prod}}",
          "    helm: {values: {a: 2}}",
          "  - name: named",
          "    clusterName: c9",
        ].join("\n"),
        "extra-values.yaml": "nested: {y: 2}\nlist: [1]\n",
        "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        "chart/templates/cm.yaml": CONFIGMAP("x"),
      },
      { targets: [{ name: "all", clusterSelector: {} }] },
    );
    expect(b.name).to.equal("custom-name");
    expect(b.style).to.deep.equal({ kind: "helm", path: "chart" });
    // The key `y` is YAML 1.1's true, in fleet.yaml and in values files alike, as Fleet reads them.
    expect(b.options.helm!.values).to.deep.equal({ a: 1, nested: { x: 1, true: 2 }, list: [1] });
    expect(b.files.map((f) => f.name)).not.to.include("extra-values.yaml");
    expect(b.targets.map((t) => t.name)).to.deep.equal(["target000", "named", "all"]);
    expect(b.restrictions).to.deep.equal([{ name: "all", clusterSelector: {} }]);
  });

  it("overlays replace and patch files", async () => {
    const [b] = await bundlesOf({
      "fleet.yaml": "{}\n",
      "cm.yaml": CONFIGMAP("cm", { a: "base" }),
      "deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1, paused: false}\n",
      "overlays/prod/cm.yaml": CONFIGMAP("cm", { a: "prod" }),
      "overlays/prod/deploy_patch.yaml": "spec: {replicas: 3, paused: null}\n",
      "overlays/json/deploy_patch.yaml": "- {op: replace, path: /spec/replicas, value: 7}\n",
    });
    const objs = await renderObjects(b, { yaml: { overlays: ["prod"] } });
    expect(objs.find((o) => o.kind === "ConfigMap")!.data).to.deep.equal({ a: "prod" });
    expect(objs.find((o) => o.kind === "Deployment")!.spec).to.deep.equal({ replicas: 3 });
    const json = await renderObjects(b, { yaml: { overlays: ["json"] } });
    expect((json.find((o) => o.kind === "Deployment")!.spec as { replicas: number }).replicas).to.equal(7);
    // Fleet ignores an overlay with no files; here that is a warning.
    expect((await renderBundle(b, { yaml: { overlays: ["nope"] } })).warnings).to.deep.equal([
      'yaml.overlays: overlay "nope" has no files under overlays/nope/ (Fleet ignores it too)',
    ]);
  });

  it("forces a namespace, and refuses cluster-scoped objects under a forced namespace", async () => {
    const [b] = await bundlesOf({ "cm.yaml": CONFIGMAP("a"), "ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: extra}\n" });
    const objs = await renderObjects(b, {});
    expect(objs.map((o) => [o.kind, o.metadata.namespace])).to.deep.equal([
      ["Namespace", undefined],
      ["ConfigMap", "default"],
    ]); // Helm's install order
    expect(await errorOf(renderObjects(b, { namespace: "forced" }, "c1"))).to.match(
      /cluster c1: invalid cluster scoped object \[name=extra kind=Namespace apiVersion=v1\] found. Your config uses targetNamespace or namespace \(forced\) and thus forbids cluster-scoped resources. If you do not intend to disallow cluster scoped resources, you could switch to defaultNamespace/,
    );
  });

  it("a chart's crds/ deploy under a forced namespace (installed outside Fleet's post-renderer); its templates still may not be cluster-scoped", async () => {
    const crd =
      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n" +
      "spec:\n  group: example.com\n  scope: Namespaced\n  names: {kind: Widget, plural: widgets}\n  versions: [{name: v1, served: true, storage: true}]\n";
    const [b] = await bundlesOf({ "Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n", "crds/crd.yaml": crd, "templates/cm.yaml": CONFIGMAP("a") });
    const objs = await renderObjects(b, { namespace: "forced" });
    expect(objs.map((o) => [o.kind, o.metadata.namespace])).to.deep.equal([
      ["CustomResourceDefinition", undefined],
      ["ConfigMap", "forced"],
    ]);
    const [withRole] = await bundlesOf({
      "Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
      "crds/crd.yaml": crd,
      "templates/role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\nrules: []\n",
    });
    expect(await errorOf(renderObjects(withRole, { namespace: "forced" }))).to.match(
      /invalid cluster scoped object \[name=r kind=ClusterRole apiVersion=rbac.authorization.k8s.io\/v1\] found/,
    );
  });

  it("a kustomize.dir that is missing or outside the bundle is a warning (Fleet ignores it without a word)", async () => {
    const [plain] = await bundlesOf({ "cm.yaml": CONFIGMAP("a") });
    expect((await renderBundle(plain, { kustomize: { dir: "../other" } })).warnings).to.deep.equal([
      'kustomize.dir "../other" is outside the bundle: nothing is kustomized (Fleet ignores it without a word)',
    ]);
    const [b] = await bundlesOf({ "cm.yaml": CONFIGMAP("a"), "base/kustomization.yaml": "resources: []\n" });
    expect((await renderBundle(b, { kustomize: { dir: "overlays/prod" } })).warnings).to.include(
      'kustomize.dir "overlays/prod" has no kustomization.yaml in the bundle: nothing is kustomized (Fleet ignores it without a word)',
    );
    expect((await renderBundle(b, { kustomize: { dir: "base" } })).warnings).to.deep.equal([]);
    // With a kustomization in the bundle, Fleet's kustomize fails on a directory above the bundle; so does this.
    expect(await errorOf(renderBundle(b, { kustomize: { dir: "../other" } }))).to.match(/cannot add a directory above/);
  });

  it("gives the same manifestId whatever the file system order, and a new one when content changes", async () => {
    const a = await bundlesOf({ "x.yaml": CONFIGMAP("x"), "y.yaml": CONFIGMAP("y") });
    const b = await bundlesOf({ "y.yaml": CONFIGMAP("y"), "x.yaml": CONFIGMAP("x") });
    const c = await bundlesOf({ "x.yaml": CONFIGMAP("x"), "y.yaml": CONFIGMAP("z") });
    expect(a[0].manifestId)
      .to.equal(b[0].manifestId)
      .and.match(/^s-[0-9a-f]{61}$/);
    expect(c[0].manifestId).not.to.equal(a[0].manifestId);
  });

  describe("bad input gives a clear error", () => {
    it("invalid YAML names the file and line", async () => {
      const msg = await errorOf(bundlesOf({ "app/fleet.yaml": "helm:\n  values: [unclosed\n", "app/cm.yaml": CONFIGMAP("a") }));
      expect(msg).to.match(/^app\/fleet\.yaml:\d+ gitRepo repo, bundle repo-app: invalid YAML/);
      const inValues = await errorOf(
        bundlesOf({
          "app/fleet.yaml": "name: named\nhelm:\n  chart: ./c\n  valuesFiles: [v.yaml]\n",
          "app/v.yaml": "a: [unclosed\n",
          "app/c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        }),
      );
      expect(inValues).to.match(/^app\/v\.yaml:\d+ gitRepo repo, bundle named: invalid YAML/);
    });

    it("fleet.yaml fields as Fleet matches them: any case is the field, an unknown one is ignored; each is a warning naming it", async () => {
      const [b] = await bundlesOf({
        "fleet.yaml": "NamespaceLabels: {team: a}\nDefaultNamespace: apps\nhelm:\n  valuse: {a: 1}\n  ReleaseName: web\nkind: GitRepo\nspec: {repo: x}\n",
        "cm.yaml": CONFIGMAP("a"),
      });
      expect(b.options.namespaceLabels).to.deep.equal({ team: "a" });
      expect(b.options.defaultNamespace).to.equal("apps");
      expect(b.options.helm?.releaseName).to.equal("web");
      expect(b.warnings).to.include.members([
        "fleet.yaml: NamespaceLabels: read as namespaceLabels (Fleet matches fleet.yaml field names without regard to case)",
        "fleet.yaml: DefaultNamespace: read as defaultNamespace (Fleet matches fleet.yaml field names without regard to case)",
        "fleet.yaml: kind: unknown field, ignored as Fleet ignores it",
        "fleet.yaml: spec: unknown field, ignored as Fleet ignores it",
        "fleet.yaml: helm.valuse: unknown field, ignored as Fleet ignores it",
        "fleet.yaml: helm.ReleaseName: read as releaseName (Fleet matches fleet.yaml field names without regard to case)",
      ]);
      // Both spellings: as in Fleet, the YAML is turned into JSON with sorted keys (sigs.k8s.io/yaml) and Go's
      // decoder sets the field for each in that order, so the exact spelling (lower case first letter) is last and wins.
      const [both] = await bundlesOf({ "fleet.yaml": "defaultNamespace: first\nDefaultNamespace: second\n", "cm.yaml": CONFIGMAP("a") });
      expect(both.options.defaultNamespace).to.equal("first");
      // Values are still checked strictly.
      expect(await errorOf(bundlesOf({ "fleet.yaml": "KeepResources: maybe\n", "cm.yaml": CONFIGMAP("a") }))).to.contain(
        "keepResources: must be true or false",
      );
    });

    it("a symlink out of the bundle", async () => {
      const msg = await errorOf(
        bundlesOf({ "app/fleet.yaml": "{}\n", "app/cm.yaml": CONFIGMAP("a"), "secret.yaml": CONFIGMAP("s") }, {}, (r) =>
          r.symlink("../secret.yaml", "app/link.yaml"),
        ),
      );
      expect(msg).to.contain("bundle repo-app").and.contain("symlink link.yaml points outside the bundle directory");
    });

    it("a bundle with no resources", async () => {
      const msg = await errorOf(bundlesOf({ "app/fleet.yaml": "defaultNamespace: x\n", "app/README.md": "nothing" }));
      expect(msg).to.contain("gitRepo repo, bundle repo-app: bundle has no resources");
    });

    it("helm.chart naming a chart archive in the bundle: refused, where Fleet deploys the other YAML files without the chart", async () => {
      // Fleet v0.16.0: internal/bundlereader/resources.go addRemoteCharts pulls nothing when os.Stat(base/chart) finds the file, and
      // style.go DetermineStyle looks for <chart>/Chart.yaml ("app-1.0.0.tgz/Chart.yaml"), finds none, so the bundle is raw YAML:
      // cm.yaml deploys, the chart never does. Refused here on purpose (docs/fleet-compatibility.md, Deliberate differences).
      const msg = await errorOf(bundlesOf({ "fleet.yaml": "helm:\n  chart: ./app-1.0.0.tgz\n", "app-1.0.0.tgz": "an archive", "cm.yaml": CONFIGMAP("a") }));
      expect(msg).to.contain("helm.chart: helm chart app-1.0.0.tgz is a file, not a chart directory: Fleet does not unpack a chart archive in the bundle");
      const absent = await errorOf(bundlesOf({ "fleet.yaml": "helm:\n  chart: ./chart\n", "cm.yaml": CONFIGMAP("a") }));
      expect(absent).to.contain('"./chart" is neither a chart in the bundle nor');
    });

    it("a repository with no bundle at all", async () => {
      const msg = await errorOf(bundlesOf({ "README.md": "nothing" }));
      expect(msg).to.contain("gitRepo repo: no resource found at the following paths: .");
    });

    it("a label value Kubernetes would reject", async () => {
      const msg = await errorOf(bundlesOf({ "fleet.yaml": "labels:\n  owner: system:kube-controller-manager\n", "cm.yaml": CONFIGMAP("a") }));
      expect(msg).to.contain('labels.owner: invalid label value "system:kube-controller-manager"');
    });

    it("an object without a name, and a patch of a multi-document file", async () => {
      const [b] = await bundlesOf({ "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-}\n" });
      expect(await errorOf(renderObjects(b, {}))).to.match(/gitRepo repo, bundle repo, cluster c1: ConfigMap has no metadata.name/);
      const [m] = await bundlesOf({
        "fleet.yaml": "{}\n",
        "two.yaml": `${CONFIGMAP("a")}---\n${CONFIGMAP("b")}`,
        "overlays/o/two_patch.yaml": "data: {k: w}\n",
      });
      expect(await errorOf(renderObjects(m, { yaml: { overlays: ["o"] } }))).to.match(/holds 2 YAML documents/);
    });
  });

  it("reads the project's own examples/ repository", async () => {
    const dir = path.resolve(__dirname, "../../examples");
    expect(fs.existsSync(dir)).to.equal(true);
    const bundles = await readBundles(dir, gitRepoConfig({ name: "examples", repo: dir, paths: ["simple", "kustomize", "helm"] }));
    expect(bundles.map((b) => [b.name, b.style.kind])).to.deep.equal([
      ["examples-simple", "yaml"],
      ["examples-kustomize", "kustomize"],
      ["examples-helm", "helm"],
    ]);
  });
});
