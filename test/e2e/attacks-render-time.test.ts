/**
 * Render time between GitRepos (issue 53, point 4), on the live clusters (test/support/teams-stack.ts):
 * the attacker's looping bundles, on both clusters, cost its GitRepo its render budget once
 * (PULUMI_FLEET_GITREPO_RENDER_SECONDS, at its default), never a job limit per bundle and cluster one
 * after the other; the victim's push deploys in the same `up`. The time the attacker added is the `up`
 * with the loops less the same `up` without them, printed after the run.
 */
import { expect } from "chai";
import { NESTED_FOREVER } from "../support/attack-content";
import { CONFIGMAP } from "../support/git-fixtures";
import { ATTACKER_NS, TeamsStack } from "../support/teams-stack";
import { DEFAULT_SANDBOX_LIMITS } from "../../core/renderer/sandbox";

const LOOPS = 6;
const loopBundle = (dir: string) => ({
  [`${dir}/fleet.yaml`]: `defaultNamespace: ${ATTACKER_NS}\nhelm:\n  chart: ./chart\n`,
  [`${dir}/chart/Chart.yaml`]: `apiVersion: v2\nname: ${dir}\nversion: 0.1.0\n`,
  [`${dir}/chart/templates/t.yaml`]: CONFIGMAP("attack-loop", { x: NESTED_FOREVER }),
});

describe("attacks between GitRepos: render time (issue 53)", function () {
  this.timeout(15 * 60_000);
  const figures: string[] = [];
  after(() => console.log(`      ${figures.join("\n      ")}`));
  const t = new TeamsStack();
  t.register();

  it(`time: ${LOOPS} looping bundles on both clusters cost the attacker one render budget; the victim deploys in the same up`, async () => {
    // The attacker on both clusters, as the stack's own account there (its `restricted` exists on dev only).
    const everywhere = { attacker: { targets: [{ name: "all", clusterSelector: {} }], serviceAccount: undefined }, noPreview: true };
    t.commitVictim();
    t.commitAttacker({}, "calm");
    const calm = await t.attack(everywhere);
    expect(calm.failures, calm.upMessage).to.deep.equal([]);
    t.commitVictim();
    const loops = Array.from({ length: LOOPS }, (_, i) => `loop${i}`);
    t.commitAttacker(Object.assign({}, ...loops.map(loopBundle)), `loop forever, ${LOOPS} bundles x 2 clusters`);
    const run = await t.attack(everywhere);
    const added = (run.ms - calm.ms) / 1000;
    const budget = DEFAULT_SANDBOX_LIMITS.gitRepoSeconds;
    figures.push(
      `up with ${LOOPS} looping bundles on 2 clusters (${LOOPS * 2} jobs): ${(run.ms / 1000).toFixed(1)} s, without them ${(calm.ms / 1000).toFixed(1)} s: ` +
        `the attacker added ${added.toFixed(1)} s (budget ${budget} s; one job limit after the other: ${LOOPS * 2} x ${DEFAULT_SANDBOX_LIMITS.jobSeconds} s)`,
    );
    const failed = [...new Set(run.failures.map((f) => `${f.gitRepo}/${f.bundle}`))].sort();
    expect(failed, run.upMessage).to.deep.equal(loops.map((b) => `attacker/attacker-${b}`).sort());
    expect(run.failures.length, "each loop on each cluster").to.equal(LOOPS * 2);
    for (const f of run.failures) expect(f.message).to.include(`longer than the limit of ${budget} s per GitRepo (PULUMI_FLEET_GITREPO_RENDER_SECONDS)`);
    await t.expectVictimIntact(); // the victim's push landed, on both clusters, in this up
    // One budget and slack for the loaded machine; one job limit after another would be minutes.
    expect(added, "the time the attacker added").to.be.lessThan(budget + 15);
  });
});
