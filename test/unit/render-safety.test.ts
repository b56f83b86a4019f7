/**
 * A GitRepo is input from whoever can push to it: rendering must never read the machine that runs
 * `pulumi up`. Each escape attempt fails with an error naming the bundle and the path, and nothing
 * of the runner's file system reaches a manifest. The bundles are read from directories on disk, as
 * `npm run render -- DIR` reads them.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { readBundles } from "../../core/bundles/read";
import { gitRepoConfig, tempDir } from "../support/git-fixtures";
import { renderBundle } from "../support/render";
import { buildPlan } from "../../core/targeting/plan";
import { renderDeployments } from "../../core/render/deployments";
import { runRenderer } from "../../core/renderer/fleet-render";
import { rejectionOf } from "../support/rejection";

const SECRET = "runner-secret-do-not-ship";

/** A repository directory next to a file that must stay unreadable; returns its bundles. */
function bundlesIn(files: Record<string, string>) {
  const root = tempDir("pf-escape-");
  fs.writeFileSync(path.join(root, "secret.txt"), SECRET);
  const repoDir = path.join(root, "repo");
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(repoDir, name)), { recursive: true });
    fs.writeFileSync(path.join(repoDir, name), content);
  }
  return readBundles(repoDir, gitRepoConfig({ name: "repo", repo: repoDir }));
}

async function renderError(files: Record<string, string>): Promise<string> {
  const [b] = await bundlesIn(files);
  try {
    const r = await renderBundle(b);
    throw new Error(`rendered without an error: ${JSON.stringify(r.objects)}`);
  } catch (err) {
    const msg = (err as Error).message;
    expect(msg).not.to.contain(SECRET);
    return msg;
  }
}

const KUSTOMIZATION = (body: string) => `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${body}`;

describe("rendering reads the bundle and nothing else", () => {
  it("kustomize: a generator reading a file outside the bundle", async () => {
    const msg = await renderError({
      "kustomization.yaml": KUSTOMIZATION("configMapGenerator:\n- name: leak\n  files:\n  - passwd=../../../../../../../../etc/passwd\n  - s=../secret.txt\n"),
    });
    expect(msg).to.match(/bundle repo, cluster c1: .*(passwd|secret\.txt)/);
  });

  it("kustomize: resources, components and patches outside the bundle", async () => {
    expect(await renderError({ "kustomization.yaml": KUSTOMIZATION("resources:\n- ../secret.txt\n") })).to.match(/bundle repo[\s\S]*secret\.txt/);
    expect(await renderError({ "kustomization.yaml": KUSTOMIZATION("resources:\n- /etc/passwd\n") })).to.match(/bundle repo[\s\S]*etc\/passwd/);
    expect(await renderError({ "kustomization.yaml": KUSTOMIZATION("components:\n- ../other\n") })).to.match(/bundle repo[\s\S]*other/);
    expect(
      await renderError({
        "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
        "kustomization.yaml": KUSTOMIZATION("resources:\n- cm.yaml\npatches:\n- path: ../secret.txt\n"),
      }),
    ).to.match(/bundle repo[\s\S]*secret\.txt/);
  });

  it("kustomize: helm charts inflated by the kustomize plugin stay off", async () => {
    const msg = await renderError({ "kustomization.yaml": KUSTOMIZATION("helmCharts:\n- name: x\n  repo: https://127.0.0.1:1/charts\n  version: 1.0.0\n") });
    expect(msg).to.match(/bundle repo[\s\S]*helm/i);
  });

  it("a chart's file:// dependency outside the GitRepo: refused when the bundle is read, before anything is read there", async () => {
    expect(
      await rejectionOf(
        bundlesIn({
          "Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: outside\n  version: 1.0.0\n  repository: file://../../outside\n",
          "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
        }),
      ),
    ).to.contain(
      "Chart.yaml gitRepo repo, bundle repo: dependencies: chart .: dependency outside: file://../../outside is not a chart directory inside the GitRepo",
    );
    // An absolute path names the runner's files: refused too (never read as a path inside the checkout).
    expect(
      await rejectionOf(
        bundlesIn({
          "Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: etc\n  version: 1.0.0\n  repository: file:///etc\n",
          "etc/Chart.yaml": "apiVersion: v2\nname: etc\nversion: 1.0.0\n",
          "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
        }),
      ),
    ).to.contain("dependency etc: file:///etc is not a chart directory inside the GitRepo");
  });

  it("chart templates cannot read files outside the chart (.Files)", async () => {
    const [b] = await bundlesIn({
      "Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n",
      "templates/cm.yaml":
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  s: {{ .Files.Get "../secret.txt" | quote }}\n  p: {{ .Files.Get "/etc/passwd" | quote }}\n',
    });
    const { objects } = await renderBundle(b);
    expect(JSON.stringify(objects)).not.to.contain(SECRET).and.not.to.contain("root:");
  });
});

