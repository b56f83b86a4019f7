/**
 * dependsOn between teams, on the live clusters (issue 53, core/targeting/depends-on.ts): the victim's
 * bundle waits, by a label selector, for its own bundle; the attacker adds a bundle with the same label
 * that fails on the shared dev cluster and is not deployed to production. Before, a selector matched
 * every GitRepo's bundles: the victim's bundle then waited for the attacker's and failed on both
 * clusters. Now a selector without fleet.cattle.io/repo-name is the victim's own GitRepo's: the victim
 * deploys on both clusters in the same `up`, and the preview says what Fleet would also wait for.
 */
import { expect } from "chai";
import { kubeGet } from "../../automation/clusters/kube-client";
import { CONFIGMAP } from "../support/git-fixtures";
import { ATTACKER_NS, TeamsStack, VICTIM_NS } from "../support/teams-stack";

describe("attacks between GitRepos: dependsOn (issue 53)", function () {
  this.timeout(15 * 60_000);
  const t = new TeamsStack();
  t.register();

  it("a bundle with the labels the victim's dependsOn selector names, failing, neither stalls nor fails the victim", async () => {
    t.victim.commit({
      "store/fleet.yaml": `defaultNamespace: ${VICTIM_NS}\nlabels: {tier: db}\n`,
      "store/cm.yaml": CONFIGMAP("victim-store"),
      "web/fleet.yaml": `defaultNamespace: ${VICTIM_NS}\ndependsOn:\n  - selector: {matchLabels: {tier: db}}\n`,
      "web/cm.yaml": CONFIGMAP("victim-web"),
    });
    t.commitVictim();
    t.commitAttacker(
      {
        "db/fleet.yaml": `defaultNamespace: ${ATTACKER_NS}\nlabels: {tier: db}\ndependsOn:\n  - name: nowhere\n`,
        "db/cm.yaml": CONFIGMAP("attack-db"),
      },
      "a failing bundle labelled as the victim's dependency",
    );
    const run = await t.attack();
    await t.expectContained(run, { "attacker-db": [/dependsOn nowhere, which is not deployed to this cluster/] });
    for (const c of [t.prod, t.dev])
      expect(await kubeGet(c, `/api/v1/namespaces/${VICTIM_NS}/configmaps/victim-web`), `${c.name}: the victim's dependant deployed`).to.not.equal(undefined);
    expect(run.preview?.summaryMarkdown).to.contain("Fleet would also wait for attacker/attacker-db");
  });
});
