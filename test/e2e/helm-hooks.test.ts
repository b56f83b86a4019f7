/**
 * Helm hooks on a live cluster through the operations (tools/fleet-provider hooks.go): a chart's
 * pre-install Job runs (kwok plays its pod's exit: automation/clusters/kwok-stages.yaml) and is deleted
 * under hook-succeeded before the set is applied, its post-install hook after; the PR summary of the next
 * change lists the upgrade hooks it runs, apart from the objects; the upgrade runs them once (a no-op
 * `up` runs none); a failing pre-install hook fails its pair alone, in Helm's words, with nothing of its
 * set applied; a pruned pair runs its pre-delete hook. The provider's own live tests cover weights,
 * delete policies, timeouts and another owner's object (live_hooks_test.go).
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { gitRepoConfig, tempDir, writeFiles } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";
import { liveClusterConfig } from "../support/live-stack";

const NS = "hooks-e2e";

const hookJob = (name: string, events: string, exit: number, extra: Record<string, string> = {}) =>
  `apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: ${name}\n  annotations: ${JSON.stringify({ "helm.sh/hook": events, ...extra })}\n` +
  `spec:\n  backoffLimit: 0\n  template:\n    metadata:\n      annotations: {pulumi-fleet.test/exit: "${exit}"}\n` +
  "    spec: {restartPolicy: Never, containers: [{name: run, image: busybox}]}\n";
const hookConfigMap = (name: string, events: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  annotations: {helm.sh/hook: ${events}}\ndata:\n  version: "{{ .Values.version }}"\n`;

describe("Helm hooks run as Helm runs them, on a live cluster", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-hooks-");
  const repoDir = path.join(work, "repo");
  let cluster: LocalCluster;
  let config: StackConfig;
  const options = (): ops.OperationOptions => ({
    stack: "hooks",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "hooks" },
  });
  const get = (kind: "configmaps" | "jobs", name: string) =>
    kubeGet<{ metadata: { uid: string }; data?: Record<string, string> }>(
      cluster,
      `/${kind === "jobs" ? "apis/batch/v1" : "api/v1"}/namespaces/${NS}/${kind}/${name}`,
    );
  const writeApp = (version: number) =>
    writeFiles(path.join(repoDir, "app"), {
      "Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
      "values.yaml": `version: ${version}\n`,
      "fleet.yaml": `defaultNamespace: ${NS}\n`,
      "templates/app.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  version: "{{ .Values.version }}"\n`,
      "templates/migrate.yaml": hookJob("migrate", "pre-install,pre-upgrade", 0, { "helm.sh/hook-delete-policy": "hook-succeeded" }),
      "templates/installed.yaml": hookConfigMap("installed", "post-install"),
      "templates/upgraded.yaml": hookConfigMap("upgraded", "post-upgrade"),
      "templates/goodbye.yaml": hookConfigMap("goodbye", "pre-delete"),
    });

  before(async function () {
    toolchain();
    cluster = liveClusters().clusters[0];
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    writeApp(1);
    writeFiles(path.join(repoDir, "broken"), {
      "Chart.yaml": "apiVersion: v2\nname: broken\nversion: 0.1.0\n",
      "fleet.yaml": `defaultNamespace: ${NS}\n`,
      "templates/cm.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata:\n  k: v\n`,
      "templates/check.yaml": hookJob("broken-check", "pre-install", 1),
    });
    config = {
      file: "stacks/Pulumi.hooks.yaml",
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com", enabled: false },
      clusterGroups: [],
      clusters: [liveClusterConfig(cluster)],
      gitRepos: [gitRepoConfig({ name: "hooks", repo: repoDir, paths: ["app", "broken"], targets: [{ clusterSelector: {} }] })],
    } as StackConfig;
  });

  after(async function () {
    await ops.destroy(options());
    try {
      await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/${NS}`);
    } catch {
      /* gone */
    }
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("install hooks around the first apply; a failed pre-install hook fails its pair alone, nothing of its set applied", async () => {
    const failed = await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(failed, failed?.message).to.be.instanceOf(ops.BundlesFailedError);
    expect(failed!.message).to.include(`failed pre-install: resource Job/${NS}/broken-check not ready. status: Failed, message: Job Failed. failed: 1/1`);
    expect(await get("configmaps", "broken"), "the failed pair's set").to.equal(undefined);
    expect((await get("configmaps", "app"))?.data).to.deep.equal({ version: "1" });
    expect(await get("configmaps", "installed"), "post-install ran").to.not.equal(undefined);
    expect(await get("jobs", "migrate"), "pre-install Job completed, deleted under hook-succeeded").to.equal(undefined);
    expect(await get("configmaps", "upgraded"), "an upgrade hook at the install").to.equal(undefined);
    expect(await get("configmaps", "goodbye"), "a delete hook at the install").to.equal(undefined);
  });

  it("the preview lists the upgrade hooks apart from the objects; the upgrade runs them once; a no-op runs none", async () => {
    config = { ...config, gitRepos: [gitRepoConfig({ name: "hooks", repo: repoDir, paths: ["app"], targets: [{ clusterSelector: {} }] })] };
    writeApp(2);
    const installed = (await get("configmaps", "installed"))!.metadata.uid;
    const preview = await ops.preview(options());
    expect(preview.summaryMarkdown).to.include("### Helm hooks that run");
    const row = preview.summaryMarkdown.split("\n").find((l) => l.includes("pre-upgrade"));
    expect(row).to.include("`pre-upgrade Job hooks-e2e/migrate`<br>`post-upgrade ConfigMap hooks-e2e/upgraded`");
    const app = [...preview.groups.deployments.values()].find((d) => d.bundle === "hooks-app")!;
    expect(
      app.steps.map((s) => `${s.op} ${s.type}`),
      "only the set's objects are steps",
    ).to.deep.equal(["update kubernetes:core/v1:ConfigMap"]);

    await ops.up(options());
    expect((await get("configmaps", "app"))?.data).to.deep.equal({ version: "2" });
    const upgraded = await get("configmaps", "upgraded");
    expect(upgraded?.data).to.deep.equal({ version: "2" });
    expect((await get("configmaps", "installed"))!.metadata.uid, "install hooks stay as they are").to.equal(installed);

    await ops.up(options());
    expect((await get("configmaps", "upgraded"))!.metadata.uid, "a no-op `up` runs no hook").to.equal(upgraded!.metadata.uid);
  });

  it("a pruned pair runs its pre-delete hook; the hooks stay, the set goes", async () => {
    config = { ...config, gitRepos: [] };
    await ops.up(options());
    expect(await get("configmaps", "goodbye")).to.not.equal(undefined);
    expect(await get("configmaps", "app")).to.equal(undefined);
    expect(await get("configmaps", "installed"), "Helm never deletes a hook by itself").to.not.equal(undefined);
  });
});
