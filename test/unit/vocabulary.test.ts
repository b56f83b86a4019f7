/**
 * One vocabulary (automation/reports/vocabulary.ts): every report of the same fleet says each state and
 * condition with the same word, and docs/behaviour.md lists exactly those words. A word added to one
 * report and not the others, or to the code and not the docs, fails here.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import { DeploymentStatus, STATE_RANK, StatusReport, computeStatus, formatStatusTable } from "../../automation/reports/status";
import { PAIR_CONDITIONS, HOLD_CONDITION, failureState } from "../../automation/reports/vocabulary";
import { fleetStateExposition } from "../../automation/metrics/exposition";
import { pairsOfStatus } from "../../automation/metrics/pairs";
import { observedByStatus } from "../../automation/notify/observe";
import { decideAfterUp } from "../../automation/notify/events";
import { headline } from "../../automation/notify/chat-lines";
import { statusMatrix } from "../../automation/reports/fleet-matrix";
import { reportFacts } from "../../core/desired/report-facts";
import { groupSteps } from "../../automation/engine/steps";
import type { FleetState } from "../../core/plan/pipeline";

const STATES = Object.keys(STATE_RANK);

/** A fleet with a pair in every condition: c1 Offline, c2 paused (held), c3 behind a window, c4 a --partition, c5 a paused bundle, c6 Stalled. */
function fleetWithEveryCondition(): StatusReport {
  const entry = (cluster: string, deploymentId: string, paused = false) => ({
    gitRepo: "g",
    bundle: "b",
    cluster,
    target: "all",
    deploymentId,
    paused,
    namespace: "ns",
  });
  const held = (cluster: string, kind: "paused" | "schedule" | "partition") => ({
    gitRepo: "g",
    bundle: "h",
    cluster,
    message: kind,
    reason: kind,
    held: kind,
    kept: { deploymentId: "s-h:1", objects: 1 },
  });
  const stalled = {
    gitRepo: "g",
    bundle: "s",
    cluster: "c6",
    message: "x",
    reason: "Stalled after 3",
    stalled: { failures: 3, since: "2026-11-29T05:00:00Z", reason: "denied" },
  };
  const failures = [held("c2", "paused"), held("c3", "schedule"), held("c4", "partition"), stalled];
  const state = {
    config: { clusters: ["c1", "c2", "c3", "c4", "c5", "c6"].map((name) => ({ name })), gitRepos: [{ name: "g" }] },
    sources: new Map([["g", { commit: "abc" }]]),
    plan: { entries: [entry("c1", "s-1:a"), entry("c5", "s-2:a", true)], skipped: [] },
    failures: { list: () => failures },
  } as unknown as FleetState;
  const rec = (cluster: string) => ({ gitRepo: "g", bundle: "b", cluster, deploymentId: "s-1:a", commit: "abc", objectCount: 1 });
  const applied = { "c1/g/b": rec("c1"), "c5/g/b": rec("c5") } as never;
  const unreachable = new Map([["c1", "timeout; Offline since 2026-11-29T07:05:00.000Z, last seen 2026-11-29T07:00:00.000Z"]]);
  return computeStatus("s", state, applied, reportFacts(state, applied), groupSteps([]), new Set(), unreachable, {
    probed: true,
    offline: new Map([["c1", { since: "2026-11-29T07:05:00.000Z", lastSeen: "2026-11-29T07:00:00.000Z" }]]),
  });
}

