/**
 * `npm run bench -- hooks`: Helm hooks as Rancher Fleet v0.16.0's own agent runs them (its controller,
 * agent and CLI built by tools/build-fleet.sh, run as processes: bench/fleet-processes.ts) beside
 * pulumi-fleet, the same chart on two local clusters of the same build (kwok plays the hook Job's pod
 * exiting: automation/clusters/kwok-stages.yaml). After the install, an upgrade (a new value) and the
 * deletion, each side's namespace is read: which objects are there, each one's `version` value, and the
 * order they were written in (their resourceVersions: one etcd per cluster, and each hook ConfigMap is
 * written once by its run). The table puts the two side by side and says where they differ; nothing is
 * timed. Writes bench/results/hooks.json.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { kubeList, kubeRequest } from "../automation/clusters/kube-client";
import { clusterBinaries, LocalCluster, startLocalClusters, stopLocalClusters } from "../automation/clusters/local-clusters";
import * as ops from "../automation/operations";
import { toolchain } from "../automation/engine/toolchain";
import { StackConfig } from "../core/config/stack";
import { gitRepoEntry } from "../core/config/git-repo";
import { fleetApply, fleetBinaries, FleetRun, FLEET_VERSION, installFleet, logTail, startFleet, stopFleet, WORKSPACE, writeTargets } from "./fleet-processes";
import { printTable, writeResult } from "./support";
import { writeFiles } from "../test/support/git-fixtures";

const NS = "hooks-cmp";
const LIMIT_MS = 5 * 60_000;

/** A hook ConfigMap recording the chart's version, so an upgrade's run is told from the install's. */
const hookConfigMap = (name: string, events: string, extra: Record<string, string> = {}) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  annotations: ${JSON.stringify({ "helm.sh/hook": events, ...extra })}\n` +
  `data:\n  version: "{{ .Values.version }}"\n`;

/** The chart: every event, weights against name order, each delete policy, a Job hook, a test hook. */
function writeChart(dir: string, version: number): void {
  writeFiles(dir, {
    "Chart.yaml": "apiVersion: v2\nname: hooks\nversion: 0.1.0\n",
    "values.yaml": `version: ${version}\n`,
    "fleet.yaml": `defaultNamespace: ${NS}\n`,
    "templates/app.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  version: "{{ .Values.version }}"\n`,
    "templates/a-late.yaml": hookConfigMap("a-late", "pre-install,pre-upgrade", { "helm.sh/hook-weight": "5" }),
    "templates/z-early.yaml": hookConfigMap("z-early", "pre-install,pre-upgrade", { "helm.sh/hook-weight": "-5" }),
    "templates/post.yaml": hookConfigMap("post", "post-install,post-upgrade"),
    "templates/installed.yaml": hookConfigMap("installed", "post-install"),
    "templates/upgraded.yaml": hookConfigMap("upgraded", "pre-upgrade"),
    "templates/done.yaml": hookConfigMap("done", "pre-install,pre-upgrade", { "helm.sh/hook-delete-policy": "hook-succeeded" }),
    "templates/pre-delete.yaml": hookConfigMap("pre-delete", "pre-delete"),
    "templates/post-delete.yaml": hookConfigMap("post-delete", "post-delete"),
    "templates/smoke.yaml": hookConfigMap("smoke", "test"),
    "templates/migrate.yaml":
      `apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations: {helm.sh/hook: "pre-install,pre-upgrade", helm.sh/hook-delete-policy: "before-hook-creation,hook-succeeded"}\n` +
      `spec:\n  backoffLimit: 0\n  template:\n    metadata:\n      annotations: {pulumi-fleet.test/exit: "0"}\n` +
      "    spec: {restartPolicy: Never, containers: [{name: run, image: busybox}]}\n",
  });
}

interface Seen {
  /** ConfigMaps and Jobs of the namespace in the order they were last written, each "name=version". */
  order: string[];
}

async function seen(c: LocalCluster): Promise<Seen> {
  const items = [...(await kubeList(c, `/api/v1/namespaces/${NS}/configmaps`)), ...(await kubeList(c, `/apis/batch/v1/namespaces/${NS}/jobs`))]
    .filter((o: any) => o.metadata.name !== "kube-root-ca.crt")
    .map((o: any) => ({
      name: `${o.kind === "Job" || o.spec?.template ? "Job " : ""}${o.metadata.name}${o.data?.version ? `=${o.data.version}` : ""}`,
      rv: Number(o.metadata.resourceVersion),
    }))
    .sort((a, b) => a.rv - b.rv);
  return { order: items.map((i) => i.name) };
}

