import { expect } from "chai";
import { holdMessage, rolloutHold, rolloutHoldMessages } from "../../core/targeting/rollout-hold";
import { Rollout } from "../../core/targeting/rollout";

const rollout: Rollout & { gitRepo: string; bundle: string } = {
  gitRepo: "t",
  bundle: "app",
  partitions: [],
  unpartitioned: [],
  waves: [
    { partition: "canary", clusters: ["c1"], afterPrevious: false },
    { partition: "canary", clusters: ["c2"], afterPrevious: false },
    { partition: "rest", clusters: ["c3", "c4"], afterPrevious: true },
    { partition: "last", clusters: ["c5"], afterPrevious: true },
  ],
};

describe("a rollout's hold has one home and one phrasing (core/targeting/rollout-hold.ts)", () => {
  it("stops at the first wave with a stopping cluster; the waves from the next that waits on are held", () => {
    expect(rolloutHold(rollout, (c) => c === "c2" || c === "c4")).to.deep.equal({
      bundle: "app",
      partition: "canary",
      notReady: ["c2"],
      held: ["c3", "c4", "c5"],
    });
    expect(rolloutHold(rollout, (c) => c === "c4")).to.deep.equal({ bundle: "app", partition: "rest", notReady: ["c4"], held: ["c5"] });
    expect(rolloutHold(rollout, (c) => c === "c5")).to.deep.equal({ bundle: "app", partition: "last", notReady: ["c5"], held: [] });
    expect(rolloutHold(rollout, () => false)).to.equal(undefined);
  });

  it("says where it paused, what is not ready and who keeps what they had", () => {
    expect(holdMessage(rolloutHold(rollout, (c) => c === "c1")!)).to.equal(
      "rollout paused at partition canary of bundle app: not ready on c1; c3, c4, c5 keep what they had until it is (rolloutStrategy; the next `up` goes on from there)",
    );
    expect(holdMessage(rolloutHold(rollout, (c) => c === "c5")!)).to.equal("rollout paused at partition last of bundle app: not ready on c5");
  });

  it("a failed up's message names each held rollout once, from the clusters that stopped it", () => {
    const other = { ...rollout, bundle: "other" };
    expect(rolloutHoldMessages([rollout, other], (b) => (b.bundle === "app" ? ["c4"] : []))).to.deep.equal([
      "rollout paused at partition rest of bundle app: not ready on c4; c5 keep what they had until it is (rolloutStrategy; the next `up` goes on from there)",
    ]);
  });
});
