import { expect } from "chai";
import { FleetState } from "../../core/plan/pipeline";
import { DeploymentRecord } from "../../core/desired/records";
import { FailedDeployments } from "../../core/plan/failures";
import { departureOf, departures, departureText, UNRECORDED_DEPARTURE } from "../../core/desired/departures";
import { computeStatus, formatStatusTable } from "../../automation/reports/status";
import { mergeStatus } from "../../automation/shards/reports";
import { groupSteps } from "../../automation/engine/steps";
import { reportFacts } from "../../core/desired/report-facts";

const rec = (cluster: string, bundle: string, target = "prod", gitRepo = "apps"): DeploymentRecord =>
  ({ gitRepo, bundle, cluster, target, deploymentId: "s-1:a", commit: "abc" }) as DeploymentRecord;

/** A plan of GitRepo `apps` (targets prod, canary) with bundle `web` on c1, `api` read but skipped on c2 by doNotDeploy. */
function stateOf(over: { shardElsewhere?: string[] } = {}): FleetState {
  const failures = new FailedDeployments();
  failures.fail({ gitRepo: "apps", bundle: "broken", cluster: "c1" }, new Error("boom"));
  return {
    config: {
      clusters: [{ name: "c1" }, { name: "c2" }],
      gitRepos: [{ name: "apps", targets: [{ name: "prod" }, { name: "canary" }] }],
      ...(over.shardElsewhere ? { shard: { elsewhere: over.shardElsewhere } } : {}),
    },
    bundles: [
      { gitRepo: "apps", name: "web" },
      { gitRepo: "apps", name: "api" },
      { gitRepo: "apps", name: "broken" },
    ],
    sources: new Map([["apps", { commit: "0123456789abcdef" }]]),
    plan: { entries: [{ gitRepo: "apps", bundle: "web", cluster: "c1" }], skipped: [{ gitRepo: "apps", bundle: "api", cluster: "c2", target: "canary" }] },
    failures,
  } as unknown as FleetState;
}

describe("why a pair left (core/desired/departures.ts): decided once, printed by the preview, the PR summary and status", () => {
  it("one code per cause, each with its one phrasing", () => {
    const s = stateOf({ shardElsewhere: ["c9"] });
    const cases: [DeploymentRecord, string, string][] = [
      [rec("c9", "web"), "movedToShard", "cluster `c9` moved to another shard of the environment"],
      [rec("gone", "web"), "clusterRemoved", "cluster `gone` was removed from the stack"],
      [rec("c1", "web", "prod", "old"), "gitRepoRemoved", "GitRepo `old` was removed from the stack"],
      [rec("c1", "deleted"), "bundleGone", "bundle `deleted` is no longer in GitRepo `apps` at 0123456789ab"],
      [rec("c2", "api"), "doNotDeploy", "target `canary` sets doNotDeploy for cluster `c2`"],
      [rec("c2", "web", "edge"), "targetRemoved", "target `edge` was removed from GitRepo `apps`"],
      [rec("c2", "web", "prod"), "noLongerMatching", "target `prod` no longer matches cluster `c2`"],
      [rec("c2", "web", ""), "noTargetMatches", "no target of GitRepo `apps` matches cluster `c2` any more"],
    ];
    for (const [r, code, text] of cases) {
      const d = departureOf(r, s);
      expect(d.code, text).to.equal(code);
      expect(departureText(d)).to.equal(text);
    }
    expect(departureText(undefined)).to.equal(UNRECORDED_DEPARTURE);
  });

  it("every recorded pair neither planned nor kept by a failure has left, sorted by key", () => {
    const records = {
      "c1/apps/web": rec("c1", "web"),
      "c1/apps/broken": rec("c1", "broken"),
      "c2/apps/web": rec("c2", "web"),
      "c2/apps/api": rec("c2", "api"),
    };
    const left = departures(records, stateOf());
    expect([...left].map(([k, d]) => `${k} ${d.code}`)).to.deep.equal(["c2/apps/api doNotDeploy", "c2/apps/web noLongerMatching"]);
  });

  it("status lists the pairs that leave with why; the environment's status leaves out those moved to another shard", () => {
    const applied = { "c1/apps/web": rec("c1", "web"), "c2/apps/web": rec("c2", "web"), "c9/apps/web": rec("c9", "web") };
    const state = stateOf({ shardElsewhere: ["c9"] });
    const r = computeStatus("s", state, applied, reportFacts(state, applied), groupSteps([]));
    expect(r.leaving).to.deep.equal([
      { gitRepo: "apps", bundle: "web", cluster: "c2", code: "noLongerMatching", reason: "target prod no longer matches cluster c2" },
      { gitRepo: "apps", bundle: "web", cluster: "c9", code: "movedToShard", reason: "cluster c9 moved to another shard of the environment" },
    ]);
    expect(formatStatusTable(r)).to.match(/LEAVING\s+BUNDLE\s+CLUSTER\s+WHY\napps\s+web\s+c2\s+target prod no longer matches cluster c2\n/);
    expect(mergeStatus("env", [r]).leaving?.map((l) => l.cluster)).to.deep.equal(["c2"]);
    const one = { "c1/apps/web": rec("c1", "web") };
    expect(computeStatus("s", stateOf(), one, reportFacts(stateOf(), one), groupSteps([])).leaving, "nothing leaves: no field").to.equal(undefined);
  });
});
