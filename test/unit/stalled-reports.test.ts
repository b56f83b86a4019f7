/**
 * A Stalled pair (core/plan/stalled.ts) in every report: the page's cell, the metrics, the PR summary.
 * `status --json` and the table are test/e2e/stalled.test.ts (the real operations).
 */
import { expect } from "chai";
import { statusMatrix } from "../../automation/reports/fleet-matrix";
import { stalledMarkdown } from "../../automation/reports/pr-summary";
import { fleetStateExposition } from "../../automation/metrics/exposition";
import { pairsAfterUp, pairsOfStatus } from "../../automation/metrics/pairs";
import { DeploymentFailure } from "../../core/plan/failures";
import { decideAfterUp } from "../../automation/notify/events";
import { observedAfterUp } from "../../automation/notify/observe";
import { knownFleetReport } from "../support/status-fixtures";
import { HOSTILE } from "../support/hostile-text";

const STALL = { failures: 3, since: "2026-11-29T05:00:00Z", reason: "ErrApplied: denied by policy" };

describe("a Stalled pair in the reports", () => {
  it("the page's cell says it is Stalled, since when, and how to try again", () => {
    const report = knownFleetReport();
    const d = report.deployments.find((x) => x.state === "ErrApplied" && x.cluster)!;
    d.stalled = STALL;
    const row = statusMatrix(report)
      .rowGroups.flatMap((g) => g.rows)
      .find((r) => r.cluster === d.cluster)!;
    const cell = row.cells.find((c) => c.detail.some((l) => l.startsWith("stalled:")))!;
    expect(cell.kind).to.equal("ErrApplied");
    expect(cell.detail).to.include("stalled: 3 failures with the same inputs since 2026-11-29T05:00:00Z; not applied, --retry to try again");
  });

  it("metrics: pulumi_fleet_bundledeployment_condition says Stalled for it and nothing for the others, after up and after status", () => {
    const failure: DeploymentFailure = { gitRepo: "apps", bundle: "web", cluster: "c1", message: "", reason: "Stalled after 3", stalled: STALL };
    const up = pairsAfterUp({ entries: [], failures: [failure], states: {}, records: {}, unreachable: new Map() });
    expect(up[0]).to.include({ state: "ErrApplied", condition: "Stalled" });
    const status = pairsOfStatus(
      [
        {
          gitRepo: "apps",
          bundle: "web",
          cluster: "c1",
          state: "ErrApplied",
          deploymentId: "",
          message: "Stalled after 3",
          stalled: STALL,
          condition: "Stalled",
        },
        { gitRepo: "apps", bundle: "web", cluster: "c2", state: "Ready", deploymentId: "d", message: "" },
      ],
      {},
    );
    const text = fleetStateExposition({ stack: "prod", observedAt: new Date(0), pairs: status });
    expect(text).to.contain('pulumi_fleet_bundledeployment_condition{stack="prod",git_repo="apps",bundle="web",cluster="c1",condition="Stalled"} 1');
    expect(text).to.not.contain('cluster="c2",condition=');
  });

  it("notifications: a pair refused, then Stalled, then Stalled again is told once (when it first failed)", () => {
    const ctx = { stack: "prod", time: "2026-11-29T06:00:00Z" };
    const refused: DeploymentFailure = { gitRepo: "apps", bundle: "web", cluster: "c1", message: "", reason: "ErrApplied: denied by policy" };
    const stalled: DeploymentFailure = { ...refused, reason: "Stalled after 3 failures with the same inputs", stalled: STALL };
    let memory = {};
    const told: number[] = [];
    for (const f of [refused, refused, stalled, stalled]) {
      const d = decideAfterUp(memory, observedAfterUp({}, {}, [f]), new Map(), [], ctx);
      told.push(d.events.length);
      memory = d.memory;
    }
    expect(told).to.deep.equal([1, 0, 0, 0]);
  });

  it("the PR summary lists it under its own heading, its reason escaped (one table row each, whatever the reason holds)", () => {
    const reasons = Object.values(HOSTILE);
    const failures = reasons.map((reason, i): DeploymentFailure => ({
      gitRepo: "apps",
      bundle: "web",
      cluster: `c${i}`,
      message: "",
      reason: "x",
      stalled: { ...STALL, reason },
    }));
    const md = stalledMarkdown(failures);
    expect(md.join("\n")).to.contain("### Stalled bundle deployments").and.contain("stalled: not applied, `--retry` to try again");
    expect(md.join("\n")).to.contain("| `c0` | `web` | `apps` | 3 | `2026-11-29T05:00:00Z` |");
    expect(
      md.filter((l) => l.startsWith("| `c")),
      "a line break in a reason does not break its row",
    ).to.have.length(reasons.length);
    expect(md.join("\n")).to.not.contain("<script>").and.not.contain("@channel");
    expect(stalledMarkdown([])).to.deep.equal([]);
  });
});
