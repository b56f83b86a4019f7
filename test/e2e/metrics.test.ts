/**
 * The operations' Prometheus metrics (automation/metrics/) after real operations on the three live
 * clusters, read back by Prometheus's own text parser (tools/metrics-check, expfmt): the textfile
 * node_exporter's collector would read, and each body pushed to an HTTP receiver on loopback standing
 * in for the Pushgateway (method, group path, content type checked). Two bundles on every cluster; then
 * a ValidatingAdmissionPolicy on the second cluster refuses one bundle's new ConfigMap: that pair is
 * ErrApplied, the others Ready, the failed up's outcome 0; the unchanged bundle keeps its deployment
 * time, the changed one gets a new one. deployedAt is a stack output, no BundleDeployment input: a
 * no-op up changes no resource.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as http from "node:http";
import { AddressInfo } from "node:net";
import * as path from "node:path";
import { kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { runFileName, stateFileName } from "../../automation/metrics/report";
import { STATES } from "../../automation/metrics/exposition";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { tempDir } from "../support/git-fixtures";
import { liftPolicy, refuseLabelledConfigMaps, writeConfigMapBundles } from "../support/admission";
import { liveStackConfig } from "../support/live-stack";
import { liveClusters } from "../support/live-clusters";
import { ParsedFamily, parseExposition, sampleValue } from "../support/metrics-parser";

const NS = "metrics-e2e";
const POLICY = "metrics-refuse-deny";
const BUNDLES = ["m0", "m1"];
const STACK = "metrics";

interface Pushed {
  method: string;
  url: string;
  contentType?: string;
  body: string;
}

describe("metrics after real operations on live clusters, read by Prometheus's text parser", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-metrics-");
  const repoDir = path.join(work, "repo");
  const textfiles = path.join(work, "textfile");
  const pushed: Pushed[] = [];
  let server: http.Server;
  let clusters: LocalCluster[];
  let config: StackConfig;
  const write = (versions: Record<string, number>, denied?: string) => writeConfigMapBundles(repoDir, BUNDLES, NS, (b) => versions[b], denied);
  const options = (): ops.OperationOptions => ({
    stack: STACK,
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "metrics" },
  });
  const read = (name: string): ParsedFamily[] => parseExposition(fs.readFileSync(path.join(textfiles, name), "utf8"));
  const state = () => read(stateFileName(STACK));
  const pairLabels = (cluster: string, bundle: string) => ({ stack: STACK, git_repo: "metrics", bundle: `metrics-${bundle}`, cluster });
  const stateOf = (families: ParsedFamily[], cluster: string, bundle: string) =>
    STATES.filter((s) => sampleValue(families, "pulumi_fleet_bundledeployment_state", { ...pairLabels(cluster, bundle), state: s }) === 1);
  const deployedAt = (families: ParsedFamily[], cluster: string, bundle: string) =>
    sampleValue(families, "pulumi_fleet_bundledeployment_deployed_timestamp_seconds", pairLabels(cluster, bundle));
  const runOf = (operation: string) => {
    const f = read(runFileName(STACK, operation as "up"));
    return {
      success: sampleValue(f, "pulumi_fleet_run_success", { stack: STACK, operation }),
      duration: sampleValue(f, "pulumi_fleet_run_duration_seconds", { operation }),
      families: f,
    };
  };

  before(async function () {
    toolchain();
    clusters = liveClusters().clusters;
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    fs.mkdirSync(textfiles);
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        pushed.push({ method: req.method!, url: req.url!, contentType: req.headers["content-type"], body });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    write({ m0: 1, m1: 1 });
    config = liveStackConfig(
      STACK,
      clusters,
      { dir: repoDir, paths: BUNDLES },
      {
        agent: { enabled: false },
        stack: {
          metrics: {
            textfileDirectory: textfiles,
            pushgateway: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/gw`, job: "pulumi-fleet", timeoutSeconds: 5 },
          },
        },
      },
    );
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
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("up: every pair Ready; a refused apply: that pair ErrApplied and the up's outcome 0; status, preview; the Pushgateway groups replaced with parseable bodies", async () => {
    const t0 = Date.now() / 1000;
    await ops.up(options());
    const t1 = Date.now() / 1000;
    let s = state();
    for (const c of clusters)
      for (const b of BUNDLES) {
        expect(stateOf(s, c.name, b), `${c.name}/${b}`).to.deep.equal(["Ready"]);
        expect(sampleValue(s, "pulumi_fleet_bundledeployment_objects", pairLabels(c.name, b))).to.equal(1);
        expect(sampleValue(s, "pulumi_fleet_bundledeployment_drifted", pairLabels(c.name, b))).to.equal(0);
        expect(deployedAt(s, c.name, b)).to.be.within(t0, t1);
      }
    const firstDeployed = deployedAt(s, clusters[1].name, "m1")!;
    let up = runOf("up");
    expect(up.success).to.equal(1);
    expect(up.duration).to.be.within(0.1, t1 - t0 + 1);
    expect(sampleValue(up.families, "pulumi_fleet_engine_resources", { operation: "up", step: "create" })).to.be.greaterThan(6);

    // The second cluster refuses m0's new ConfigMap; m1 stays as it was.
    const second = clusters[1];
    await refuseLabelledConfigMaps(second, POLICY, "ConfigMaps labelled deny are refused here", NS);
    write({ m0: 2, m1: 1 }, "m0");
    const t2 = Date.now() / 1000;
    const failed = await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    const t3 = Date.now() / 1000;
    expect(failed).to.be.instanceOf(ops.BundlesFailedError);
    s = state();
    for (const c of clusters) {
      expect(stateOf(s, c.name, "m0"), `${c.name}/m0`).to.deep.equal([c === second ? "ErrApplied" : "Ready"]);
      expect(stateOf(s, c.name, "m1"), `${c.name}/m1`).to.deep.equal(["Ready"]);
      expect(deployedAt(s, c.name, "m0"), "a new deploymentID: a new deployment time").to.be.within(t2, t3);
    }
    expect(deployedAt(s, second.name, "m1"), "an unchanged deploymentID keeps its deployment time").to.equal(firstDeployed);
    up = runOf("up");
    expect(up.success, "the failed up's outcome").to.equal(0);

    const status = await ops.status(options());
    expect(status.deployments.find((d) => d.cluster === second.name && d.bundle === "metrics-m0")!.state).to.equal("ErrApplied");
    expect(runOf("status").success).to.equal(1);
    expect(runOf("up").success, "a status run leaves the up's outcome as it was").to.equal(0);
    expect(stateOf(state(), second.name, "m0")).to.deep.equal(["ErrApplied"]);

    await liftPolicy(second, POLICY, NS);
    await ops.up(options());
    expect(runOf("up").success).to.equal(1);
    expect(stateOf(state(), second.name, "m0")).to.deep.equal(["Ready"]);
    // deployedAt is in the stack's outputs only: a no-op up changes no resource, and keeps every time.
    const before = state();
    const noop = await ops.up(options());
    expect(noop.events).to.deep.equal([]);
    // (The program's read of its own stack outputs is a "read" step.)
    expect(Object.keys(noop.changes).filter((k) => noop.changes[k] > 0 && k !== "read")).to.deep.equal(["same"]);
    for (const c of clusters) for (const b of BUNDLES) expect(deployedAt(state(), c.name, b)).to.equal(deployedAt(before, c.name, b));
    await ops.preview(options());
    expect(runOf("preview").success).to.equal(1);

    // Every push replaced a group (PUT) under the configured base path, in the text format; each body parses.
    const groups = new Set(pushed.map((p) => `${p.method} ${p.url}`));
    expect([...groups].sort()).to.deep.equal([
      "PUT /gw/metrics/job/pulumi-fleet/stack/metrics",
      "PUT /gw/metrics/job/pulumi-fleet/stack/metrics/operation/preview",
      "PUT /gw/metrics/job/pulumi-fleet/stack/metrics/operation/status",
      "PUT /gw/metrics/job/pulumi-fleet/stack/metrics/operation/up",
    ]);
    for (const p of pushed) {
      expect(p.contentType).to.equal("text/plain; version=0.0.4; charset=utf-8");
      expect(parseExposition(p.body).length).to.be.greaterThan(0);
    }
    const lastState = [...pushed].reverse().find((p) => p.url === "/gw/metrics/job/pulumi-fleet/stack/metrics")!;
    expect(lastState.body).to.equal(fs.readFileSync(path.join(textfiles, stateFileName(STACK)), "utf8"));
    // Only the collector's files are left in its directory: no temporary file.
    expect(fs.readdirSync(textfiles).sort()).to.deep.equal(
      ["preview", "status", "up"]
        .map((o) => runFileName(STACK, o as "up"))
        .concat(stateFileName(STACK))
        .sort(),
    );
  });
});
