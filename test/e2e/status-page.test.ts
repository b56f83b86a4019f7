/**
 * The status page as a person sees it: headless Chromium loads the file, the test reads the DOM it
 * rendered (cells, state classes, counts, the click panel) and the pixels of a screenshot (the
 * colours really drawn). A known fleet state built by hand (every Fleet state, Modified and
 * ErrApplied included), then pages from the real engine in render mode: status of the example
 * fleet, a preview that prunes a cluster, and the same through the CLI. Screenshots are kept in
 * test-artifacts/status-page/ (git-ignored). A missing browser fails here: it is never skipped.
 */
import { expect } from "chai";
import { besidesProgress, timed } from "../support/progress-lines";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { dumpDom, screenshot } from "../../automation/reports/chromium";
import * as ops from "../../automation/operations";
import { KIND_COLOUR, renderPreviewPage, renderStatusPage } from "../../automation/reports/status-page";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { localStack, withoutProdTarget } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";
import { countColour, readPng } from "../support/png";
import { KNOWN_COUNTS, knownFleetReport } from "../support/status-fixtures";

const ARTIFACTS = path.join(PROJECT_DIR, "test-artifacts", "status-page");
const BUNDLES = ["examples-helm", "examples-kustomize", "examples-simple"];

interface DomCell {
  cluster: string;
  kind: string;
  title: string;
}

/** The matrix cells of a DOM Chromium serialized, in page order. */
function domCells(dom: string): DomCell[] {
  const out: DomCell[] = [];
  for (const row of dom.matchAll(/<tr data-cluster="([^"]+)">(.*?)<\/tr>/gs)) {
    for (const c of row[2].matchAll(/<td class="c k-(\w+)" title="([^"]*)">/g)) out.push({ cluster: row[1], kind: c[1], title: c[2] });
  }
  return out;
}

const countsOf = (cells: DomCell[]) => cells.reduce<Record<string, number>>((m, c) => ({ ...m, [c.kind]: (m[c.kind] ?? 0) + 1 }), {});

