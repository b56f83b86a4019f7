/**
 * A broken bundle fails alone, on a live cluster (issue 33): a repository of three bundles deploys; then
 * two change and the third breaks (a chart template that fails, then a fleet.yaml that cannot be read).
 * The two update in that `up`; the broken one's objects keep their UIDs, resourceVersions and content;
 * `up` exits non-zero naming it; status shows it ErrApplied with the reason; the preview lists it. Fixed
 * in git, the next `up` deploys it.
 */
import { expect } from "chai";
import { kubeGet } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { liveStack } from "../support/live-stack";

const NS = "isolation-test";
const cm = (name: string, v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  v: "${v}"\n`;
const CHART_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: chart-c\ndata:\n  v: {{ .Values.v | quote }}\n";
const FILES = {
  "a/cm.yaml": cm("a", "1"),
  "a/fleet.yaml": `defaultNamespace: ${NS}\n`,
  "b/cm.yaml": cm("b", "1"),
  "b/fleet.yaml": `defaultNamespace: ${NS}\n`,
  "c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
  "c/values.yaml": 'v: "1"\n',
  "c/templates/cm.yaml": CHART_CM,
  "c/templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret-c\nstringData:\n  k: kept\n",
  "c/fleet.yaml": `defaultNamespace: ${NS}\n`,
};

describe("a broken bundle fails alone on a live cluster: the others update, its objects stay exactly as deployed", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("isolation", { namespace: NS, paths: ["a", "b", "c"], files: FILES });
  const get = (kind: "configmaps" | "secrets", name: string) => kubeGet(s.cluster, `/api/v1/namespaces/${NS}/${kind}/${name}`);
  const identity = async () =>
    Promise.all([get("configmaps", "chart-c"), get("secrets", "secret-c")]).then((objs) =>
      objs.map((o) => [o.metadata.uid, o.metadata.resourceVersion, o.data]),
    );

  async function upFailing(): Promise<ops.BundlesFailedError> {
    try {
      await ops.up(s.options());
    } catch (err) {
      if (err instanceof ops.BundlesFailedError) return err;
      throw err;
    }
    throw new Error("up succeeded, but a bundle is broken");
  }

  it("a chart template that fails: a and b update in the same up, c keeps its objects, up fails naming it, status and preview show it", async () => {
    const first = await ops.up(s.options());
    expect(first.events.map((e) => e.bundle).sort()).to.deep.equal(["isolation-a", "isolation-b", "isolation-c"]);
    const before = await identity();

    s.write("a/cm.yaml", cm("a", "2"));
    s.write("b/cm.yaml", cm("b", "2"));
    s.write("c/values.yaml", 'v: "2"\n');
    s.write("c/templates/cm.yaml", '{{ fail "c is broken on purpose" }}\n' + CHART_CM);
    const failed = await upFailing();
    expect(failed.message).to.match(
      /deployed everything else, but 1 bundle deployment\(s\) failed, each alone:\n {2}.*gitRepo isolation, bundle isolation-c, cluster live-1: .*\(kept as last deployed: 2 object\(s\), deploymentID …/,
    );
    expect(failed.message).to.contain("c is broken on purpose");
    expect(failed.events.map((e) => `${e.event} ${e.bundle}`).sort()).to.deep.equal(["deployed isolation-a", "deployed isolation-b"]);
    expect((await get("configmaps", "a")).data).to.deep.equal({ v: "2" });
    expect((await get("configmaps", "b")).data).to.deep.equal({ v: "2" });
    expect(await identity()).to.deep.equal(before);

    const status = await ops.status(s.options());
    const c = status.deployments.find((d) => d.bundle === "isolation-c")!;
    expect(c).to.include({ cluster: "live-1", state: "ErrApplied" });
    expect(c.message).to.match(/c is broken on purpose.*\(keeps what it last deployed\)$/);
    expect(status.deployments.filter((d) => d.bundle !== "isolation-c").map((d) => d.state)).to.deep.equal(["Ready", "Ready"]);

    // The held deployment changes nothing: the preview expects no changes, and still reports the failure.
    const preview = await ops.preview(s.options({ expectNoChanges: true }));
    expect(preview.failures.map((f) => `${f.cluster}/${f.bundle}`)).to.deep.equal(["live-1/isolation-c"]);
    expect(preview.summaryMarkdown).to.contain("### Failed bundle deployments").and.contain("| `live-1` | `isolation-c` | `isolation` | 2 object(s) at");
    expect(preview.prunes).to.deep.equal([]);
    expect(await identity()).to.deep.equal(before);
  });

  it("a fleet.yaml that cannot be read: still kept, nothing else changes; fixed in git, the next up deploys it", async () => {
    const before = await identity();
    s.write("c/fleet.yaml", `defaultNamespace: ${NS}\nhelm: [not, closed\n`);
    const failed = await upFailing();
    expect(failed.message).to.match(/gitRepo isolation, bundle isolation-c, cluster live-1: .*\(kept as last deployed: 2 object\(s\)/);
    expect(failed.message).to.contain("c/fleet.yaml");
    expect(failed.events).to.deep.equal([]);
    expect(await identity()).to.deep.equal(before);

    s.write("c/fleet.yaml", `defaultNamespace: ${NS}\n`);
    s.write("c/templates/cm.yaml", CHART_CM);
    const fixed = await ops.up(s.options());
    expect(fixed.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed isolation-c"]);
    const cmAfter = await get("configmaps", "chart-c");
    expect(cmAfter.data).to.deep.equal({ v: "2" });
    expect(cmAfter.metadata.uid).to.equal(before[0][0]);
    expect((await ops.status(s.options())).deployments.map((d) => d.state)).to.deep.equal(["Ready", "Ready", "Ready"]);
  });
});
