/**
 * The reads of clusters before apply are each GitRepo's own (issue 53): the owners of the objects a
 * new or changed deployment would create are read per (cluster, GitRepo), each read bounded by the
 * operator (PULUMI_FLEET_CLUSTER_READ_OBJECTS, PULUMI_FLEET_CLUSTER_READ_SECONDS). An attacker whose
 * bundles hold more objects than its read may ask for fails its own pairs on that cluster, naming the
 * bound; the victim's new commit on the same cluster deploys in the same `up`, and nothing throws.
 */
import { expect } from "chai";
import { kubeGet } from "../../automation/clusters/kube-client";
import { ATTACKER_NS, TeamsStack, VICTIM_NS } from "../support/teams-stack";
import { withEnv } from "../support/env";

const BUNDLES = 3;
const PER_BUNDLE = 40;
const configMaps = (bundle: string) =>
  Array.from({ length: PER_BUNDLE }, (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${bundle}-${i}\ndata:\n  i: "${i}"\n`).join("---\n");

describe("attacks on the reads before apply: one GitRepo's objects against another's update (issue 53)", function () {
  this.timeout(15 * 60_000);
  const t = new TeamsStack();
  t.register();

  it("owners' read: more objects than the GitRepo's read may ask for fail the attacker's pairs on that cluster alone; the victim deploys in the same up", async () => {
    t.commitVictim();
    t.commitAttacker(
      Object.fromEntries(
        Array.from({ length: BUNDLES }, (_, b) => [
          [`many${b}/fleet.yaml`, `defaultNamespace: ${ATTACKER_NS}\n`],
          [`many${b}/cms.yaml`, configMaps(`many${b}`)],
        ]).flat(),
      ),
      "many objects to read",
    );
    // 120 objects to read for the attacker on the shared cluster, over the bound of 100; the victim's are 2.
    const run = await withEnv({ PULUMI_FLEET_CLUSTER_READ_OBJECTS: "100", PULUMI_FLEET_CLUSTER_READ_SECONDS: "5" }, () => t.attack());
    await t.expectContained(run, {}, { gitRepoWide: /cannot tell who owns the objects .*exceed PULUMI_FLEET_CLUSTER_READ_OBJECTS=100/ });
    for (const f of run.failures) expect(f.cluster, "only the shared cluster's pairs fail").to.equal(t.dev.name);
    const victim = (await kubeGet(t.dev, `/api/v1/namespaces/${VICTIM_NS}/configmaps/victim-config`)) as { data?: Record<string, string> } | undefined;
    expect(victim?.data?.version, "the victim's new commit deployed on the shared cluster").to.equal(String(t.version));
    expect(await kubeGet(t.dev, `/api/v1/namespaces/${ATTACKER_NS}/configmaps/many0-0`), "nothing of the unread bundles applied").to.equal(undefined);
  });
});
