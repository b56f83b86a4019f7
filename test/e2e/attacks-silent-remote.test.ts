/**
 * The attack suite between GitRepos (issue 53): a team points its GitRepo at a remote that accepts the
 * connection and never answers. Its GitRepo alone fails, within the low-speed time
 * (PULUMI_FLEET_GIT_LOW_SPEED_SECONDS), not the overall git timeout; the victim's commit deploys in the
 * same `up`; nothing of the attacker's is pruned (its GitRepo was not read: its deployments are held).
 */
import { expect } from "chai";
import { kubeGet } from "../../automation/clusters/kube-client";
import { ATTACKER_NS, TeamsStack } from "../support/teams-stack";
import { withEnv } from "../support/env";
import { silentRemote } from "../support/silent-remote";

const LOW_SPEED_SECONDS = 5;

describe("attacks between GitRepos: a silent remote, on live clusters (issue 53)", function () {
  this.timeout(15 * 60_000);
  const figures: string[] = [];
  after(() => console.log(`      ${figures.join("\n      ")}`));
  const t = new TeamsStack();
  t.register();

  it("baseline for the figures: the same up with no silent remote", async () => {
    t.commitVictim();
    const run = await t.attack();
    figures.push(`no silent remote: up took ${(run.ms / 1000).toFixed(1)} s`);
    await t.expectContained(run, {});
  });

  for (const scheme of ["http", "git"]) {
    it(`${scheme}://: the attacker's GitRepo fails alone within the low-speed time; the victim's commit deploys in the same up; nothing of the attacker pruned`, async () => {
      const remote = await silentRemote();
      try {
        const deployedRound = String(t.round);
        t.commitVictim();
        const run = await withEnv({ PULUMI_FLEET_GIT_LOW_SPEED_SECONDS: String(LOW_SPEED_SECONDS) }, () =>
          t.attack({ attacker: { repo: `${scheme}://127.0.0.1:${remote.port}/team.git` } }),
        );
        figures.push(`${scheme}:// silent remote: up took ${(run.ms / 1000).toFixed(1)} s (low-speed time ${LOW_SPEED_SECONDS} s, overall git timeout 600 s)`);
        const reason =
          scheme === "http"
            ? /Operation too slow.*PULUMI_FLEET_GIT_LOW_SPEED_SECONDS/
            : /the remote sent nothing for 5 s \(PULUMI_FLEET_GIT_LOW_SPEED_SECONDS\)/;
        // The victim at its latest commit (same UIDs), the attacker's failures its GitRepo's alone.
        await t.expectContained(run, {}, { gitRepoWide: reason });
        expect(
          (await kubeGet(t.dev, `/api/v1/namespaces/${ATTACKER_NS}/configmaps/attacker-config`))?.data,
          "the attacker's deployed bundle, held (not pruned)",
        ).to.deep.equal({ round: deployedRound });
        // Bounded by the low-speed time, not the 600-s timeout (a wide margin: the up itself takes tens of seconds).
        expect(run.ms).to.be.below(180_000);
        expect(remote.open(), "connections left open").to.equal(0);
      } finally {
        await remote.close();
      }
    });
  }
});
