/**
 * The status page's pure parts: the matrix of a hand-made StatusReport and of a hand-made preview,
 * the HTML (every string escaped, one cell per pair, the counts), the PR summary's blast radius, and
 * the progress display (plain lines with no control characters when not on a terminal). The page in
 * a real browser is test/e2e/status-page.test.ts.
 */
import { expect } from "chai";
import { EngineEvent, OpType } from "@pulumi/pulumi/automation";
import { blastRadiusMarkdown, previewMatrix, statusMatrix } from "../../automation/reports/fleet-matrix";
import { renderSummaryMarkdown } from "../../automation/reports/pr-summary";
import { clusterLine, Progress, ProgressCounter, progressLines, ProgressStream } from "../../automation/reports/progress";
import { escapeHtml, renderPreviewPage, renderStatusPage } from "../../automation/reports/status-page";
import { AgentSteps, DeploymentSteps, GroupedSteps } from "../../automation/engine/steps";
import { DeploymentRecord } from "../../core/desired/records";
import { FleetState } from "../../core/plan/pipeline";
import { reportFacts } from "../../core/desired/report-facts";
import { INJECTION, KNOWN_COUNTS, knownFleetReport } from "../support/status-fixtures";
import { HOSTILE } from "../support/hostile-text";

/** Cells of the matrix in page order, as "cluster/kind", from the HTML text. */
function cellsOf(html: string): { cluster: string; kind: string; title: string }[] {
  const out: { cluster: string; kind: string; title: string }[] = [];
  for (const row of html.matchAll(/<tr data-cluster="([^"]+)">(.*?)<\/tr>/gs)) {
    for (const c of row[2].matchAll(/<td class="c k-(\w+)" title="([^"]*)">/g)) out.push({ cluster: row[1], kind: c[1], title: c[2] });
  }
  return out;
}