describe("one vocabulary across the reports", () => {
  const report = fleetWithEveryCondition();
  const conditionOf = (cluster: string) => report.deployments.find((d) => d.cluster === cluster)!.condition;

  it("status gives each pair one of Fleet's states and at most one condition, each from the list", () => {
    expect(report.deployments.map((d) => `${d.cluster} ${d.state} ${d.condition ?? "-"}`)).to.deep.equal([
      "c1 NotReady Offline",
      "c5 OutOfSync Paused",
      "c2 OutOfSync Paused",
      "c3 OutOfSync OffSchedule",
      "c4 OutOfSync Held",
      "c6 ErrApplied Stalled",
    ]);
    for (const d of report.deployments) expect(STATES).to.include(d.state);
    expect(report.clusters.find((c) => c.cluster === "c1")!.state).to.equal("Offline");
    expect(conditionOf("c1")).to.equal("Offline");
  });

  it("the table, the page, the metrics and the notifications say the same state and condition for each pair", () => {
    const said = (d: DeploymentStatus) => (d.condition ? `${d.state} (${d.condition})` : d.state);
    const table = formatStatusTable(report);
    const page = statusMatrix(report).rowGroups.flatMap((g) => g.rows.flatMap((r) => r.cells.map((c) => c.detail[0])));
    const metrics = fleetStateExposition({ stack: "s", observedAt: new Date(0), pairs: pairsOfStatus(report.deployments, {}) });
    // What an up (and the watcher's) sends of each pair it observed, first seen.
    const events = decideAfterUp({}, observedByStatus(report.deployments, {}), new Map(), [], { stack: "s", time: "t" }).events;
    for (const d of report.deployments) {
      expect(table, d.cluster).to.match(new RegExp(`^ +${d.cluster} +${said(d).replace(/[()]/g, "\\$&")} `, "m"));
      expect(page, d.cluster).to.include(`${d.bundle} on ${d.cluster}: ${said(d)}`);
      expect(metrics, d.cluster).to.contain(
        `pulumi_fleet_bundledeployment_state{stack="s",git_repo="g",bundle="${d.bundle}",cluster="${d.cluster}",state="${d.state}"} 1`,
      );
      if (d.condition)
        expect(metrics).to.contain(
          `pulumi_fleet_bundledeployment_condition{stack="s",git_repo="g",bundle="${d.bundle}",cluster="${d.cluster}",condition="${d.condition}"} 1`,
        );
      const e = events.find((x) => x.cluster === d.cluster && x.bundle === d.bundle);
      if (e) {
        expect(e).to.include({ state: d.state, condition: d.condition ?? null });
        expect(headline(e)).to.contain(`: ${said(d)}`);
      }
    }
    expect(events.length, "the notifications said something of each pair first seen").to.equal(report.deployments.length);
    for (const label of [...metrics.matchAll(/condition="([^"]+)"/g)].map((m) => m[1])) expect(PAIR_CONDITIONS).to.include(label);
  });

  it("a hold's state is one rule: status, the metrics and the notifications read failureState", () => {
    expect(failureState({ held: "paused", kept: { deploymentId: "x", objects: 1 } })).to.equal("OutOfSync");
    expect(failureState({ held: "schedule" })).to.equal("Pending");
    expect(failureState({ field: "rolloutStrategy" })).to.equal("WaitApplied");
    expect(failureState({})).to.equal("ErrApplied");
    expect(Object.values(HOLD_CONDITION).sort()).to.deep.equal(["Held", "OffSchedule", "Paused"]);
  });

  it("docs/behaviour.md's table of words lists exactly Fleet's states and the conditions", () => {
    const doc = fs.readFileSync("docs/behaviour.md", "utf8");
    const section = doc.slice(doc.indexOf("**The words of the states.**"), doc.indexOf("- **Status page.**"));
    const words = [...section.matchAll(/^ {2}\| (.+?) \| /gm)].slice(1).flatMap((m) => [...m[1].matchAll(/`([A-Za-z]+)`/g)].map((w) => w[1]));
    expect(words.sort()).to.deep.equal([...STATES, ...PAIR_CONDITIONS].sort());
  });
});

describe("a rollback's pin and the last run, in status, the page and the metrics", () => {
  it("status's table and the page's notes say the pin in the same words; the metric is 1 while pinned", () => {
    const report = fleetWithEveryCondition();
    report.lastRun = { id: "20261129-071502-k3", kind: "rollback", at: "2026-11-29T07:15:02.000Z", ok: true };
    report.pinned = {
      run: "20261129-070000-aa",
      by: "20261129-071502-k3",
      who: "ana",
      at: "2026-11-29T07:15:02.000Z",
      message: "rolled back to run 20261129-070000-aa by ana at 2026-11-29T07:15:02.000Z",
    };
    expect(formatStatusTable(report))
      .to.contain(`pinned: ${report.pinned.message}\n`)
      .and.contain("last run 20261129-071502-k3 (rollback) at 2026-11-29T07:15:02.000Z");
    expect(statusMatrix(report).notes).to.include(`pinned: ${report.pinned.message}`).and.include("last run 20261129-071502-k3 (rollback)");
    const metrics = (pinned?: boolean) => fleetStateExposition({ stack: "s", observedAt: new Date(0), pairs: [], pinned });
    expect(metrics(true)).to.contain('pulumi_fleet_rollback_pinned{stack="s"} 1');
    expect(metrics(false)).to.contain('pulumi_fleet_rollback_pinned{stack="s"} 0');
    expect(metrics(undefined)).to.not.contain("pulumi_fleet_rollback_pinned");
  });
});