async function until(what: string, check: () => Promise<boolean>, run?: FleetRun): Promise<void> {
  const deadline = Date.now() + LIMIT_MS;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`bench hooks: ${what} not reached in ${LIMIT_MS / 1000} s${run ? `; agent log:\n${logTail(run, "fleetagent-hooks-fleet")}` : ""}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const configMap = async (c: LocalCluster, name: string) =>
  (await kubeList(c, `/api/v1/namespaces/${NS}/configmaps`)).find((o: any) => o.metadata.name === name);
const hasVersion = (c: LocalCluster, name: string, version: string) => async () => (await configMap(c, name))?.data?.version === version;

async function fleetSide(run: FleetRun, work: string): Promise<Record<string, Seen>> {
  const [c] = run.downstream;
  const repo = path.join(work, "fleet-repo");
  const targets = writeTargets(path.join(work, "targets.json"), [{ name: "all", clusterSelector: {} }]);
  writeChart(path.join(repo, "chart"), 1);
  await fleetApply(run, repo, "hooks", ["chart"], targets);
  // The install's last hook: post-install hooks run by weight, then name ("installed", then "post").
  await until("Fleet's install (its last post-install hook)", hasVersion(c, "post", "1"), run);
  const install = await seen(c);
  writeChart(path.join(repo, "chart"), 2);
  await fleetApply(run, repo, "hooks", ["chart"], targets);
  await until("Fleet's upgrade (its post-upgrade hook at version 2)", hasVersion(c, "post", "2"), run);
  const upgrade = await seen(c);
  const bundles = await kubeList(run.mgmt, `/apis/fleet.cattle.io/v1alpha1/namespaces/${WORKSPACE}/bundles`);
  for (const b of bundles.filter((x: any) => x.metadata.name.startsWith("hooks"))) {
    await kubeRequest(run.mgmt, "DELETE", `/apis/fleet.cattle.io/v1alpha1/namespaces/${WORKSPACE}/bundles/${b.metadata.name}`);
  }
  await until("Fleet's uninstall (its post-delete hook)", async () => !!(await configMap(c, "post-delete")) && !(await configMap(c, "app")), run);
  return { install, upgrade, delete: await seen(c) };
}

async function pulumiSide(c: LocalCluster, work: string): Promise<Record<string, Seen>> {
  const repo = path.join(work, "pf-repo");
  writeChart(path.join(repo, "chart"), 1);
  let config: StackConfig = {
    file: "stacks/Pulumi.hooks.yaml",
    fleetVersion: "0.16.0",
    agent: { apiServerURL: "https://fleet.example.com", enabled: false },
    clusterGroups: [],
    clusters: [{ name: c.name, kubeconfig: fs.readFileSync(c.kubeconfig, "utf8"), labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false }],
    gitRepos: [gitRepoEntry("hooks", repo, { paths: ["chart"], targets: [{ clusterSelector: {} }] })],
  };
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  const options = (): ops.OperationOptions => ({
    stack: "hooks",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "hooks" },
  });
  await ops.up(options());
  const install = await seen(c);
  writeChart(path.join(repo, "chart"), 2);
  await ops.up(options());
  const upgrade = await seen(c);
  config = { ...config, gitRepos: [] };
  await ops.up(options());
  const deleted = await seen(c);
  await ops.destroy(options());
  return { install, upgrade, delete: deleted };
}

export async function hooksBench(): Promise<void> {
  toolchain();
  const bin = fleetBinaries();
  const kubectl = path.join(clusterBinaries({ kubectl: true }), "kubectl");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-hooks-"));
  const live = await startLocalClusters({ names: ["fleet-mgmt", "hooks-fleet", "hooks-pf"], baseDir: path.join(work, "clusters") });
  const [mgmt, fleetCluster, ours] = live.clusters;
  const run: FleetRun = { bin, kubectl, mgmt, downstream: [fleetCluster], dir: path.join(work, "fleet"), pids: [] };
  fs.mkdirSync(run.dir);
  let finished = false;
  try {
    await installFleet(run, () => ({ env: "hooks" }));
    await startFleet(run);
    const fleet = await fleetSide(run, work);
    await stopFleet(run);
    const pf = await pulumiSide(ours, work);
    const rows = (["install", "upgrade", "delete"] as const).map((phase) => ({
      phase,
      same: JSON.stringify(fleet[phase].order) === JSON.stringify(pf[phase].order) ? "yes" : "NO",
      [`Fleet ${FLEET_VERSION}: objects in write order`]: fleet[phase].order.join(" "),
      "pulumi-fleet": pf[phase].order.join(" "),
    }));
    console.log(`\nHelm hooks, Fleet ${FLEET_VERSION}'s agent beside pulumi-fleet (namespace ${NS} after each phase; name=version, oldest write first):`);
    printTable(rows);
    console.log(`written ${writeResult("hooks", { fleetVersion: FLEET_VERSION, fleet, pulumiFleet: pf })}`);
    finished = true;
  } finally {
    await stopFleet(run);
    await stopLocalClusters(live.baseDir);
    if (finished) fs.rmSync(work, { recursive: true, force: true });
    else console.error(`Fleet's logs are kept in ${run.dir}`);
  }
}
