/**
 * HelmOps (stack file `helmOps`, Fleet's HelmOp): the entry read strictly as Fleet's spec, the version
 * resolved as Fleet's controller resolves it from a real Helm repository and OCI registry on loopback
 * (test/support/chart-repo.ts), kept or moved as Fleet keeps or moves it, and the one bundle planned on
 * the clusters its targets select, with each target's options.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import { GitRepoConfig } from "../../core/config/git-repo";
import { parseStackConfig, StackConfig } from "../../core/config/stack";
import { keptHelmOpVersion, pinCommits } from "../../core/desired/previous";
import { planFleet } from "../../core/plan/pipeline";
import { checkSpec, helmOpVersion, isHelmOp, resolveHelmOpSource } from "../../core/source/helm-op";
import { ChartRepo, chartSources, startChartRepo } from "../support/chart-repo";
import { tempDir, writeFiles } from "../support/git-fixtures";
import { renderBundle } from "../support/render";
import { rejectionOf } from "../support/rejection";
import { remoteHead } from "../../core/source/remote-head";
import { pollIntervals } from "../../automation/watch/decide";
import { helmOpEntryKey } from "../../core/config/helm-op";

const CM = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Chart.Name }}
data:
  version: {{ .Chart.Version | quote }}
  greeting: {{ .Values.greeting | quote }}
`;
const chart = (version: string) => ({ name: "demo", version, templates: { "cm.yaml": CM }, values: "greeting: hello\n" });
const LOOPBACK = ["https?://127\\.0\\.0\\.1:[0-9]+/.*"];

function stack(helmOps: unknown[], extra: Record<string, unknown> = {}): StackConfig {
  return parseStackConfig(
    {
      renderDir: "out",
      clusters: [
        { name: "east", labels: { env: "prod" } },
        { name: "west", labels: { env: "dev" } },
      ],
      clusterGroups: [{ name: "default", selector: {} }],
      helmOps,
      ...extra,
    },
    "stacks/Pulumi.test.yaml",
    tempDir("pf-helmops-"),
  );
}

function helmOpOf(config: StackConfig, name = "demo"): GitRepoConfig {
  const r = config.gitRepos.find((g) => g.name === name);
  expect(r && isHelmOp(r), `${name} is a HelmOp`).to.equal(true);
  return r!;
}

function readError(helmOps: unknown[], extra: Record<string, unknown> = {}): string {
  try {
    stack(helmOps, extra);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("the stack was read without an error");
}

describe("helmOps: the stack file's entry", () => {
  it("becomes a source of its own, named as its bundle, with Fleet's spec as the bundle's fleet.yaml", () => {
    const r = helmOpOf(
      stack([
        {
          name: "demo",
          helm: { repo: "https://charts.example.com", chart: "demo", version: "1.2.x", values: { greeting: "hi" } },
          defaultNamespace: "demo",
          targets: [{ clusterSelector: { matchLabels: { env: "prod" } }, helm: { values: { greeting: "prod" } } }],
          allowedChartURLs: LOOPBACK,
        },
      ]),
    );
    expect(r.helmOp!.chart).to.deep.equal({ repo: "https://charts.example.com", chart: "demo", version: "1.2.x" });
    expect(r.helmOp!.fleetYaml).to.deep.include({ name: "demo", defaultNamespace: "demo" });
    expect(r.helmOp!.fleetYaml.targetCustomizations).to.have.length(1);
    expect(r.targets).to.deep.equal([{ name: "target000", clusterSelector: { matchLabels: { env: "prod" } } }]);
    expect(r.allowedChartURLs).to.deep.equal(LOOPBACK);
    expect(r.helmOp!.polled, "no pollingInterval: never polled, as Fleet's HelmOp").to.equal(false);
    expect(r.disablePolling).to.equal(true);
  });

  it("is polled only with a pollingInterval and a version that is not exact (Fleet's usesPolling)", () => {
    const polled = (helm: Record<string, string>, pollingInterval = "1m") =>
      helmOpOf(stack([{ name: "demo", helm, pollingInterval, allowedChartURLs: LOOPBACK }])).helmOp!.polled;
    expect(polled({ repo: "https://c.example.com", chart: "demo", version: "1.x" })).to.equal(true);
    expect(polled({ repo: "https://c.example.com", chart: "demo" })).to.equal(true);
    expect(polled({ repo: "https://c.example.com", chart: "demo", version: "1.2.3" })).to.equal(false);
    expect(polled({ chart: "https://c.example.com/demo-1.2.3.tgz" })).to.equal(false);
    expect(polled({ repo: "https://c.example.com", chart: "demo", version: "1.x" }, "0")).to.equal(false);
  });

  it("sends its credentials, by default, to its chart's host as the puller names it (lower case, no default port; an OCI registry's scheme)", () => {
    const secret = { username: "u", password: "p" };
    const regex = (helm: Record<string, string>, basicHTTP = false) =>
      helmOpOf(stack([{ name: "demo", helm, helmSecret: { ...secret, basicHTTP }, allowedChartURLs: LOOPBACK }])).helmRepoURLRegex;
    expect(regex({ repo: "https://Charts.Example.com:443/stable", chart: "demo" })).to.equal("https://charts\\.example\\.com/");
    expect(regex({ repo: "oci://r.example.com:5000/charts/demo" })).to.equal("https://r\\.example\\.com:5000/");
    expect(regex({ repo: "oci://r.example.com/charts/demo" }, true)).to.equal("http://r\\.example\\.com/");
  });

  it("refuses what Fleet refuses or would ignore, naming the field", () => {
    const base = { name: "demo", allowedChartURLs: LOOPBACK };
    expect(readError([{ ...base, helm: { repo: "oci://r.example.com/charts/demo", chart: "demo" } }])).to.contain(
      "helmOps[0].helm: helm options invalid: OCI repository with a non-empty chart field",
    );
    expect(readError([{ ...base, helm: { chart: "https://c.example.com/demo.tgz", version: "1.0.0" } }])).to.contain(
      "tarball chart with a non-empty version field",
    );
    expect(readError([{ ...base, helm: { chart: "demo" } }])).to.contain("non-tarball chart with an empty repo field");
    expect(readError([{ ...base, helm: { repo: "https://c.example.com", chart: "demo", valuesFiles: ["v.yaml"] } }])).to.contain(
      "helmOps[0].helm.valuesFiles: a HelmOp has no files",
    );
    expect(readError([{ ...base, helm: { repo: "https://c.example.com", chart: "demo" }, kustomize: { dir: "." } }])).to.contain(
      "helmOps[0].kustomize: unknown field",
    );
    expect(readError([{ ...base, helm: { repo: "https://c.example.com", chart: "demo" } }], { gitRepos: [{ name: "demo", repo: "." }] })).to.contain(
      '"demo" is also a gitRepos name',
    );
  });
});

describe("helmOps: the spec checked as fleet.yaml's reader checks it, strictly, when the source is read", () => {
  const specError = (entry: Record<string, unknown>) => {
    const repo = helmOpOf(stack([{ name: "demo", allowedChartURLs: LOOPBACK, ...entry }]));
    try {
      checkSpec(repo as Parameters<typeof checkSpec>[0]);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error("the spec was accepted");
  };

  it("a key Fleet would ignore or match by case alone fails that HelmOp, naming the stack file and field", () => {
    expect(specError({ helm: { repo: "https://c.example.com", chart: "demo", valuez: {} } })).to.equal(
      "stacks/Pulumi.test.yaml gitRepo demo: helmOps[0].helm.valuez: unknown field",
    );
    expect(specError({ helm: { repo: "https://c.example.com", chart: "demo" }, targets: [{ clusterName: "east", helm: { Values: {} } }] })).to.contain(
      "helmOps[0].targets[0].helm.Values: read as values",
    );
    expect(specError({ helm: { repo: "https://c.example.com", chart: "demo" }, rolloutStrategy: { maxUnavailable: "x%" } })).to.contain(
      "helmOps[0].rolloutStrategy.maxUnavailable",
    );
  });
});

describe("helmOps: which version an up deploys", () => {
  const chart = { repo: "https://c", chart: "demo", version: "1.x" };
  const op = (polled: boolean, values = { a: "1" }) =>
    ({ name: "demo", helmOp: { chart, fleetYaml: { name: "demo", helm: { ...chart, values } }, polled } }) as unknown as GitRepoConfig;
  const record = { commit: "1.2.5", chart: helmOpEntryKey(op(false).helmOp!), clusters: [] };

  it("keeps the recorded version while the entry is unchanged, unless polled; any edit resolves again (Fleet's reconcile)", () => {
    expect(keptHelmOpVersion(op(false), record)).to.equal("1.2.5");
    expect(keptHelmOpVersion(op(true), record)).to.equal(undefined);
    expect(keptHelmOpVersion(op(false, { a: "2" }), record), "an edited value: Fleet reconciles, so resolves again").to.equal(undefined);
    expect(keptHelmOpVersion(op(false), { ...record, chart: undefined }), "no key: resolved afresh").to.equal(undefined);
  });

  it("an archive URL's chart: the same commit for the watcher, a pinned stack's check and the up (its URL, hashed), with no request", async () => {
    const tgz = helmOpOf(stack([{ name: "demo", helm: { chart: "https://c.example.com/demo-1.0.0.tgz" }, allowedChartURLs: LOOPBACK }]));
    const head = await remoteHead(tgz, 1000);
    const source = await resolveHelmOpSource(tgz as Parameters<typeof resolveHelmOpSource>[0]);
    source.dispose!();
    expect(head)
      .to.match(/^url-[0-9a-f]{12}$/)
      .and.equal(source.commit);
    expect(fs.existsSync(source.dir), "its directory is removed once read").to.equal(false);
  });

  it("a run's own versions (a rollback's, the shard runner's) win over a kept one; a paused HelmOp keeps its record", () => {
    const [kept] = pinCommits([op(false)], undefined, { gitRepos: { demo: record } });
    expect(kept.revision).to.equal("1.2.5");
    const [rolledBack] = pinCommits([op(false)], { demo: "1.1.0" }, { gitRepos: { demo: record } });
    expect(rolledBack.revision).to.equal("1.1.0");
    const [paused] = pinCommits([{ ...op(true), paused: true }], { demo: "1.3.0" }, { gitRepos: { demo: record } });
    expect(paused.revision).to.equal("1.2.5");
  });
});

describe("helmOps: from a real Helm repository and OCI registry", function () {
  this.timeout(180_000);
  let charts: string;
  let server: ChartRepo;
  before(async () => {
    charts = chartSources(["1.2.3", "1.2.5", "2.0.0"].map(chart));
    server = await startChartRepo(charts);
  });
  after(async () => server?.stop());

  const entry = (helm: Record<string, unknown>, more: Record<string, unknown> = {}) => ({ name: "demo", helm, allowedChartURLs: LOOPBACK, ...more });

  it("resolves the constraint, deploys that exact version to the targets, each with its options", async () => {
    const config = stack([
      entry(
        { repo: `${server.url}/charts`, chart: "demo", version: "1.2.x", values: { greeting: "hi" } },
        { targets: [{ clusterName: "east", helm: { values: { greeting: "east" } } }, { clusterName: "west" }] },
      ),
    ]);
    const state = await planFleet(config, tempDir("pf-helmops-cache-"));
    expect([...state.unreadGitRepos.values()].map(String)).to.deep.equal([]);
    expect(state.sources.get("demo")!.commit).to.equal("1.2.5");
    const [bundle] = state.bundles;
    expect(bundle.name).to.equal("demo");
    expect(bundle.options.helm!.version).to.equal("1.2.5");
    expect(state.plan.entries.map((e) => `${e.bundle}@${e.cluster}`).sort()).to.deep.equal(["demo@east", "demo@west"]);
    const east = state.plan.entries.find((e) => e.cluster === "east")!;
    const r = await renderBundle(bundle, east.options);
    const cm = r.objects.find((o) => o.kind === "ConfigMap") as unknown as { data: Record<string, string> };
    expect(cm.data).to.deep.equal({ version: "1.2.5", greeting: "east" });
    expect(state.sources.get("demo")!.warnings.join("\n"), "Fleet's agent would resolve the constraint again for a target with helm options").to.contain(
      'helmOps[0].targets[0].helm: Fleet\'s agent would resolve the version constraint "1.2.x" again',
    );
  });

  it("deploys a new matching version as a change once published, and says nothing is there when nothing matches", async () => {
    const repo = helmOpOf(stack([entry({ repo: `${server.url}/charts`, chart: "demo", version: "~1.2" }, { pollingInterval: "1m" })]));
    expect(await helmOpVersion(repo as Parameters<typeof helmOpVersion>[0])).to.equal("1.2.5");
    chartSources([chart("1.2.9")], charts);
    await server.reload();
    const source = await resolveHelmOpSource(repo as Parameters<typeof resolveHelmOpSource>[0]);
    expect(source.commit).to.equal("1.2.9");
    expect(await remoteHead(repo, 30_000), "what the watcher polls: the version an up would deploy").to.equal("1.2.9");
    expect(
      pollIntervals([repo, helmOpOf(stack([entry({ repo: `${server.url}/charts`, chart: "demo", version: "~1.2" }, { name: "still" })]), "still")], 15_000),
    ).to.deep.equal({
      demo: 60_000,
    });
    const none = helmOpOf(stack([entry({ repo: `${server.url}/charts`, chart: "demo", version: "~3.0" })]));
    const err = await rejectionOf(helmOpVersion(none as Parameters<typeof helmOpVersion>[0]));
    expect(err).to.match(/gitRepo demo.*helm\.version.*no chart version found for demo-~3\.0/);
  });

  it("resolves an OCI repository's tags", async () => {
    const config = stack([entry({ repo: `${server.oci}/demo`, version: ">=1.0.0 <1.2.6" }, { helmSecret: { basicHTTP: true } })]);
    const state = await planFleet(config, tempDir("pf-helmops-cache-"));
    expect([...state.unreadGitRepos.values()].map(String)).to.deep.equal([]);
    expect(state.sources.get("demo")!.commit).to.equal("1.2.5");
    expect(state.bundles[0].options.helm!.version).to.equal("1.2.5");
  });

  it("is labelled as Fleet labels a HelmOp's bundle: a GitRepo's dependsOn finds it by fleet.cattle.io/fleet-helm-name", async () => {
    const dir = tempDir("pf-helmops-dep-");
    writeFiles(dir, {
      "app/fleet.yaml": "dependsOn:\n  - selector:\n      matchLabels:\n        fleet.cattle.io/fleet-helm-name: demo\n",
      "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
    });
    const config = stack([entry({ repo: `${server.url}/charts`, chart: "demo", version: "1.2.3" })], { gitRepos: [{ name: "team", repo: dir }] });
    const state = await planFleet(config, tempDir("pf-helmops-cache-"));
    const app = state.plan.entries.find((e) => e.gitRepo === "team" && e.cluster === "east")!;
    expect(app.dependsOn).to.deep.equal(["demo/demo"]);
    // A HelmOp's plain dependsOn name is a bundle of its own (it has none but itself): never met, said, as for a GitRepo.
    const own = stack([entry({ repo: `${server.url}/charts`, chart: "demo", version: "1.2.3" }, { dependsOn: [{ name: "app" }] })], {
      gitRepos: [{ name: "team", repo: dir }],
    });
    const waits = await planFleet(own, tempDir("pf-helmops-cache-"));
    expect(waits.plan.entries.filter((e) => e.gitRepo === "demo")).to.deep.equal([]);
    expect(waits.failures.list().find((f) => f.gitRepo === "demo")?.message).to.contain("dependsOn");
    // As in Fleet, the HelmOp's bundle has no repo-name label: a selector on it does not find the HelmOp.
    writeFiles(dir, { "app/fleet.yaml": "dependsOn:\n  - name: demo\n    selector:\n      matchLabels:\n        fleet.cattle.io/repo-name: demo\n" });
    const again = await planFleet(config, tempDir("pf-helmops-cache-"));
    expect(again.plan.entries.filter((e) => e.gitRepo === "team").map((e) => e.cluster)).to.deep.equal([]);
    expect(
      again.failures
        .list()
        .map((f) => f.message)
        .join("\n"),
    ).to.contain("dependsOn");
  });

  it("fails, alone, when a GitRepo's bundle has its name (Fleet: a non-helmops bundle already exists)", async () => {
    const dir = tempDir("pf-helmops-clash-");
    writeFiles(dir, { "app/fleet.yaml": "name: demo\n", "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n" });
    const config = stack([entry({ repo: `${server.url}/charts`, chart: "demo", version: "1.2.3" })], { gitRepos: [{ name: "team", repo: dir }] });
    const state = await planFleet(config, tempDir("pf-helmops-cache-"));
    expect(String(state.unreadGitRepos.get("demo"))).to.contain("a non-helmops bundle already exists with name demo");
    expect(state.plan.entries.map((e) => `${e.gitRepo}/${e.bundle}`))
      .to.include("team/demo")
      .and.not.include("demo/demo");
  });

  it("sends its helmSecret to its chart's host without a helmRepoURLRegex, as Fleet's HelmOp sends its secret", async () => {
    const locked = await startChartRepo(charts, { user: "fleet", password: "s3cret" });
    try {
      const helm = { repo: `${locked.url}/charts`, chart: "demo", version: "1.2.x" };
      const secret = { helmSecret: { username: "fleet", password: "s3cret" } };
      const state = await planFleet(stack([entry(helm, secret)]), tempDir("pf-helmops-cache-"));
      expect([...state.unreadGitRepos.values()].map(String)).to.deep.equal([]);
      expect(state.bundles[0].options.helm!.version).to.match(/^1\.2\./);
      const other = await planFleet(stack([entry(helm, { ...secret, helmRepoURLRegex: "https://elsewhere\\.example/" })]), tempDir("pf-helmops-cache-"));
      expect(String(other.unreadGitRepos.get("demo")), "the operator's own regex is kept").to.match(/401|credentials/);
    } finally {
      await locked.stop();
    }
  });

  it("pulls nothing from a URL the operator did not allow, and fails that HelmOp alone", async () => {
    const config = stack([
      { name: "demo", helm: { repo: `${server.url}/charts`, chart: "demo", version: "1.x" } },
      entry({ repo: `${server.url}/charts`, chart: "demo", version: "2.0.0" }, { name: "other" }),
    ]);
    const state = await planFleet(config, tempDir("pf-helmops-cache-"));
    expect(String(state.unreadGitRepos.get("demo"))).to.contain("allowedChartURLs");
    expect(state.plan.entries.map((e) => e.bundle)).to.include("other");
  });
});
