/**
 * fleet.yaml forceSyncGeneration on a live cluster: a new number re-applies every object of that bundle
 * (each gets a new resourceVersion, and a hand-edited field the bundle declares is put back) and touches
 * nothing of other bundles; the next up with the same number writes nothing.
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { CONFIGMAP } from "../support/git-fixtures";
import { liveStack } from "../support/live-stack";

const NS = "force-sync-test";
const cmPath = (name: string) => `/api/v1/namespaces/${NS}/configmaps/${name}`;
const NAMES = ["a-one", "a-two", "b-one"];

describe("forceSyncGeneration on a live cluster", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("fsg", {
    namespace: NS,
    paths: ["a", "b"],
    files: {
      "a/fleet.yaml": `defaultNamespace: ${NS}\n`,
      "a/one.yaml": CONFIGMAP("a-one", { setting: "from-git" }),
      "a/two.yaml": CONFIGMAP("a-two"),
      "b/fleet.yaml": `defaultNamespace: ${NS}\n`,
      "b/one.yaml": CONFIGMAP("b-one"),
    },
  });
  const versions = async () =>
    Object.fromEntries(await Promise.all(NAMES.map(async (n) => [n, (await kubeGet(s.cluster, cmPath(n))).metadata.resourceVersion])));

  it("a new number re-applies every object of the bundle, puts back a hand edit, and leaves other bundles alone", async () => {
    await ops.up(s.options());
    await kubeRequest(s.cluster, "PATCH", cmPath("a-one"), { body: { data: { setting: "by-hand" } } });
    const before = await versions();

    s.write("a/fleet.yaml", `defaultNamespace: ${NS}\nforceSyncGeneration: 1\n`);
    const synced = await ops.up(s.options());
    expect(synced.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed fsg-a"]);
    const after = await versions();
    expect(after["a-one"], "a-one re-applied").to.not.equal(before["a-one"]);
    expect(after["a-two"], "a-two re-applied").to.not.equal(before["a-two"]);
    expect(after["b-one"], "b-one untouched").to.equal(before["b-one"]);
    const one = await kubeGet(s.cluster, cmPath("a-one"));
    expect(one.data).to.deep.equal({ setting: "from-git" });
    expect(one.metadata.annotations["pulumi-fleet/force-sync-generation"]).to.equal("1");

    await ops.up(s.options());
    expect(await versions(), "the same number again writes nothing").to.deep.equal(after);
  });
});
