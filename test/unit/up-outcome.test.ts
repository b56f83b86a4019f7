/** An up's outcome, decided once from the plan and the outputs (automation/operation/up-outcome.ts): what every report of the update reads. */
import { expect } from "chai";
import { OutputMap } from "@pulumi/pulumi/automation";
import { upOutcome } from "../../automation/operation/up-outcome";
import { DEPLOYMENT_STATES_OUTPUT, DEPLOYMENTS_OUTPUT } from "../../core/desired/previous";
import { DeploymentFailure } from "../../core/plan/failures";
import { FleetState } from "../../core/plan/pipeline";
import { GroupedSteps } from "../../automation/engine/steps";
import { record } from "../support/records";

const outputs = (states: Record<string, string>): OutputMap => ({
  [DEPLOYMENTS_OUTPUT]: {
    value: Object.fromEntries(Object.keys(states).map((k) => [k, record(k.split("/")[0], k.split("/")[2], { gitRepo: "team" })])),
    secret: false,
  },
  [DEPLOYMENT_STATES_OUTPUT]: {
    value: Object.fromEntries(
      Object.entries(states).map(([k, state]) => [
        k,
        { state, messages: state === "Ready" ? [] : ["Deployment default/web: not available"], appliedDeploymentId: "" },
      ]),
    ),
    secret: false,
  },
});
const plan = (failures: DeploymentFailure[]) =>
  ({ failures: { list: () => failures }, plan: { entries: [] }, sources: new Map([["team", { gitRepo: "team", commit: "c0ffee" }]]) }) as unknown as FleetState;
const groups = { deployments: new Map(), agents: new Map(), failedClusters: [] } as unknown as GroupedSteps;
const broken: DeploymentFailure = {
  gitRepo: "team",
  bundle: "team-broken",
  cluster: "c2",
  reason: "fleet.yaml: bad",
  message: "gitRepo team, bundle team-broken, cluster c2: fleet.yaml: bad",
};
const held: DeploymentFailure = { ...broken, bundle: "team-later", reason: "held: outside its window", message: "held", held: "schedule" };

describe("an up's outcome (automation/operation/up-outcome.ts)", () => {
  it("all Ready: no failure, the commits deployed, nothing held", () => {
    const o = upOutcome({ plan: plan([]), groups, before: {}, outputsBefore: {}, outputs: outputs({ "c1/team/team-app": "Ready" }), stack: "dev" });
    expect(o.failure).to.equal(undefined);
    expect(o.failed).to.deep.equal([]);
    expect(o.commits).to.deep.equal({ team: "c0ffee" });
  });

  it("a broken bundle and an unready pair each fail alone; a held one is held, not failed; the error and the record name each", () => {
    const o = upOutcome({
      plan: plan([broken, held]),
      groups,
      before: {},
      outputsBefore: {},
      outputs: outputs({ "c1/team/team-app": "Ready", "c1/team/team-web": "NotReady" }),
      stack: "dev",
    });
    expect(o.failed.map((f) => `${f.cluster}/${f.bundle}`)).to.deep.equal(["c2/team-broken", "c1/team-web"]);
    expect(o.planFailed).to.deep.equal([broken]);
    expect(o.held).to.deep.equal([held]);
    expect(o.failure?.record).to.include("team-web").and.include("team-broken");
    expect(o.failure?.text).to.match(/^up of stack dev deployed everything else, but /);
    expect(o.failure?.text).to.include("held");
  });

  it("a pair the plan already failed is named once, not again for its state", () => {
    const again = { ...broken, cluster: "c1", bundle: "team-web" };
    const o = upOutcome({ plan: plan([again]), groups, before: {}, outputsBefore: {}, outputs: outputs({ "c1/team/team-web": "NotReady" }), stack: "dev" });
    expect(o.failed).to.deep.equal([again]);
  });
});
