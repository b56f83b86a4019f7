/** The operations' pure decisions (automation/operation/plan.ts): how the state is written, and the engine's scope. */
import { expect } from "chai";
import { computesEarly, planDesired, planScope, planWrites } from "../../automation/operation/plan";

describe("an operation's plan: state writes and the engine's scope", () => {
  it("writes once at the end where a crash journal is kept (up), always for destroy and refresh, never for a read; the caller decides first", () => {
    expect(planWrites("up", "s", undefined, true)).to.deep.equal({ skipCheckpoints: true, journal: true });
    expect(planWrites("up", "s", undefined, false)).to.deep.equal({ skipCheckpoints: false, journal: false });
    expect(planWrites("destroy", "s", undefined, false)).to.deep.equal({ skipCheckpoints: true, journal: false });
    expect(planWrites("refresh", "s", undefined, true)).to.deep.equal({ skipCheckpoints: true, journal: false });
    expect(planWrites("read", "s", true, true)).to.deep.equal({ skipCheckpoints: false, journal: false });
    expect(planWrites("up", "s", false, true)).to.deep.equal({ skipCheckpoints: false, journal: false });
    const unguarded = planWrites("up", "prod", true, false);
    expect(unguarded).to.include({ skipCheckpoints: true, journal: false });
    expect(unguarded.warning).to.match(/^warning: stack prod: the state is written only at the end and this backend keeps no crash journal/);
  });

  it("excludes the resources of clusters that did not answer", () => {
    const urn = (cluster: string, name: string) => `urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:BundleDeployment::${cluster}/apps/${name}`;
    const urns = [urn("c1", "a"), urn("c2", "a"), urn("c3", "a")];
    expect(planScope({ urns, unreachable: new Map([["c2", "timeout"]]) }).excluded).to.deep.equal([urns[1]]);
    expect(planScope({ urns, unreachable: new Map() })).to.deep.equal({ excluded: [] });
  });

  it("the desired state is computed with the clusters left out added to the caller's, and early only where it can still hold when the engine runs the program", () => {
    const d = planDesired({ leftOut: new Set(["c9"]), partition: "canary" }, new Map([["c2", "timeout"]]));
    expect([...(d.leftOut ?? [])].sort()).to.deep.equal(["c2", "c9"]);
    expect(d).to.include({ partition: "canary", correctsDrift: true });
    expect(computesEarly(true, "3:x", false), "a file backend's history can tell whether it still holds").to.equal(true);
    expect(computesEarly(true, undefined, false), "another backend: computed when the engine runs the program").to.equal(false);
    expect(computesEarly(true, "3:x", true), "an up that writes history first (its refresh, a move) would not keep it").to.equal(false);
    expect(computesEarly(false, "3:x", false), "no program, no desired state").to.equal(false);
  });
});
