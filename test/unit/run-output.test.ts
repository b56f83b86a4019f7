import { expect } from "chai";
import { EngineEvent } from "@pulumi/pulumi/automation";
import { bounded, clusterRows, clusterTable, runHeadline } from "../../automation/reports/run-summary";
import { pairOutcomes } from "../../automation/engine/pair-outcomes";
import { ClustersUnreachableError, exitCodeOf, EXIT } from "../../automation/reports/exit-codes";
import { WarningsOnce } from "../../automation/reports/engine-warnings";
import { lockHolders } from "../../automation/engine/locks";
import { Progress } from "../../automation/reports/progress";
import { DeploymentSteps, GroupedSteps } from "../../automation/engine/steps";
import { DeploymentFailure, describeFailures } from "../../core/plan/failures";
import { renderErrorWhere } from "../../core/render/render-error";
import { parseYamlFile, yamlSyntaxText } from "../../core/base/yaml-documents";

const steps = (cluster: string, bundle: string, counts: Partial<DeploymentSteps> = {}): DeploymentSteps => ({
  key: `${cluster}/repo/${bundle}`,
  cluster,
  gitRepo: "repo",
  bundle,
  created: 0,
  updated: 0,
  replaced: 0,
  deleted: 0,
  pruned: false,
  failed: false,
  steps: [],
  ...counts,
});
const groupsOf = (...d: DeploymentSteps[]): GroupedSteps => ({ deployments: new Map(d.map((x) => [x.key, x])), agents: new Map(), failedClusters: [] });
const entry = (cluster: string, bundle: string) => ({ cluster, gitRepo: "repo", bundle });
const failure = (cluster: string, bundle: string): DeploymentFailure => ({ cluster, gitRepo: "repo", bundle, message: "m", reason: "r" });

describe("what a run prints at its end (run-summary.ts)", () => {
  it("a no-op over many clusters is one line: nothing to do, and no table", () => {
    const entries = Array.from({ length: 200 }, (_, i) => [entry(`c${i}`, "a"), entry(`c${i}`, "b")]).flat();
    const outcomes = pairOutcomes({ entries, failures: [], held: [], groups: groupsOf(), ready: () => true });
    const rows = clusterRows(outcomes);
    expect(rows).to.have.length(200);
    expect(clusterTable("up", rows)).to.deep.equal([]);
    expect(runHeadline("up", rows)).to.equal("nothing to do (400 bundle deployment(s) on 200 cluster(s) unchanged)");
  });

  it("a run over many clusters prints one line per cluster with something to say, and one line for the rest", () => {
    const entries = Array.from({ length: 200 }, (_, i) => entry(`c${String(i).padStart(3, "0")}`, "a"));
    const groups = groupsOf(steps("c000", "a", { created: 2 }), steps("c001", "a", { updated: 1 }), steps("c002", "gone", { deleted: 3, pruned: true }));
    const outcomes = pairOutcomes({
      entries,
      failures: [failure("c003", "a")],
      held: [],
      groups,
      ready: (k) => !k.startsWith("c004/") && !k.startsWith("c003/"),
    });
    const rows = clusterRows(outcomes);
    expect(clusterTable("up", rows)).to.deep.equal([
      "cluster  ready/bundles  changed  failed",
      "c000     1/1            1        0",
      "c001     1/1            1        0",
      "c002     1/1            1        0",
      "c003     0/1            0        1",
      "c004     0/1            0        0",
      "(195 other cluster(s): every bundle ready, nothing changed)",
    ]);
    expect(runHeadline("up", rows)).to.equal("3 of 200 bundle deployment(s) changed on 3 of 200 cluster(s)");
  });

  it("a preview names the cluster it could not read, and counts only the clusters it read", () => {
    const outcomes = pairOutcomes({
      entries: [entry("c1", "a"), entry("c2", "a")],
      failures: [],
      held: [],
      groups: groupsOf(steps("c1", "a", { created: 1 })),
    });
    const rows = clusterRows(outcomes, new Map([["c3", "https://10.0.0.3:6443: connect ECONNREFUSED"]]));
    expect(clusterTable("preview", rows)).to.deep.equal([
      "cluster  bundles  to change  failing",
      "c1       1        1          0",
      "c3       0        ?          ?        not read: https://10.0.0.3:6443: connect ECONNREFUSED",
      "(1 other cluster(s): nothing to change)",
    ]);
    expect(runHeadline("preview", rows)).to.equal("1 of 2 bundle deployment(s) would change on 1 of 2 cluster(s)");
  });

  it("a failed pair is failed, not changed; a held one counts as a bundle of its cluster", () => {
    const groups = groupsOf(steps("c1", "a", { created: 1, failed: true }));
    const outcomes = pairOutcomes({
      entries: [entry("c1", "a")],
      failures: [failure("c1", "a"), failure("", "broken")],
      held: [failure("c1", "held")],
      groups,
    });
    expect(clusterRows(outcomes)).to.deep.equal([{ cluster: "c1", bundles: 2, changed: 0, failed: 1 }]);
  });

  it("the engine's own steps that change something are counted in the last line; reads and compares are not", () => {
    const rows = clusterRows(pairOutcomes({ entries: [entry("c1", "a")], failures: [], held: [], groups: groupsOf(), ready: () => true }));
    expect(runHeadline("up", rows, { same: 19, read: 1 })).to.equal("nothing to do (1 bundle deployment(s) on 1 cluster(s) unchanged)");
    // A provider's configuration changes, no bundle deployment does: not "nothing to change".
    expect(runHeadline("preview", rows, { same: 5, update: 1, delete: 1 })).to.equal(
      "no bundle deployment would change (1 on 1 cluster(s)); engine steps: 1 delete, 1 update",
    );
  });

  it("a long list is cut with a line that counts the rest", () => {
    expect(bounded(["a", "b"], 2, (n) => `${n} more`)).to.deep.equal(["a", "b"]);
    expect(bounded(["a", "b", "c", "d"], 2, (n) => `${n} more`)).to.deep.equal(["a", "b", "2 more"]);
  });
});

