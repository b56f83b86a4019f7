/**
 * HelmOps on a live cluster, through the operations, from a real Helm repository on loopback: the
 * constraint resolved and that version deployed; a newer matching version published, a polled HelmOp
 * moves to it with its preview while one without polling keeps its version (Fleet's HelmOp) until its
 * constraint changes; `status` shows the version; an entry removed is pruned. `npm run watch` polls a
 * HelmOp as it polls a GitRepo's head, and deploys a new matching version within its bound.
 */
import { expect } from "chai";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { formatStatusTable } from "../../automation/reports/status";
import { GitRepoConfig } from "../../core/config/git-repo";
import { parseStackConfig, StackConfig } from "../../core/config/stack";
import { ChartRepo, chartSources, startChartRepo } from "../support/chart-repo";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { eventually } from "../support/eventually";
import { tempDir } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";
import { liveClusterConfig } from "../support/live-stack";

const CM = `apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
data:
  version: {{ .Chart.Version | quote }}
  greeting: {{ .Values.greeting | quote }}
`;
const chart = (version: string) => ({ name: "demo", version, templates: { "cm.yaml": CM }, values: "greeting: hello\n" });

describe("HelmOps: a chart by version, without a GitRepo, on a live cluster", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-helmops-e2e-");
  let cluster: LocalCluster;
  let server: ChartRepo;
  let charts: string;
  let config: StackConfig;
  const options = (): ops.OperationOptions => ({
    stack: "helmops",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "helmops" },
  });
  /** HelmOp entries as the stack file gives them, read by the stack file's reader. */
  const helmOps = (entries: Record<string, unknown>[]): GitRepoConfig[] => parseStackConfig({ helmOps: entries }, "stacks/Pulumi.helmops.yaml", work).gitRepos;
  const entry = (name: string, version: string, more: Record<string, unknown> = {}) => ({
    name,
    helm: { repo: `${server.url}/charts`, chart: "demo", version, values: { greeting: name } },
    defaultNamespace: `helmops-${name}`,
    targets: [{ clusterName: cluster.name }],
    allowedChartURLs: ["http://127\\.0\\.0\\.1:[0-9]+/.*"],
    ...more,
  });
  const deployed = async (name: string) =>
    (await kubeGet<{ data: Record<string, string> }>(cluster, `/api/v1/namespaces/helmops-${name}/configmaps/demo`))?.data.version;

  before(async function () {
    toolchain();
    cluster = liveClusters().clusters[0];
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    charts = chartSources(["1.0.0", "1.1.0"].map(chart));
    server = await startChartRepo(charts);
    config = {
      file: "stacks/Pulumi.helmops.yaml",
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com", enabled: false },
      clusterGroups: [],
      clusters: [liveClusterConfig(cluster)],
      gitRepos: [],
    } as StackConfig;
  });

  after(async function () {
    await ops.destroy(options()).catch(() => undefined);
    for (const ns of ["polled", "kept"]) await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/helmops-${ns}`).catch(() => undefined);
    await server?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("deploys the resolved version; a new one moves a polled HelmOp, not one without polling, until its constraint changes", async () => {
    config = { ...config, gitRepos: helmOps([entry("polled", "1.x", { pollingInterval: "1m" }), entry("kept", "1.x")]) };
    await ops.up(options());
    expect(await deployed("polled")).to.equal("1.1.0");
    expect(await deployed("kept")).to.equal("1.1.0");

    chartSources([chart("1.2.0")], charts);
    await server.reload();
    const preview = await ops.preview(options());
    expect(preview.summaryMarkdown, "the polled HelmOp's change is in the preview").to.include("polled");
    await ops.up(options());
    expect(await deployed("polled"), "polled: the newest matching version").to.equal("1.2.0");
    expect(await deployed("kept"), "not polled: the version resolved first stays (Fleet's status.version)").to.equal("1.1.0");
    const table = formatStatusTable(await ops.status(options()));
    expect(table).to.match(/polled .*version 1\.2\.0/);
    expect(table).to.match(/kept .*version 1\.1\.0/);

    config = { ...config, gitRepos: helmOps([entry("polled", "1.x", { pollingInterval: "1m" }), entry("kept", "~1.2")]) };
    await ops.up(options());
    expect(await deployed("kept"), "a changed constraint is resolved again").to.equal("1.2.0");

    config = { ...config, gitRepos: helmOps([entry("polled", "1.x", { pollingInterval: "1m" })]) };
    await ops.up(options());
    expect(await deployed("kept"), "an entry removed is pruned").to.equal(undefined);
    expect(await deployed("polled")).to.equal("1.2.0");
  });

  it("npm run watch polls a HelmOp at its pollingInterval and deploys a new matching version", async () => {
    const stack = "hopswatch";
    chartSources([chart("1.2.0")], charts); // as the test before left it, when run alone
    await server.reload();
    const stacksDir = path.join(work, "watch-stacks");
    const stateDir = path.join(work, "watch-state");
    fs.mkdirSync(stacksDir, { recursive: true });
    fs.writeFileSync(
      path.join(stacksDir, `Pulumi.${stack}.yaml`),
      YAML.stringify({
        config: {
          "pulumi-fleet:agent": { enabled: false },
          "pulumi-fleet:clusters": [{ name: cluster.name, kubeconfig: fs.readFileSync(cluster.kubeconfig, "utf8") }],
          "pulumi-fleet:helmOps": [entry("watched", ">=1.2.0 <2.0.0", { pollingInterval: "1s" })],
        },
      }),
    );
    const { PULUMI_BACKEND_URL: _b, PULUMI_FLEET_STATE_DIR: _s, ...inherited } = process.env;
    const env = { ...inherited, PULUMI_FLEET_STACKS_DIR: stacksDir, PULUMI_FLEET_STATE_DIR: stateDir, PULUMI_CONFIG_PASSPHRASE: stack };
    const child = spawn(process.execPath, ["scripts/run-ts.js", "scripts/watch.ts", "--stack", stack, "--quiet"], {
      cwd: PROJECT_DIR,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      await eventually(
        "the first up deploys the HelmOp's resolved version",
        () => deployed("watched"),
        (v) => v === "1.2.0",
        5 * 60_000,
      );
      chartSources([chart("1.3.0")], charts);
      await server.reload();
      await eventually(
        "the watcher deploys the new matching version",
        () => deployed("watched"),
        (v) => v === "1.3.0",
        2 * 60_000,
      );
      expect(output).to.contain("gitRepo watched is at 1.3.0 (was 1.2.0)");
    } finally {
      child.kill("SIGTERM");
      expect(await exited, output).to.equal(0);
      await ops.destroy({ stack, stateDir, stackConfigDir: stacksDir, env: { PULUMI_CONFIG_PASSPHRASE: stack } });
      await kubeRequest(cluster, "DELETE", "/api/v1/namespaces/helmops-watched").catch(() => undefined);
    }
  });
});