function writePage(name: string, html: string): string {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.html`);
  fs.writeFileSync(file, html);
  return file;
}

describe("status page in headless Chromium", function () {
  this.timeout(10 * 60_000);

  describe("a known fleet state", () => {
    let file: string;
    let dom: string;
    before(() => {
      file = writePage("known-fleet", renderStatusPage(knownFleetReport()));
      dom = dumpDom(file);
    });

    it("renders one cell per (cluster, bundle) with Fleet's state, including Modified and ErrApplied", () => {
      const cells = domCells(dom);
      expect(cells).to.have.length(30);
      expect(countsOf(cells)).to.deep.equal(KNOWN_COUNTS);
      expect(cells.filter((c) => c.kind === "Modified").map((c) => c.cluster)).to.deep.equal(["prod-eu-2"]);
      expect(cells.filter((c) => c.kind === "ErrApplied").map((c) => c.cluster)).to.deep.equal(["prod-us-1"]);
      const modified = cells.find((c) => c.kind === "Modified")!;
      expect(modified.title)
        .to.contain("web on prod-eu-2: Modified")
        .and.contain("deploymentId s-web")
        .and.contain("modified Deployment apps/web (spec.replicas)");
      for (const [kind, n] of Object.entries(KNOWN_COUNTS)) expect(dom).to.contain(`<b data-kind="${kind}">${n}</b>`);
      expect(dom).to.contain(`<b id="total">30</b>`);
    });

    it("shows per cluster its agent, config hash and reachability, per GitRepo its commit and readyClusters", () => {
      const edge = /<tr data-cluster="edge-1">(.*?)<\/tr>/s.exec(dom)![1];
      expect(edge).to.contain("rancher/fleet-agent:v0.13.1").and.contain("6a7f3c9e2b14").and.contain("unreachable: connect ECONNREFUSED 10.0.0.7:6443");
      expect(dom).to.match(/<tr data-gitrepo="apps">.*4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c.*<td class="ready">1\/5<\/td>/s);
      expect(dom).to.contain("taken 2026-05-04T09:30:00.000Z");
    });

    it("keeps markup in a message as text (the page's title is untouched) and shows a cell's details on click", () => {
      expect(dom).to.contain("<title>Status of stack prod</title>");
      const clicked = path.join(ARTIFACTS, "known-fleet-clicked.html");
      fs.writeFileSync(
        clicked,
        fs.readFileSync(file, "utf8").replace("</body>", `<script>document.querySelector("td.c.k-ErrApplied").click()</script></body>`),
      );
      const after = dumpDom(clicked);
      expect(after).to.match(/<pre id="detail">api on prod-us-1: ErrApplied\ndeploymentId s-api[^<]*\nthe last update failed on this cluster<\/pre>/);
    });

    it("draws the states' colours (read back from a screenshot)", () => {
      const png = path.join(ARTIFACTS, "known-fleet.png");
      screenshot(file, png);
      const img = readPng(png);
      expect(img.width).to.be.greaterThan(600);
      for (const kind of Object.keys(KNOWN_COUNTS) as (keyof typeof KNOWN_COUNTS)[]) {
        // A 16 px cell is ~200 pixels; the legend swatch and the badges add more.
        expect(countColour(img, KIND_COLOUR[kind][0]), `${kind} ${KIND_COLOUR[kind][0]}`).to.be.greaterThan(150);
      }
    });
  });

  describe("pages from the real engine (render mode, the example fleet)", () => {
    const work = tempDir("pf-page-");
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    const options = (config: StackConfig): ops.OperationOptions => ({
      stack: "page",
      stateDir: path.join(work, "state"),
      stackConfigDir: path.join(work, "stacks"),
      config,
      deploy: { cacheRoot: path.join(work, "git-cache") },
      env: { PULUMI_CONFIG_PASSPHRASE: "page" },
    });
    const a = () => localStack(path.join(work, "render"));

    before(function () {
      this.timeout(60 * 60_000);
      toolchain();
    });

    it("status after an up: nine Ready cells, the agents as deployed, clusters not probed in render mode", async () => {
      await ops.up(options(a()));
      const report = await ops.status(options(a()));
      const file = writePage("example-fleet", renderStatusPage(report));
      const dom = dumpDom(file);
      const cells = domCells(dom);
      expect(cells.map((c) => `${c.cluster} ${c.kind}`)).to.deep.equal(["dev-1", "dev-2", "prod-1"].flatMap((c) => BUNDLES.map(() => `${c} Ready`)));
      expect(cells[0].title).to.match(/^examples-helm on dev-1: Ready\ndeploymentId s-[0-9a-f]+:[0-9a-f]{64}$/);
      for (const c of ["dev-1", "dev-2", "prod-1"]) {
        expect(new RegExp(`<tr data-cluster="${c}">.*rancher/fleet-agent:v0\\.13\\.1.*not probed`, "s").test(dom), c).to.equal(true);
      }
      expect(dom).to.contain("group dev · 2 cluster(s)").and.contain("group prod · 1 cluster(s)");
      expect(dom).to.match(/<td class="ready">3\/3<\/td>/);
      screenshot(file, path.join(ARTIFACTS, "example-fleet.png"));
    });

    it("the preview of a target removal: prod-1's three bundles pruned with the reason, nothing else", async () => {
      const r = await ops.preview(options(withoutProdTarget(a())));
      const file = writePage("example-preview", renderPreviewPage(r));
      const cells = domCells(dumpDom(file));
      expect(cells.map((c) => `${c.cluster} ${c.kind}`)).to.deep.equal([
        ...["dev-1", "dev-2"].flatMap((c) => BUNDLES.map(() => `${c} unchanged`)),
        ...BUNDLES.map(() => "prod-1 prune"),
      ]);
      for (const c of cells.filter((x) => x.kind === "prune")) expect(c.title).to.contain("target prod was removed from GitRepo examples");
      expect(r.summaryMarkdown).to.contain("### Blast radius").and.contain("| `prod-1` | − | − | − |");
      screenshot(file, path.join(ARTIFACTS, "example-preview.png"));
    });

    it("the CLI writes the page (status --html, preview --html), with no progress in --quiet nor on a short run", () => {
      const env = { ...process.env, PULUMI_FLEET_STATE_DIR: path.join(work, "cli-state") };
      const run = (...args: string[]) =>
        timed(() =>
          spawnSync(process.execPath, ["scripts/run-ts.js", "scripts/fleet.ts", ...args, "--stack", "local"], { cwd: PROJECT_DIR, encoding: "utf8", env }),
        );
      const status = run("status", "--quiet", "--html", path.join(ARTIFACTS, "cli-status.html"));
      expect(status.status, status.stderr).to.equal(0);
      // Never deployed in this state directory: every targeted pair waits.
      expect(countsOf(domCells(dumpDom(path.join(ARTIFACTS, "cli-status.html"))))).to.deep.equal({ Pending: 9 });
      const preview = run("preview", "--html", path.join(ARTIFACTS, "cli-preview.html"));
      expect(preview.status, preview.stderr).to.equal(0);
      expect(countsOf(domCells(dumpDom(path.join(ARTIFACTS, "cli-preview.html"))))).to.deep.equal({ create: 9 });
      // Progress lines come once a run is long (test/unit/status-page.test.ts): a render-mode preview is not.
      expect(besidesProgress(status.stderr, status.elapsedMs) + besidesProgress(preview.stderr, preview.elapsedMs)).to.not.match(/^(progress|cluster) /m);
      // eslint-disable-next-line no-control-regex
      expect(status.stdout + status.stderr + preview.stdout + preview.stderr).to.not.match(/[\x00-\x08\x0b-\x1f\x7f]/);
      const wrong = run("up", "--html", "x.html");
      expect(wrong.status).to.equal(2);
      expect(wrong.stderr).to.contain("--html does not apply to up (only preview, status)");
    });
  });
});