describe("exit codes (exit-codes.ts)", () => {
  it("a cluster that could not be read has its own code, also wrapped as an operation's cause; anything else is a failure", () => {
    const unread = new ClustersUnreachableError("x", new Map([["c3", "down"]]));
    expect(exitCodeOf(unread)).to.equal(EXIT.clustersUnreachable);
    expect(exitCodeOf(Object.assign(new Error("up failed"), { cause: unread }))).to.equal(3);
    expect(exitCodeOf(new Error("boom"))).to.equal(EXIT.failed);
    expect(exitCodeOf("not an error")).to.equal(1);
    expect(new Set(Object.values(EXIT)).size).to.equal(Object.keys(EXIT).length);
  });
});

describe("the program's warnings, once each (engine-warnings.ts)", () => {
  const diag = (message: string, severity: "warning" | "error" | "info" = "warning", urn = "urn:a"): EngineEvent =>
    ({ sequence: 0, timestamp: 0, diagnosticEvent: { message, severity, color: "never", urn } }) as EngineEvent;
  it("prints a warning the engine repeats (per resource, then in its Diagnostics) once, without its markup", () => {
    const w = new WarningsOnce();
    const got = [
      diag("<{%reset%}>fleet.yaml: helm.atomic is not honoured<{%reset%}>\n"),
      diag("fleet.yaml: helm.atomic is not honoured\n", "warning", "urn:b"),
      diag("an error", "error"),
      diag("info", "info"),
      diag("warning: already worded\n"),
    ].map((e) => w.next(e));
    expect(got).to.deep.equal(["warning: fleet.yaml: helm.atomic is not honoured", undefined, undefined, undefined, "warning: already worded"]);
  });
});

describe("a stale lock is one holder, however often the error repeats it", () => {
  it("the Automation API's error holds the CLI's stderr twice: each lock is read once", () => {
    const stderr =
      "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.\n" +
      "  file:///s/.pulumi/locks/organization/pulumi-fleet/team/9f1e.json: created by bob@laptop (pid 17) at 2026-11-23T10:01:02Z\n";
    const text = `code: 255\n stdout: \n stderr: ${stderr}\n err?: Error: Command failed with exit code 255: pulumi up\n${stderr}\n`;
    expect(lockHolders(text)).to.have.length(1);
  });
});

describe("progress of a cluster that could not be read", () => {
  it("its line says it was not read, never that its bundles were done", () => {
    let text = "";
    let now = 0;
    const p = new Progress("preview", { write: (t: string) => (text += t), isTTY: false }, { output: { write: () => true }, longMs: 0, now: () => now });
    const urn = "urn:pulumi:s::p::kubernetes:core/v1:ConfigMap::c3/b/core:ConfigMap:ns:cm";
    const meta = {
      op: "same",
      urn,
      type: "kubernetes:core/v1:ConfigMap",
      provider: "",
      new: { type: "", urn, custom: true, parent: "", id: "", inputs: {}, outputs: {}, provider: "" },
    };
    p.leftOut(new Map([["c3", "https://10.0.0.3:6443: connect ECONNREFUSED"]]));
    p.onEvent({ sequence: 0, timestamp: 0, resourcePreEvent: { metadata: meta } } as EngineEvent);
    p.onEvent({ sequence: 0, timestamp: 0, resOutputsEvent: { metadata: meta } } as EngineEvent);
    now = 10_000;
    p.finish();
    expect(text).to.equal("cluster c3: not read (https://10.0.0.3:6443: connect ECONNREFUSED)\n");
    // up and preview end with their own table: no line per cluster at all.
    let quiet = "";
    const q = new Progress(
      "up",
      { write: (t: string) => (quiet += t), isTTY: false },
      { output: { write: () => true }, longMs: 0, now: () => now, perCluster: false },
    );
    q.onEvent({ sequence: 0, timestamp: 0, resourcePreEvent: { metadata: meta } } as EngineEvent);
    q.onEvent({ sequence: 0, timestamp: 0, resOutputsEvent: { metadata: meta } } as EngineEvent);
    (q as unknown as { tick(): void }).tick();
    q.finish();
    expect(quiet).to.equal("");
  });
});

