/**
 * Remote charts, pulled as `fleet apply` pulls them, from a real Helm repository and a real OCI
 * registry on loopback (test/support/chart-repo.ts): version ranges resolved against the index or the
 * tags, archive URLs, TLS with the GitRepo's CA, credentials only where helmRepoURLRegex allows, and
 * archives that try to leave the chart refused.
 */
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { readBundles } from "../../core/bundles/read";
import { GitRepoConfig } from "../../core/config/git-repo";
import { ChartRepo, chartSources, startChartRepo } from "../support/chart-repo";
import { gitRepoConfig, tempDir } from "../support/git-fixtures";
import { renderBundle } from "../support/render";
import { rejectionOf } from "../support/rejection";

const CM = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Chart.Name }}
data:
  version: {{ .Chart.Version | quote }}
  greeting: {{ .Values.greeting | quote }}
`;
const CHARTS = chartSources(
  ["1.2.3", "1.2.5", "1.3.0", "2.0.0"].map((version) => ({
    name: "demo",
    version,
    templates: { "cm.yaml": CM },
    values: "greeting: hello\n",
  })),
);

/** The operator's allow-list for these tests: the loopback servers, any port. */
const LOOPBACK = ["https?://127\\.0\\.0\\.1:[0-9]+/.*"];

/** A one-bundle repository directory with this fleet.yaml; its bundle, read as the pipeline reads it. */
async function bundleWith(fleetYaml: string, repo: Partial<GitRepoConfig> = {}) {
  const dir = tempDir("pf-remote-");
  fs.writeFileSync(path.join(dir, "fleet.yaml"), fleetYaml);
  const [b] = await readBundles(dir, gitRepoConfig({ name: "charts", repo: dir, allowedChartURLs: LOOPBACK, ...repo }));
  return b;
}

async function configMap(b: Awaited<ReturnType<typeof bundleWith>>, options = b.options) {
  const r = await renderBundle(b, options);
  const cm = r.objects.find((o) => o.kind === "ConfigMap") as { data: Record<string, string> } | undefined;
  expect(cm, JSON.stringify(r.objects)).to.not.equal(undefined);
  return { data: cm!.data, warnings: r.warnings };
}

async function readError(fleetYaml: string, repo: Partial<GitRepoConfig> = {}): Promise<string> {
  try {
    await bundleWith(fleetYaml, repo);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("the bundle was read without an error");
}

describe("remote charts: Helm repository and OCI registry on loopback", function () {
  this.timeout(5 * 60_000);
  let plain: ChartRepo;
  let tls: ChartRepo;
  let authed: ChartRepo;
  before(async () => {
    [plain, tls, authed] = await Promise.all([
      startChartRepo(CHARTS),
      startChartRepo(CHARTS, { tls: true }),
      startChartRepo(CHARTS, { user: "fleet", password: "s3cret" }),
    ]);
  });
  after(async () => {
    await Promise.all([plain, tls, authed].filter(Boolean).map((r) => r.stop()));
  });

  it("a Helm repository: the newest version in the range, from the index's relative URL; the files count in the manifestID", async () => {
    const b = await bundleWith(`helm:\n  repo: ${plain.repo}\n  chart: demo\n  version: "~1.2"\n`);
    expect((await configMap(b)).data).to.deep.equal({ version: "1.2.5", greeting: "hello" });
    expect(b.files.some((f) => /^\.chart\/[0-9a-f]{64}\/demo\/Chart\.yaml$/.test(f.name))).to.equal(true);
    const other = await bundleWith(`helm:\n  repo: ${plain.repo}\n  chart: demo\n  version: "2.0.0"\n`);
    expect(other.manifestId).to.not.equal(b.manifestId);
    expect((await configMap(await bundleWith(`helm:\n  repo: ${plain.repo}\n  chart: demo\n`))).data.version).to.equal("2.0.0");
  });

  it("an OCI registry: exact version and range resolved against the tags (plain HTTP by basicHTTP, as Fleet's secret key)", async () => {
    const secret = { helmSecret: { insecureSkipVerify: false, basicHTTP: true } };
    expect((await configMap(await bundleWith(`helm:\n  repo: ${plain.oci}/demo\n  version: 1.2.3\n`, secret))).data.version).to.equal("1.2.3");
    expect((await configMap(await bundleWith(`helm:\n  repo: ${plain.oci}/demo\n  version: ">=1.0.0 <2.0.0"\n`, secret))).data.version).to.equal("1.3.0");
  });

  it("an archive URL as helm.chart", async () => {
    expect((await configMap(await bundleWith(`helm:\n  chart: ${plain.repo}/demo-1.3.0.tgz\n`))).data.version).to.equal("1.3.0");
  });

  it("a targetCustomization's own version renders its own chart", async () => {
    const b = await bundleWith(
      `helm:\n  repo: ${plain.repo}\n  chart: demo\n  version: 1.2.3\n  values: {greeting: base}\n` +
        `targetCustomizations:\n- name: canary\n  clusterSelector: {matchLabels: {canary: "true"}}\n  helm:\n    version: 1.3.0\n`,
    );
    expect((await configMap(b)).data).to.deep.equal({ version: "1.2.3", greeting: "base" });
    const canary = b.targets.find((t) => t.name === "canary")!;
    expect((await configMap(b, { ...b.options, helm: { ...b.options.helm, ...canary.helm } })).data).to.deep.equal({ version: "1.3.0", greeting: "base" });
  });

  it("HTTPS: the server's CA is needed (cacerts), or insecureSkipVerify", async () => {
    const yaml = `helm:\n  repo: ${tls.repo}\n  chart: demo\n  version: 1.2.3\n`;
    expect(await readError(yaml)).to.match(/gitRepo charts, bundle charts[\s\S]*helm\.repo[\s\S]*certificate/);
    expect((await configMap(await bundleWith(yaml, { helmSecret: { cacerts: tls.ca, insecureSkipVerify: false, basicHTTP: false } }))).data.version).to.equal(
      "1.2.3",
    );
    expect((await configMap(await bundleWith(yaml, { helmSecret: { insecureSkipVerify: true, basicHTTP: false } }))).data.version).to.equal("1.2.3");
    const oci = `helm:\n  repo: ${tls.oci}/demo\n  version: 1.2.5\n`;
    expect((await configMap(await bundleWith(oci, { helmSecret: { cacerts: tls.ca, insecureSkipVerify: false, basicHTTP: false } }))).data.version).to.equal(
      "1.2.5",
    );
  });

  it("credentials go only where helmRepoURLRegex allows; without it they are withheld and the run says so", async () => {
    const yaml = `helm:\n  repo: ${authed.repo}\n  chart: demo\n  version: 1.2.3\n`;
    const secret = { username: "fleet", password: "s3cret", insecureSkipVerify: false, basicHTTP: false };
    expect(await readError(yaml, { helmSecret: secret })).to.match(/helm\.repo[\s\S]*401/);
    expect(await readError(yaml, { helmSecret: secret, helmRepoURLRegex: "https://elsewhere" })).to.match(/401/);
    const b = await bundleWith(yaml, { helmSecret: secret, helmRepoURLRegex: "http://127\\.0\\.0\\.1:[0-9]+/" });
    expect((await configMap(b)).data.version).to.equal("1.2.3");
    expect(b.warnings).to.deep.equal([]);
    const oci = `helm:\n  repo: ${authed.oci}/demo\n  version: 1.2.3\n`;
    expect(
      (await configMap(await bundleWith(oci, { helmSecret: { ...secret, basicHTTP: true }, helmRepoURLRegex: "oci://127\\.0\\.0\\.1" }))).data.version,
    ).to.equal("1.2.3");
    // A regex Go cannot compile is refused by name.
    expect(await readError(yaml, { helmSecret: secret, helmRepoURLRegex: "(" })).to.match(/helmRepoURLRegex/);
    // Withheld credentials on a public chart: the chart is pulled and the warning reaches the render.
    const pub = await bundleWith(`helm:\n  repo: ${plain.repo}\n  chart: demo\n  version: 1.2.3\n`, { helmSecret: secret });
    expect((await configMap(pub)).warnings.join("\n")).to.match(/helmRepoURLRegex is empty/);
  });

  it("nothing is pulled unless the operator's allowedChartURLs allows the URL; the error suggests a pattern", async () => {
    const yaml = `helm:\n  repo: ${plain.repo}\n  chart: demo\n  version: 1.2.3\n`;
    expect(await readError(yaml, { allowedChartURLs: [] })).to.match(
      /gitRepo charts, bundle charts: helm\.repo: [\s\S]*allowedChartURLs is not set[\s\S]*127\\\\\.0/,
    );
    expect(await readError(yaml, { allowedChartURLs: ["https://charts\\.example\\.com/.*"] })).to.match(/allowedChartURLs/);
    expect((await configMap(await bundleWith(yaml, { allowedChartURLs: [`${plain.repo.replace(/\./g, "\\.")}/.*`] }))).data.version).to.equal("1.2.3");
  });

  it("a chart server that never answers, or never finishes a body, is bounded by the operator's pull time limit", async () => {
    const saved = process.env.PULUMI_FLEET_CHART_PULL_TIMEOUT_SECONDS;
    process.env.PULUMI_FLEET_CHART_PULL_TIMEOUT_SECONDS = "2";
    try {
      for (const where of ["stall", "trickle"]) {
        const t = Date.now();
        const message = await readError(`helm:\n  chart: ${plain.url}/${where}/demo.tgz\n`);
        expect(message, message).to.match(/time limit of 2s ran out[\s\S]*PULUMI_FLEET_CHART_PULL_TIMEOUT_SECONDS/);
        expect(Date.now() - t, where).to.be.lessThan(10_000);
      }
    } finally {
      if (saved === undefined) delete process.env.PULUMI_FLEET_CHART_PULL_TIMEOUT_SECONDS;
      else process.env.PULUMI_FLEET_CHART_PULL_TIMEOUT_SECONDS = saved;
    }
  });

  it("chart dependencies as Fleet's dependency update resolves them: file:// from the GitRepo, a chart repository pulled under the same rules", async () => {
    const dir = tempDir("pf-deps-");
    const write = (name: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    };
    write("lib/Chart.yaml", "apiVersion: v2\nname: lib\nversion: 0.1.4\n");
    write("lib/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-lib\ndata:\n  v: {{ .Chart.Version | quote }}\n");
    const chartYaml = (deps: string) => `apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n${deps}`;
    write(
      "app/Chart.yaml",
      chartYaml(`- name: lib\n  version: ~0.1.0\n  repository: file://../lib\n- name: demo\n  version: ^1.2.0\n  repository: ${plain.repo}\n`),
    );
    write("app/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n");
    const read = async () => (await readBundles(dir, gitRepoConfig({ name: "deps", repo: dir, paths: ["app"], allowedChartURLs: LOOPBACK })))[0];
    const names = async (b: Awaited<ReturnType<typeof read>>) => (await renderBundle(b)).objects.map((o) => `${o.kind} ${o.metadata.name}`).sort();
    expect(await names(await read())).to.deep.equal(["ConfigMap app", "ConfigMap demo", "ConfigMap from-lib"]);
    // Helm's check: the local chart's version must satisfy the constraint.
    write("app/Chart.yaml", chartYaml("- name: lib\n  version: ^0.2.0\n  repository: file://../lib\n"));
    expect(await rejectionOf(renderBundle(await read()))).to.match(
      /chart app: dependency lib \(file:\/\/\.\.\/lib\) is version 0\.1\.4, which does not satisfy \^0\.2\.0/,
    );
    // Outside the GitRepo, or an @alias only an agent's Helm knows: an error naming the chart and dependency.
    write("app/Chart.yaml", chartYaml("- name: lib\n  version: ~0.1.0\n  repository: file://../../../etc\n"));
    expect(await rejectionOf(read())).to.contain(
      "app/Chart.yaml gitRepo deps, bundle deps-app: dependencies: chart .: dependency lib: file://../../../etc is not a chart directory inside the GitRepo",
    );
    write("app/Chart.yaml", chartYaml('- name: lib\n  version: ~0.1.0\n  repository: "@stable"\n'));
    expect(await rejectionOf(read())).to.match(
      /dependency lib has repository "@stable", which is neither a file:\/\/ path in the GitRepo nor a chart repository URL/,
    );
    // Vendored already: nothing is resolved (Fleet updates only when one is missing).
    write("app/Chart.yaml", chartYaml("- name: lib\n  version: ~0.1.0\n  repository: file://../lib\n"));
    write("app/charts/lib/Chart.yaml", "apiVersion: v2\nname: lib\nversion: 0.1.0\n");
    write("app/charts/lib/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vendored-lib\n");
    expect(await names(await read())).to.deep.equal(["ConfigMap app", "ConfigMap vendored-lib"]);
  });

  it("a version or chart that does not exist fails naming the GitRepo, bundle and field", async () => {
    expect(await readError(`helm:\n  repo: ${plain.repo}\n  chart: demo\n  version: 9.9.9\n`)).to.match(
      /fleet\.yaml gitRepo charts, bundle charts: helm\.repo: .*no chart version found for demo-9\.9\.9/,
    );
    expect(await readError(`helm:\n  repo: ${plain.repo}\n  chart: nothere\n`)).to.match(/nothere/);
    expect(await readError(`helm:\n  chart: ./not-in-bundle\n`)).to.match(/helm\.chart[\s\S]*not-in-bundle/);
  });

  it("an archive that leaves the chart, or carries a link, is refused", async () => {
    const work = tempDir("pf-evil-");
    fs.mkdirSync(path.join(work, "in", "chart"), { recursive: true });
    fs.mkdirSync(path.join(work, "served"));
    fs.writeFileSync(path.join(work, "in", "chart", "Chart.yaml"), "apiVersion: v2\nname: evil\nversion: 1.0.0\n");
    fs.writeFileSync(path.join(work, "escape.yaml"), "planted: true\n");
    execFileSync("tar", ["-czPf", path.join(work, "served", "escape.tgz"), "-C", path.join(work, "in"), "chart/Chart.yaml", "../escape.yaml"]);
    fs.symlinkSync("/etc/passwd", path.join(work, "in", "chart", "passwd"));
    execFileSync("tar", ["-czf", path.join(work, "served", "link.tgz"), "-C", path.join(work, "in"), "chart"]);
    const files = await startChartRepo(CHARTS, { files: path.join(work, "served") });
    try {
      expect(await readError(`helm:\n  chart: ${files.url}/files/escape.tgz\n`)).to.match(
        /bundle charts[\s\S]*archive entry "\.\.\/escape\.yaml" leaves the chart/,
      );
      expect(await readError(`helm:\n  chart: ${files.url}/files/link.tgz\n`)).to.match(/archive entry "chart\/passwd" is a link/);
    } finally {
      await files.stop();
    }
  });
});
