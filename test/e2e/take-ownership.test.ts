/**
 * helm.takeOwnership on a live cluster. A ConfigMap someone created by hand has the same name as one of
 * a bundle's objects: Fleet's Helm refuses to install over it, and so must `preview` and `up` here
 * (before, the provider's server-side apply adopted it silently and a later prune deleted it). With
 * `helm.takeOwnership: true` the bundle adopts it, as in Fleet, here only where the stack's
 * `allowTakeOwnership` lets the GitRepo's content adopt (core/desired/reach.ts).
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { CONFIGMAP } from "../support/git-fixtures";
import { failureOf, liveStack } from "../support/live-stack";

const NS = "take-ownership-test";
const cmPath = (name: string) => `/api/v1/namespaces/${NS}/configmaps/${name}`;
const fleetYaml = (takeOwnership: boolean) => `defaultNamespace: ${NS}\n${takeOwnership ? "helm: {takeOwnership: true}\n" : ""}`;

describe("helm.takeOwnership on a live cluster (an object the bundle does not own)", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("own", {
    namespace: NS,
    paths: ["app"],
    gitRepo: { allowTakeOwnership: true },
    files: { "app/handmade.yaml": CONFIGMAP("handmade", { from: "git" }), "app/fresh.yaml": CONFIGMAP("fresh"), "app/fleet.yaml": fleetYaml(false) },
    // Someone's own ConfigMap, created by hand (no ownership labels).
    setup: async ({ cluster }) => {
      if (!(await kubeGet(cluster, `/api/v1/namespaces/${NS}`))) {
        await kubeRequest(cluster, "POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } });
      }
      await kubeRequest(cluster, "POST", `/api/v1/namespaces/${NS}/configmaps`, {
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "handmade" }, data: { from: "hand" } },
      });
    },
  });

  it("preview and up refuse to take it over, naming object, owner, bundle, cluster and field; nothing is applied", async () => {
    // The bundle fails alone: the preview reports it (the CLI then exits non-zero), up fails naming it.
    const previewed = async () => (await ops.preview(s.options())).failures.map((f) => f.message).join("\n");
    for (const run of [previewed, () => ops.up(s.options())]) {
      const message = run === previewed ? await previewed() : await failureOf(run);
      expect(message, run.name)
        .to.contain("ConfigMap take-ownership-test/handmade (it was written by")
        .and.contain("bundle own-app")
        .and.contain(`cluster ${s.cluster.name}`)
        .and.contain("helm.takeOwnership");
    }
    const handmade = await kubeGet(s.cluster, cmPath("handmade"));
    expect(handmade.data).to.deep.equal({ from: "hand" });
    expect(handmade.metadata.labels ?? {}).to.not.have.property("fleet.cattle.io/bundle-name");
    expect(await kubeGet(s.cluster, cmPath("fresh")), "nothing of the bundle is half-applied").to.equal(undefined);
  });

  it("with helm.takeOwnership: true the bundle adopts it, and it is the bundle's own from then on", async () => {
    s.write("app/fleet.yaml", fleetYaml(true));
    const adopted = await ops.up(s.options());
    expect(adopted.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed own-app"]);
    const handmade = await kubeGet(s.cluster, cmPath("handmade"));
    expect(handmade.data).to.deep.equal({ from: "git" });
    expect(handmade.metadata.labels["fleet.cattle.io/bundle-name"]).to.equal("own-app");
    expect(await kubeGet(s.cluster, cmPath("fresh"))).to.not.equal(undefined);

    // Back to the default: the deployment changed (its options did), its objects are read again and are its own now.
    s.write("app/fleet.yaml", fleetYaml(false));
    await ops.up(s.options());
    expect((await kubeGet(s.cluster, cmPath("handmade"))).data).to.deep.equal({ from: "git" });
  });
});