describe("status page (pure renderer)", () => {
  it("escapes every string it puts into HTML", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).to.equal("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    const html = renderStatusPage(knownFleetReport());
    expect(html).to.not.contain(INJECTION).and.not.contain("<script>document.title");
    expect(html).to.contain(escapeHtml(INJECTION));
    expect(html.match(/<script>/g)).to.have.length(1); // the page's own click handler, nothing else
  });

  it("is self-contained: no external script, style, font or image", () => {
    const html = renderStatusPage(knownFleetReport());
    expect(html)
      .to.not.match(/<(link|img|iframe)\b/)
      .and.not.match(/\bsrc=|@import|url\(|https?:\/\//);
  });

  it("draws one cell per (cluster, bundle) pair, coloured by Fleet's state, with the deploymentId and message", () => {
    const html = renderStatusPage(knownFleetReport());
    const cells = cellsOf(html);
    expect(cells).to.have.length(30);
    const counts: Record<string, number> = {};
    for (const c of cells) counts[c.kind] = (counts[c.kind] ?? 0) + 1;
    expect(counts).to.deep.equal(KNOWN_COUNTS);
    for (const [kind, n] of Object.entries(KNOWN_COUNTS)) expect(html).to.contain(`<b data-kind="${kind}">${n}</b>`);
    const modified = cells.find((c) => c.kind === "Modified")!;
    expect(modified.cluster).to.equal("prod-eu-2");
    expect(modified.title).to.contain("web on prod-eu-2: Modified\ndeploymentId s-web").and.contain("modified Deployment apps/web (spec.replicas)");
    expect(cells.find((c) => c.kind === "ErrApplied")).to.include({ cluster: "prod-us-1" });
    expect(html).to.contain(".k-ErrApplied.k-ErrApplied{background:#d32f2f");
  });

  it("groups rows by cluster group (a cluster in none last) or by a label, and shows agent, hash, reachability", () => {
    const m = statusMatrix(knownFleetReport());
    expect(m.rowGroups.map((g) => `${g.name}: ${g.rows.map((r) => r.cluster).join(" ")}`)).to.deep.equal([
      "group dev: dev-1 dev-2",
      "group prod: prod-eu-1 prod-eu-2 prod-us-1",
      "no cluster group: edge-1",
    ]);
    const byRegion = statusMatrix(knownFleetReport(), { label: "region" });
    expect(byRegion.rowGroups.map((g) => g.name)).to.deep.equal(["region=eu-west", "region=us-east"]);
    const edge = m.rowGroups[2].rows[0];
    expect(edge.info).to.deep.equal(["NotReady", "0/1", "rancher/fleet-agent:v0.13.1", "6a7f3c9e2b14", "unreachable: connect ECONNREFUSED 10.0.0.7:6443"]);
    expect(m.columnGroups.map((g) => `${g.gitRepo} ${g.ready} ${g.bundles.join(",")}`)).to.deep.equal([
      "apps 1/5 api,web,worker",
      "infra 4/6 ingress,monitoring",
    ]);
    expect(m.notes).to.deep.equal(["taken 2026-05-04T09:30:00.000Z"]);
  });
});

// A preview of: cluster a gets a new bundle and an update, b a replace and nothing else, c is pruned.
const entry = (cluster: string, bundle: string, deploymentId: string) => ({
  gitRepo: "apps",
  bundle,
  cluster,
  target: "all",
  deploymentId,
  paused: false,
  namespace: "ns",
});
const rec = (cluster: string, bundle: string, deploymentId: string): DeploymentRecord => ({
  gitRepo: "apps",
  bundle,
  cluster,
  target: "prod",
  deploymentId,
  commit: "c0",
  namespace: "ns",
  paused: false,
  objectCount: 1,
  revision: 1,
});
const dep = (key: string, counts: Partial<DeploymentSteps>): DeploymentSteps => {
  const [cluster, gitRepo, bundle] = key.split("/");
  return { key, cluster, gitRepo, bundle, created: 0, updated: 0, replaced: 0, deleted: 0, pruned: false, failed: false, steps: [], ...counts };
};
function previewReport(unreachable = new Map<string, string>()) {
  const state = {
    config: {
      clusters: [
        { name: "a", labels: { env: "dev" } },
        { name: "b", labels: { env: "dev" } },
        { name: "c", labels: { env: "prod" } },
      ],
      clusterGroups: [
        { name: "dev", labels: {}, selector: { matchLabels: { env: "dev" } } },
        { name: "prod", labels: {}, selector: { matchLabels: { env: "prod" } } },
      ],
      gitRepos: [{ name: "apps", targets: [{ name: "dev" }] }],
    },
    sources: new Map([["apps", { commit: "c1c1c1c1c1c1c1c1" }]]),
    bundles: [
      { gitRepo: "apps", name: "web" },
      { gitRepo: "apps", name: "api" },
    ],
    plan: { entries: [entry("a", "web", "s-web:2"), entry("a", "api", "s-api:1"), entry("b", "web", "s-web:1"), entry("b", "api", "s-api:2")], skipped: [] },
  } as unknown as FleetState;
  const before = {
    "a/apps/web": rec("a", "web", "s-web:1"),
    "b/apps/web": rec("b", "web", "s-web:1"),
    "b/apps/api": rec("b", "api", "s-api:1"),
    "c/apps/web": rec("c", "web", "s-web:1"),
  };
  const agent = (cluster: string, c: Partial<AgentSteps> = {}): AgentSteps => ({
    cluster,
    created: 0,
    updated: 0,
    replaced: 0,
    deleted: 0,
    replacements: [],
    failed: false,
    ...c,
  });
  const groups: GroupedSteps = {
    deployments: new Map(
      [
        dep("a/apps/web", { updated: 1 }),
        dep("a/apps/api", { created: 2 }),
        dep("b/apps/web", {}),
        dep("b/apps/api", { replaced: 1 }),
        dep("c/apps/web", { deleted: 3, pruned: true }),
      ].map((d) => [d.key, d]),
    ),
    agents: new Map([
      ["a", agent("a", { updated: 1 })],
      ["b", agent("b")],
      ["c", agent("c")],
    ]),
    failedClusters: [],
  };
  const prunes = [{ cluster: "c", gitRepo: "apps", bundle: "web", objects: 3, reason: "target `prod` was removed from GitRepo `apps`" }];
  return { stack: "prod", groups, before, state, unreachable, prunes, takenAt: "2026-05-04T10:00:00.000Z", facts: reportFacts(state, before) };
}

describe("preview page and PR summary (pure)", () => {
  it("marks every pair created, updated, replaced, pruned (with the reason) or unchanged", () => {
    const html = renderPreviewPage(previewReport());
    const cells = cellsOf(html).map((c) => `${c.cluster}/${c.kind}`);
    // Columns: api, web.
    expect(cells).to.deep.equal(["a/create", "a/update", "b/replace", "b/unchanged", "c/NotTargeted", "c/prune"]);
    const prune = cellsOf(html).find((c) => c.kind === "prune")!;
    expect(prune.title).to.contain(
      "web on c: prune\ntarget prod was removed from GitRepo apps\ndeploymentId s-web:1\n0 created, 0 updated, 0 replaced, 3 deleted",
    );
    expect(cellsOf(html).find((c) => c.kind === "update")!.title).to.contain("deploymentId s-web:1\nbecomes s-web:2");
    expect(html).to.contain("objects: 2 to create, 2 to update, 1 to replace, 3 to delete");
    // Each row: its worst change first, and the agent's.
    const rows = previewMatrix(previewReport())
      .rowGroups.flatMap((g) => g.rows)
      .map((r) => `${r.cluster} ${r.kind}: ${r.info.join(" | ")}`);
    expect(rows).to.deep.equal([
      "a update: 1 update, 1 create | 0 create, 1 update, 0 delete",
      "b replace: 1 replace | no change",
      "c prune: 1 prune | no change",
    ]);
  });

  it("an unreachable cluster's pairs are marked as left out", () => {
    const m = previewMatrix(previewReport(new Map([["b", "connect ETIMEDOUT"]])));
    const b = m.rowGroups.flatMap((g) => g.rows).find((r) => r.cluster === "b")!;
    expect(b.cells.map((c) => c.kind)).to.deep.equal(["unreachable", "unreachable"]);
    expect(m.notes).to.include("cluster b is unreachable (connect ETIMEDOUT): it was left out of this preview");
  });

  it("the PR summary embeds the blast radius: only the clusters and bundles that change", () => {
    const md = blastRadiusMarkdown(previewMatrix(previewReport())).join("\n");
    expect(md).to.contain("### Blast radius").and.contain("| cluster | `api` | `web` |\n|---|:-:|:-:|\n| `a` | + | ~ |\n| `b` | ± | · |\n| `c` |  | − |");
    const report = previewReport();
    const summary = renderSummaryMarkdown(report);
    expect(summary).to.contain("| `a` | + | ~ |");
    expect(summary.indexOf("### Blast radius")).to.be.lessThan(summary.indexOf("### Bundle deployments"));
    expect(renderSummaryMarkdown(report)).to.equal(summary);
  });

  it("the PR summary shows every hostile warning, name and failure as text: no HTML, link, mention, broken table or new block", () => {
    const report = previewReport();
    const shapes = Object.values(HOSTILE).filter((t) => t.length < 1000);
    const bundles = report.state.bundles.map((b) => ({ ...b, warnings: shapes.map((t) => `fleet.yaml in ${t}: not honoured`) }));
    const failures = {
      list: () => shapes.map((t, i) => ({ gitRepo: `apps${t}`, bundle: `web|${t}`, cluster: i % 2 ? "a" : "", message: t, reason: t, file: `dir ${t}` })),
    };
    const md = renderSummaryMarkdown({ ...report, state: { ...report.state, bundles, failures } as unknown as FleetState });
    // Outside code spans (where nothing is markup, a link or a mention), no HTML, link, image, mention or URL.
    const text = md.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, "");
    expect(text).to.not.match(/<!--|<script|<img|<https?:|[^\\]\]\(|@channel|@octocat|https:\/\/evil/i);
    expect(md).to.not.match(/[\r\u2028\u2029\u0085\v\f]/);
    // eslint-disable-next-line no-control-regex -- what must not reach the summary
    expect(md).to.not.match(/[\x00-\x08\x1b\x7f]/);
    const rows = md.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| cluster |") && !l.startsWith("|---"));
    const cells = (row: string) => row.replace(/\\\|/g, "").split("|").length;
    for (const row of md.split("\n").filter((l) => l.includes("nothing deployed"))) expect(cells(row), row).to.equal(7);
    expect(rows.length).to.be.greaterThan(0);
    // Every line is one of the summary's own: a heading, a quote, a table row, a list item, or plain text of ours.
    for (const line of md.split("\n"))
      expect(line, line).to.not.match(
        /^\s*(#{1,6} (?!pulumi-fleet|Failed|Blast|Bundle|Prunes|Agents|Rollout|Held)|<(?!\/?details>|details><summary>)|::|##\[)/,
      );
  });

  it("the PR summary says which settings are not honoured, per GitRepo and bundle, even when nothing changes", () => {
    const report = previewReport();
    const bundles = report.state.bundles.map((b) =>
      b.name === "web" ? { ...b, warnings: ["fleet.yaml: helm.atomic: true is not honoured yet: the engine does not roll back a failed update"] } : b,
    );
    const summary = renderSummaryMarkdown({ ...report, state: { ...report.state, bundles } as FleetState });
    expect(summary).to.contain("> **Warning:** GitRepo `apps` bundle `web`: fleet.yaml: helm.atomic: true is not honoured yet");
    const quiet = renderSummaryMarkdown({
      ...report,
      groups: { ...report.groups, deployments: new Map(), agents: new Map() },
      state: { ...report.state, bundles } as FleetState,
    });
    expect(quiet).to.contain("helm.atomic: true is not honoured yet").and.contain("No changes");
  });
});

const event = (kind: "pre" | "out" | "failed", op: OpType, urn: string, custom = true): EngineEvent => {
  const metadata = {
    op,
    urn,
    type: urn.split("::")[2].split("$").pop()!,
    provider: "",
    new: { type: "", urn, custom, parent: "", id: "", inputs: {}, outputs: {}, provider: "" },
  };
  return {
    sequence: 0,
    timestamp: 0,
    ...(kind === "pre"
      ? { resourcePreEvent: { metadata } }
      : kind === "out"
        ? { resOutputsEvent: { metadata } }
        : { resOpFailedEvent: { metadata, status: 1, steps: 1 } }),
  } as EngineEvent;
};
const obj = (cluster: string, i: number) => `urn:pulumi:s::p::kubernetes:core/v1:ConfigMap::${cluster}/b/core:ConfigMap:ns:cm-${i}`;

class FakeStream implements ProgressStream {
  text = "";
  constructor(
    readonly isTTY: boolean,
    readonly columns = 60,
    readonly rows = 20,
  ) {}
  write(t: string) {
    this.text += t;
    return true;
  }
}

describe("progress of long operations", () => {
  it("counts per cluster the objects started and finished; components and the stack's reference do not count", () => {
    const c = new ProgressCounter();
    for (let i = 0; i < 3; i++) c.onEvent(event("pre", "create", obj("dev-1", i)));
    c.onEvent(event("pre", "create", obj("dev-2", 0)));
    c.onEvent(event("pre", "create", "urn:pulumi:s::p::pulumi-fleet:index:Agent::dev-1", false));
    c.onEvent(event("pre", "read", "urn:pulumi:s::p::pulumi:pulumi:StackReference::org/p/s"));
    c.onEvent(event("out", "create", obj("dev-1", 0)));
    c.onEvent(event("failed", "create", obj("dev-1", 1)));
    c.onEvent(event("out", "create", obj("dev-2", 0)));
    const none = { seen: 0, done: 0, failed: 0 };
    expect(c.snapshot()).to.deep.equal([
      { cluster: "dev-1", seen: 3, done: 2, failed: 1, bundles: none },
      { cluster: "dev-2", seen: 1, done: 1, failed: 0, bundles: none },
    ]);
    expect(clusterLine("up", c.snapshot()[0])).to.equal("cluster dev-1: 2/3 resources applied, 1 failed");
    const view = { op: "up", elapsedMs: 12_000, clusters: c.snapshot(), width: 40, maxListed: 5 };
    expect(progressLines(view, false)).to.deep.equal(["progress: up 12s: 3/4 steps done, 1/2 clusters caught up, 1 failed; in progress: dev-1 2/3"]);
    const tty = progressLines(view, true);
    expect(tty[1]).to.equal("  dev-1 #############....... 2/3 (1 fa…");
    expect(tty.every((l) => l.length <= 39)).to.equal(true);
  });

  it("counts a cluster's bundles apart: its line says how many of them are applied", () => {
    const c = new ProgressCounter();
    const pair = (cluster: string, b: string) => `urn:pulumi:s::p::pulumi-fleet:index:Cluster$pulumi-fleet:index:BundleDeployment::${cluster}/examples/${b}`;
    for (const b of ["a", "b", "c"]) c.onEvent(event("pre", "create", pair("prod-3", b)));
    c.onEvent(event("pre", "create", "urn:pulumi:s::p::pulumi-fleet:index:Cluster$pulumi-fleet:index:ClusterSetup::prod-3"));
    c.onEvent(event("out", "create", pair("prod-3", "a")));
    c.onEvent(event("failed", "create", pair("prod-3", "b")));
    expect(c.snapshot()[0].bundles).to.deep.equal({ seen: 3, done: 2, failed: 1 });
    expect(clusterLine("up", c.snapshot()[0])).to.equal("cluster prod-3: 2/3 bundles applied, 1 failed");
    expect(clusterLine("status", c.snapshot()[0])).to.equal("cluster prod-3: 2/3 bundles checked, 1 failed");
  });

  it("shows nothing for a short run", () => {
    const err = new FakeStream(false);
    const tty = new FakeStream(true);
    for (const stream of [err, tty]) {
      const p = new Progress("up", stream, { output: new FakeStream(stream.isTTY), redrawMs: 0 });
      p.onEvent(event("pre", "create", obj("dev-1", 0)));
      p.onEvent(event("out", "create", obj("dev-1", 0)));
      p.finish();
    }
    expect(err.text + tty.text).to.equal("");
  });

  it("on a long run prints plain lines per cluster, at most once per interval, with no control characters when not on a terminal", () => {
    const err = new FakeStream(false);
    const out = new FakeStream(false);
    let now = 0;
    const p = new Progress("up", err, { output: out, intervalMs: 3_600_000, now: () => now });
    p.output("engine line 1\nengine ");
    p.onEvent(event("pre", "create", obj("dev-1", 0)));
    p.onEvent(event("pre", "create", obj("dev-2", 0)));
    p.output("line 2\n");
    p.onEvent(event("out", "create", obj("dev-1", 0)));
    now = 6_000;
    (p as unknown as { tick(): void }).tick(); // what the interval's timer calls
    expect(err.text).to.equal("cluster dev-1: 1/1 resources applied\nprogress: up 6s: 1/2 steps done, 1/2 clusters caught up; in progress: dev-2 0/1\n");
    p.onEvent(event("out", "create", obj("dev-2", 0)));
    p.finish();
    expect(out.text).to.equal("engine line 1\nengine line 2\n");
    expect(err.text.split("\n").slice(2)).to.deep.equal(["cluster dev-2: 1/1 resources applied", ""]); // dev-1's line is not repeated
    // eslint-disable-next-line no-control-regex
    expect(err.text + out.text).to.not.match(/[\x00-\x09\x0b-\x1f\x7f]/);
  });

  it("on a terminal redraws a block under the engine's output and removes it at the end", () => {
    const err = new FakeStream(true);
    const out = new FakeStream(true);
    let now = 0;
    const p = new Progress("up", err, { output: out, redrawMs: 0, longMs: 0, now: () => now });
    p.onEvent(event("pre", "create", obj("dev-1", 0)));
    now = 5_000;
    p.output("half a line");
    expect(out.text).to.equal(""); // a partial line waits: the block must stay below whole lines
    p.output(" done\n");
    p.onEvent(event("out", "create", obj("dev-1", 0)));
    p.finish();
    expect(out.text).to.equal("half a line done\n");
    expect(err.text).to.contain("up 0s: 0/1 steps done, 0/1 clusters caught up\n  dev-1 .................... 0/1\n");
    expect(err.text).to.contain("\x1b[2F\x1b[J"); // the two-line block lifted before the engine's line
    expect(err.text.endsWith("\x1b[J" + "cluster dev-1: 1/1 resources applied\n")).to.equal(true);
  });
});