describe("one owner per object and cluster", () => {
  const cm = (name: string, ns?: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${ns ? `  namespace: ${ns}\n` : ""}data: {a: "1"}\n`;
  async function renderAll(files: Record<string, string>, clusters = ["c1"]) {
    const root = tempDir("pf-owner-");
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      fs.writeFileSync(path.join(root, name), content);
    }
    const bundles = await readBundles(root, gitRepoConfig({ name: "repo", repo: root, paths: ["a", "b"], targets: [{ clusterSelector: {} }] }));
    const plan = await buildPlan(
      bundles,
      clusters.map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false })),
      [],
    );
    return renderDeployments(plan.entries, bundles, () => "0123456789abcdef0123456789abcdef01234567", runRenderer);
  }

  it("two bundles rendering the same object for one cluster fail, naming both bundles and the object", async () => {
    expect(await rejectionOf(renderAll({ "a/cm.yaml": cm("shared", "apps"), "b/cm.yaml": cm("shared", "apps") }))).to.match(
      /gitRepo repo, bundle repo-b, cluster c1: ConfigMap apps\/shared is also deployed by bundle repo-a/,
    );
    // The default namespace counts: both land in "default".
    expect(await rejectionOf(renderAll({ "a/cm.yaml": cm("shared"), "b/cm.yaml": cm("shared") }))).to.match(/ConfigMap default\/shared/);
  });

  it("the same name in other namespaces, or the same bundle on other clusters, is fine", async () => {
    expect((await renderAll({ "a/cm.yaml": cm("shared", "one"), "b/cm.yaml": cm("shared", "two") })).size).to.equal(2);
    expect((await renderAll({ "a/cm.yaml": cm("x"), "b/cm.yaml": cm("y") }, ["c1", "c2"])).size).to.equal(4);
  });
});

describe("objects per bundle", () => {
  it("a deployment rendering more than PULUMI_FLEET_MAX_OBJECTS_PER_BUNDLE objects fails alone, naming the limit", async () => {
    const cms = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${prefix}${i}\n`).join("---\n");
    const root = tempDir("pf-objects-");
    for (const [name, content] of Object.entries({ "a/cms.yaml": cms("a", 6), "b/cms.yaml": cms("b", 5) })) {
      fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      fs.writeFileSync(path.join(root, name), content);
    }
    const bundles = await readBundles(root, gitRepoConfig({ name: "repo", repo: root, paths: ["a", "b"], targets: [{ clusterSelector: {} }] }));
    const plan = await buildPlan(bundles, [{ name: "c1", labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false }], []);
    const failures: string[] = [];
    const before = process.env.PULUMI_FLEET_MAX_OBJECTS_PER_BUNDLE;
    process.env.PULUMI_FLEET_MAX_OBJECTS_PER_BUNDLE = "5";
    try {
      const out = await renderDeployments(plan.entries, bundles, () => "0123456789abcdef0123456789abcdef01234567", runRenderer, {
        onFailure: (_e, err) => failures.push(err.message),
      });
      expect([...out.keys()].map((e) => [e.bundle, out.get(e)!.objects.length])).to.deep.equal([["repo-b", 5]]);
    } finally {
      if (before === undefined) delete process.env.PULUMI_FLEET_MAX_OBJECTS_PER_BUNDLE;
      else process.env.PULUMI_FLEET_MAX_OBJECTS_PER_BUNDLE = before;
    }
    expect(failures).to.deep.equal([
      "gitRepo repo, bundle repo-a, cluster c1: the bundle renders 6 objects, over the limit of 5 per bundle and cluster (PULUMI_FLEET_MAX_OBJECTS_PER_BUNDLE)",
    ]);
  });
});
