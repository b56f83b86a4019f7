/**
 * A HelmOp's chart version resolved as Fleet's ChartVersion resolves it, by the real fleet-render
 * against a real Helm repository and OCI registry on loopback (test/support/chart-repo.ts): the newest
 * index entry or the highest tag matching a constraint, an exact version, Fleet's errors, and the
 * operator's allowedChartURLs applied before anything is requested.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { resolveChartVersions } from "../../core/bundles/chart-version";
import { FleetError } from "../../core/base/errors";
import { GitRepoConfig } from "../../core/config/git-repo";
import { RendererRequest } from "../../core/model/renderer-protocol";
import { runRenderer } from "../../core/renderer/fleet-render";
import { ChartRepo, chartSources, startChartRepo } from "../support/chart-repo";
import { gitRepoConfig, tempDir } from "../support/git-fixtures";

const CHARTS = chartSources(["1.2.3", "1.2.5", "1.3.0", "2.0.0", "2.1.0-rc.1"].map((version) => ({ name: "demo", version, templates: { "cm.yaml": "{}\n" } })));
/** The operator's allow-list for these tests: the loopback servers, any port. */
const LOOPBACK = ["https?://127\\.0\\.0\\.1:[0-9]+/.*"];
const ctx = { gitRepo: "charts", bundle: "op", field: "helm.version" };

describe("chart versions resolved as a HelmOp resolves them (resolveOnly pulls)", function () {
  this.timeout(5 * 60_000);
  let repo: ChartRepo;
  let log: string;
  let batches: RendererRequest[];
  const render = (req: RendererRequest) => (batches.push(req), runRenderer(req));
  const config = (over: Partial<GitRepoConfig> = {}) => gitRepoConfig({ name: "charts", repo: "/nowhere", allowedChartURLs: LOOPBACK, ...over });
  /** The versions (or error messages) of these requests, in one renderer batch. */
  const resolve = async (requests: { chart?: string; repo?: string; version?: string }[], over: Partial<GitRepoConfig> = {}) =>
    (
      await resolveChartVersions(
        requests.map((r) => ({ ...r, ctx })),
        config(over),
        render,
      )
    ).map((v) => (v instanceof FleetError ? `error: ${v.message}` : v));
  const requestsLogged = () => fs.readFileSync(log, "utf8").split("\n").filter(Boolean).length;

  before(async () => {
    log = path.join(tempDir("pf-chart-version-"), "requests.log");
    fs.writeFileSync(log, "");
    repo = await startChartRepo(CHARTS, { log });
  });
  beforeEach(() => (batches = []));
  after(async () => repo?.stop());

  it('a Helm repository: the newest version matching a constraint, an exact version, and the newest stable one for "" and *', async () => {
    const demo = (version?: string) => ({ repo: repo.repo, chart: "demo", version });
    const before = requestsLogged();
    expect(await resolve([demo("~1.2"), demo("1.2.3"), demo(""), demo("*"), demo(undefined), demo(">=1.2.4 <2"), demo("~1.2")])).to.deep.equal([
      "1.2.5",
      "1.2.3",
      "2.0.0",
      "2.0.0",
      "2.0.0",
      "1.3.0",
      "1.2.5",
    ]);
    expect(batches).to.have.length(1);
    expect(batches[0].pulls!.map((p) => p.version)).to.deep.equal(["~1.2", "1.2.3", "", "*", ">=1.2.4 <2"]);
    expect(batches[0].pulls!.every((p) => p.resolveOnly)).to.equal(true);
    // Only index.yaml was read: nothing downloaded.
    const paths = fs
      .readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .slice(before)
      .map((l) => (JSON.parse(l) as { path: string }).path);
    expect(paths.length).to.be.greaterThan(0);
    expect(
      paths.every((p) => p === "/charts/index.yaml"),
      paths.join(" "),
    ).to.equal(true);
  });

  it("no version matching: Fleet's error, naming the GitRepo, bundle and field; the batch's other requests resolve", async () => {
    const [missing, ok] = await resolve([
      { repo: repo.repo, chart: "demo", version: "9.9.9" },
      { repo: repo.repo, chart: "demo", version: "^1" },
    ]);
    expect(missing).to.match(
      /^error: gitRepo charts, bundle op: helm\.version: helm chart repo=.* chart=demo version=9\.9\.9: .*no chart version found for demo-9\.9\.9/,
    );
    expect(ok).to.equal("1.3.0");
  });

  it("a URL outside the operator's allowedChartURLs is refused before anything is requested", async () => {
    const before = requestsLogged();
    const [outside] = await resolve([{ repo: repo.repo, chart: "demo", version: "1.2.3" }], { allowedChartURLs: ["https://charts\\.example\\.com/.*"] });
    expect(outside).to.match(/^error: gitRepo charts, bundle op: helm\.version: .*refused: .* matches none of the GitRepo's allowedChartURLs/);
    const [unset] = await resolve([{ repo: `${repo.oci}/demo`, version: "1.2.3" }], { allowedChartURLs: [] });
    expect(unset).to.match(/allowedChartURLs is not set/);
    expect(requestsLogged()).to.equal(before);
  });

  it("an OCI registry: the highest tag matching a constraint, an exact tag, Fleet's error when none matches", async () => {
    const oci = (version: string) => ({ repo: `${repo.oci}/demo`, version });
    const secret = { helmSecret: { insecureSkipVerify: false, basicHTTP: true } };
    expect(await resolve([oci(">=1.0.0 <2.0.0"), oci("1.2.5"), oci("~1.2"), oci("*")], secret)).to.deep.equal(["1.3.0", "1.2.5", "1.2.5", "2.0.0"]);
    const [none, bad] = await resolve([oci("3.x"), oci("not a version")], secret);
    expect(none).to.contain(`could not find tag matching constraint "3.x" in registry ${repo.oci}/demo`);
    expect(bad).to.contain(`failed to compute version constraint from version "not a version"`);
  });

  it("credentials go with the tag list and index.yaml only where helmRepoURLRegex allows", async () => {
    const authed = await startChartRepo(CHARTS, { user: "fleet", password: "s3cret" });
    try {
      const helmSecret = { username: "fleet", password: "s3cret", insecureSkipVerify: false, basicHTTP: true };
      const requests = [
        { repo: `${authed.oci}/demo`, version: "~1.2" },
        { repo: authed.repo, chart: "demo", version: "~1.2" },
      ];
      const withheld = await resolve(requests, { helmSecret });
      expect(withheld[0]).to.match(/^error: .*tags\/list": basic credential not found$/);
      expect(withheld[1]).to.match(/^error: .*index\.yaml: unexpected status 401$/);
      expect(withheld.join("\n")).to.not.contain("s3cret");
      expect(await resolve(requests, { helmSecret, helmRepoURLRegex: "(oci|http)://127\\.0\\.0\\.1" })).to.deep.equal(["1.2.5", "1.2.5"]);
    } finally {
      await authed.stop();
    }
  });

  it("an archive URL: the version as given, nothing requested", async () => {
    const before = requestsLogged();
    expect(await resolve([{ chart: `${repo.repo}/demo-1.3.0.tgz`, version: "1.3.0" }])).to.deep.equal(["1.3.0"]);
    expect(requestsLogged()).to.equal(before);
  });
});
