import { expect } from "chai";
import { EngineEvent } from "@pulumi/pulumi/automation";
import { bounded, clusterRows, clusterTable, runHeadline } from "../../automation/reports/run-summary";
import { pairOutcomes } from "../../automation/engine/pair-outcomes";
import { ClustersUnreachableError, exitCodeOf, EXIT } from "../../automation/reports/exit-codes";
import { WarningsOnce } from "../../automation/reports/engine-warnings";
import { lockHolders } from "../../automation/engine/locks";
import { Progress } from "../../automation/reports/progress";
import { DeploymentSteps, GroupedSteps } from "../../automation/engine/steps";
import { DeploymentFailure } from "../../core/desired/failures";

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
  });
});
