/**
 * Issue 40's case through the project's own operations, on the three live clusters: one GitRepo of six
 * bundles (one ConfigMap each) on every cluster; then a ValidatingAdmissionPolicy on the second cluster
 * refuses ConfigMaps labelled `deny`, and one commit changes all six bundles, the first adding that
 * label. Fleet updates 17 of the 18 (bundle, cluster) pairs and marks one ErrApplied; so does `up`: it
 * exits non-zero naming the refused object with the server's words, `status` shows it from any machine
 * (the pair's state is in the stack), and once the policy is gone the next `up` updates that pair alone.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { tempDir } from "../support/git-fixtures";
import { liftPolicy, refuseLabelledConfigMaps, writeConfigMapBundles } from "../support/admission";
import { liveStackConfig } from "../support/live-stack";
import { liveClusters } from "../support/live-clusters";

const NS = "refused-apply";
const POLICY = "refuse-labelled-deny";
const BUNDLES = ["b0", "b1", "b2", "b3", "b4", "b5"];

describe("an object one cluster refuses fails that (bundle, cluster) pair alone: 17 of 18 update in the same up", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-refused-");
  const repoDir = path.join(work, "repo");
  let clusters: LocalCluster[];
  let config: StackConfig;
  const write = (version: number, denied?: string) => writeConfigMapBundles(repoDir, BUNDLES, NS, () => version, denied);
  const options = (): ops.OperationOptions => ({
    stack: "refused",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "refused" },
  });
  const versions = async () =>
    Object.fromEntries(
      await Promise.all(
        clusters.flatMap((c) =>
          BUNDLES.map(async (b) => [
            `${c.name}/refused-${b}`,
            (await kubeGet<{ data: { version: string } }>(c, `/api/v1/namespaces/${NS}/configmaps/${b}`))?.data.version,
          ]),
        ),
      ),
    );
  before(async function () {
    toolchain();
    clusters = liveClusters().clusters;
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    write(1);
    config = liveStackConfig("refused", clusters, { dir: repoDir, paths: BUNDLES }, { agent: { enabled: false } });
  });

  after(async function () {
    await liftPolicy(clusters[1], POLICY);
    await ops.destroy(options());
    for (const c of clusters)
      try {
        await kubeRequest(c, "DELETE", `/api/v1/namespaces/${NS}`);
      } catch {
        /* gone */
      }
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("deploys, then a refused change: 17 pairs updated, the refused one named and kept, status shows it; without the policy the next up updates it alone", async () => {
    const first = await ops.up(options());
    expect(first.events).to.have.length(18);

    const second = clusters[1];
    await refuseLabelledConfigMaps(second, POLICY, "ConfigMaps labelled deny are refused here", NS);

    write(2, "b0");
    const started = Date.now();
    const failed = await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    expect(failed).to.be.instanceOf(ops.BundlesFailedError);
    const refused = `${second.name}/refused-b0`;
    expect(failed!.message)
      .to.include(`gitRepo refused, bundle refused-b0, cluster ${second.name}: ErrApplied: `)
      .and.to.include("ConfigMap/refused-apply/b0")
      .and.to.include("ConfigMaps labelled deny are refused here");
    const v = await versions();
    expect(Object.entries(v).filter(([k, x]) => k !== refused && x === "2")).to.have.length(17);
    expect(v[refused], "the refused pair keeps what it had").to.equal("1");
    expect((failed as ops.BundlesFailedError).events.filter((e) => e.event === "deployed")).to.have.length(17);
    console.log(`      (17 of 18 pairs updated, one refused, by \`up\` in ${seconds} s)`);

    const status = await ops.status(options());
    const d = status.deployments.find((x) => x.cluster === second.name && x.bundle === "refused-b0")!;
    expect(d.state).to.equal("ErrApplied");
    expect(d.message).to.include("ConfigMaps labelled deny are refused here");

    await liftPolicy(second, POLICY, NS);
    const retried = await ops.up(options());
    expect(retried.events.map((e) => `${e.event} ${e.cluster}/${e.bundle}`)).to.deep.equal([`deployed ${refused}`]);
    expect((await versions())[refused]).to.equal("2");
    const noop = await ops.up(options());
    expect(noop.events).to.deep.equal([]);
  });
});