describe("every failure is one line per cause, naming what caused it", () => {
  const unread = (bundle: string, cluster: string): DeploymentFailure => ({
    gitRepo: "broken",
    bundle,
    cluster,
    message: `gitRepo broken, bundle ${bundle}, cluster ${cluster}: kept as deployed: the GitRepo could not be read: fatal: unable to access`,
    reason: "kept as deployed: the GitRepo could not be read: fatal: unable to access",
    kept: { deploymentId: "s-1:abcdef0123456789", objects: 1 },
  });
  it("an unreadable GitRepo is one line, however many pairs it holds; other causes keep their own line", () => {
    const pairs = ["a", "b"].flatMap((b) => ["c1", "c2", "c3"].map((c) => unread(`broken-${b}`, c)));
    const other = { ...failure("c1", "x"), gitRepo: "other", message: "gitRepo other, bundle x, cluster c1: boom", reason: "boom" };
    expect(describeFailures([...pairs, other])).to.deep.equal([
      "gitRepo broken: kept as deployed: the GitRepo could not be read: fatal: unable to access " +
        "(6 bundle deployment(s): bundle(s) broken-a, broken-b on cluster(s) c1, c2, c3; each kept as last deployed)",
      "gitRepo other, bundle x, cluster c1: boom (nothing deployed)",
    ]);
  });

  it("a template error on several clusters is one line naming the template file and line", () => {
    const tpl = (cluster: string): DeploymentFailure => ({
      gitRepo: "g",
      bundle: "web",
      cluster,
      file: "web/chart/templates/cm.yaml",
      line: 9,
      message: "m",
      reason: "column 15: executing",
    });
    expect(describeFailures([tpl("c1"), tpl("c2")])).to.deep.equal([
      "web/chart/templates/cm.yaml:9 gitRepo g, bundle web: column 15: executing (2 bundle deployment(s): bundle(s) web on cluster(s) c1, c2; nothing deployed)",
    ]);
  });

  it("a render error is labelled with the template or manifest the renderer names, on one line", () => {
    const helm = { kind: "helm" as const, path: "chart" };
    const multiline =
      'cchart/templates/cm.yaml:9:15\n  executing "cchart/templates/cm.yaml" at <.Values.nope.deeper>:\n    nil pointer evaluating interface {}.deeper';
    expect(renderErrorWhere(multiline, "apps/web", helm)).to.deep.equal({
      file: "apps/web/chart/templates/cm.yaml",
      line: 9,
      reason: 'column 15: executing "cchart/templates/cm.yaml" at <.Values.nope.deeper>: nil pointer evaluating interface {}.deeper',
    });
    expect(renderErrorWhere("template: web/charts/db/templates/x.yaml:12:3: executing boom", "web", { kind: "helm", path: "." })).to.deep.equal({
      file: "web/charts/db/templates/x.yaml",
      line: 12,
      reason: "column 3: executing boom",
    });
    // A remote chart is not in the repository: Helm's own name for the file.
    expect(renderErrorWhere("template: redis/templates/x.yaml:4:1: boom", "r", { kind: "helm", repo: "https://charts", chart: "redis" }).file).to.equal(
      "redis/templates/x.yaml",
    );
    expect(renderErrorWhere('parse error at (c/templates/a.yaml:7): function "nope" not defined', ".", { kind: "helm", path: "." })).to.deep.equal({
      file: "templates/a.yaml",
      line: 7,
      reason: 'parse error at (c/templates/a.yaml:7): function "nope" not defined',
    });
    expect(renderErrorWhere("error while running post render on files: cm.yaml: yaml: line 4: did not find expected key", "d", { kind: "yaml" })).to.deep.equal(
      {
        file: "d/cm.yaml",
        line: 4,
        reason: "YAML: did not find expected key",
      },
    );
    expect(renderErrorWhere("kustomize build failed:\n  no such file", "k", { kind: "kustomize", dir: "." })).to.deep.equal({
      reason: "kustomize build failed: no such file",
    });
  });

  it("a YAML syntax error's words end in what is wrong, not in a dangling colon", () => {
    expect(yamlSyntaxText('Implicit keys need to be on a single line at line 1, column 4:\n\na: "x\n   ^\n')).to.equal(
      "Implicit keys need to be on a single line (column 4)",
    );
    expect(yamlSyntaxText("All mapping items must start at the same column")).to.equal("All mapping items must start at the same column");
    // A stack file, as every command reads it first: file, line, one line of words.
    expect(() => parseYamlFile("config:\n  pulumi-fleet:clusters: [\n   a: b\n", "stacks/Pulumi.bad.yaml")).to.throw(
      /^stacks\/Pulumi\.bad\.yaml:4: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a \] \(column 1\)$/,
    );
  });
});
