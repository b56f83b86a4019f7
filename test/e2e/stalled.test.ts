/**
 * Stalled (issue 56 item 2) through the project's own operations on the three live clusters: a pair one
 * cluster's API server refuses fails `stalledAfter` (here 2) `up`s in a row with the same inputs; the next
 * `up` does not apply it (its BundleDeployment is registered as the state holds it, paused: the provider
 * touches no cluster, and from the second such `up` on the engine has no step for it at all), still exits
 * non-zero naming it Stalled, and `status` says so. Healing the cluster alone does not make an `up` try it
 * again (its inputs are the same); `up --retry` does, and it deploys.
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

const NS = "stalled-pairs";
const POLICY = "refuse-labelled-deny-stalled";
const BUNDLES = ["b0", "b1"];

describe("a pair refused N times in a row with the same inputs is Stalled: not applied until --retry", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-stalled-");
  const repoDir = path.join(work, "repo");
  let clusters: LocalCluster[];
  let config: StackConfig;
  const write = (version: number, denied?: string) => writeConfigMapBundles(repoDir, BUNDLES, NS, () => version, denied);
  const options = (retry?: true): ops.OperationOptions => ({
    stack: "stalled",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache"), ...(retry ? { retry } : {}) },
    env: { PULUMI_CONFIG_PASSPHRASE: "stalled" },
  });
  const version = async (c: LocalCluster, b: string) =>
    (await kubeGet<{ data: { version: string } }>(c, `/api/v1/namespaces/${NS}/configmaps/${b}`))?.data.version;
  const failingUp = async (retry?: true) => {
    const err = await ops.up(options(retry)).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err, "the up fails: the fleet is not converged").to.be.instanceOf(ops.BundlesFailedError);
    return err as ops.BundlesFailedError;
  };
  /** The engine's steps for the pair's BundleDeployment in that up (none recorded: undefined). */
  const stepsOf = (err: ops.BundlesFailedError, key: string) => (err.groups.deployments.get(key)?.steps ?? []).map((s) => s.op).filter((op) => op !== "same");

  before(async function () {
    toolchain();
    clusters = liveClusters().clusters;
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    write(1);
    config = { ...liveStackConfig("stalled", clusters, { dir: repoDir, paths: BUNDLES }, { agent: { enabled: false } }), stalledAfter: 2 };
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

  it("refused twice, then Stalled: not applied, still failing and named, status says so; healing the cluster is not enough, --retry deploys it", async () => {
    await ops.up(options());
    const second = clusters[1];
    const key = `${second.name}/stalled/stalled-b0`;
    await refuseLabelledConfigMaps(second, POLICY, "ConfigMaps labelled deny are refused here", NS);
    write(2, "b0");

    // Two failures in a row with the same inputs: each applied, each refused by the server.
    for (const n of [1, 2]) {
      const err = await failingUp();
      expect(err.message, `failure ${n}`).to.include("ConfigMaps labelled deny are refused here").and.not.include("Stalled");
      expect(stepsOf(err, key), `failure ${n}: applied`).to.deep.equal(["update"]);
    }

    // Stalled: registered as the state holds it, paused (one update of the spec's paused flag, no apply), and named.
    const third = await failingUp();
    expect(third.message).to.include(`gitRepo stalled, bundle stalled-b0, cluster ${second.name}: Stalled after 2 failures with the same inputs`);
    expect(third.failures.map((f) => `${f.cluster}/${f.bundle} ${f.stalled?.failures}`)).to.deep.equal([`${second.name}/stalled-b0 2`]);
    expect(third.groups.deployments.get(key)?.report?.applied ?? false, "the provider applied nothing").to.equal(false);
    expect(await version(second, "b0"), "it keeps what it had").to.equal("1");
    for (const c of clusters) expect(await version(c, "b1"), `every other pair deployed (${c.name})`).to.equal("2");

    const fourth = await failingUp();
    expect(stepsOf(fourth, key), "the next up has no step for it").to.deep.equal([]);
    expect(fourth.message, "the same words: nothing new to notify").to.equal(third.message);

    const status = await ops.status(options());
    const d = status.deployments.find((x) => x.cluster === second.name && x.bundle === "stalled-b0")!;
    expect(d.state).to.equal("ErrApplied");
    expect(d.message).to.match(/^Stalled after 2 failures with the same inputs/);
    expect(d.stalled?.failures).to.equal(2);
    expect(d.stalled?.reason).to.include("ConfigMaps labelled deny are refused here");

    // The cluster heals, but the pair's inputs are the same: still Stalled until --retry.
    await liftPolicy(second, POLICY, NS);
    const healed = await failingUp();
    expect(healed.message).to.include("Stalled after 2 failures");
    expect(await version(second, "b0")).to.equal("1");

    const retried = await ops.up(options(true));
    expect(retried.events.map((e) => `${e.event} ${e.cluster}/${e.bundle}`)).to.deep.equal([`deployed ${second.name}/stalled-b0`]);
    expect(await version(second, "b0")).to.equal("2");
    const noop = await ops.up(options());
    expect(noop.events).to.deep.equal([]);
  });
});
