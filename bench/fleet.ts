/**
 * `npm run bench -- fleet`: pulumi-fleet side by side with Rancher Fleet v0.16.0 itself (its
 * controller, agents and CLI built from Fleet's Go module by tools/build-fleet.sh and run as
 * processes, bench/fleet-processes.ts), on the same local clusters, bundles and objects:
 *  1. first deploy, 3 clusters x 10 bundles x 10 ConfigMaps: start -> every object present;
 *  2. target edit dropping one cluster: start -> its objects gone (Fleet: `fleet apply` with the
 *     edited targets file, as its gitjob runs it; here `up` with the edited stack);
 *  3. no-op: Fleet: `fleet apply` unchanged, then whether anything on the clusters changed, and
 *     what its processes cost while idle; here a no-op `up`;
 *  4. one 500-object bundle on one cluster: start -> all present; with `helm install` of the same
 *     objects as a chart (Helm v4 as Fleet links it: the agent's apply path) and
 *     `kubectl apply --server-side`.
 * Fleet runs first, then its processes and its management cluster are stopped and pulumi-fleet runs on
 * the same downstream clusters (other namespaces), so neither shares the two cores with the other.
 * Neither side installs its agent inside a timed window: Fleet's agents are running and checked in
 * before the first deploy; pulumi-fleet's agent is off (it is not needed to deploy).
 * Objects are counted on the downstream API servers every 200 ms. Writes bench/results/fleet.json.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { kubeList } from "../automation/clusters/kube-client";
import { clusterBinaries, LocalCluster, startLocalClusters, stopComponent, stopLocalClusters, COMPONENTS } from "../automation/clusters/local-clusters";
import * as ops from "../automation/operations";
import { toolchain } from "../automation/engine/toolchain";
import { ClusterConfig, StackConfig } from "../core/config/stack";
import {
  fleetApply,
  fleetBinaries,
  fleetCpuSeconds,
  fleetMemory,
  FleetRun,
  FLEET_VERSION,
  installFleet,
  logTail,
  startFleet,
  stopFleet,
  writeTargets,
} from "./fleet-processes";
import { printTable, seconds, syntheticClusters, syntheticConfig, syntheticRepo, writeResult } from "./support";

const POLL_MS = 200;
/** How long to wait for Fleet to reach a state before calling it not reached (its orphan GC requeues every 15 min). */
const FLEET_LIMIT_MS = 20 * 60_000;
/** Fleet's Clusters get the names and labels pulumi-fleet's stack gives the same clusters. */
const DOWNSTREAM = syntheticClusters(3);

/** ConfigMaps named cm-* in namespaces starting with `prefix`. */
async function countObjects(c: LocalCluster, prefix: string): Promise<number> {
  const all = await kubeList(c, "/api/v1/configmaps");
  return all.filter((o: any) => o.metadata.namespace.startsWith(prefix) && o.metadata.name.startsWith("cm-")).length;
}

/**
 * performance.now() when `check` first holds (polled), or undefined after `limitMs`. A failed poll
 * (an API server resetting a connection under load) is retried: it runs beside the command being timed.
 */
async function when(check: () => Promise<boolean>, limitMs: number): Promise<number | undefined> {
  const deadline = performance.now() + limitMs;
  for (;;) {
    if (await check().catch(() => false)) return performance.now();
    if (performance.now() > deadline) return undefined;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

const present = (clusters: LocalCluster[], prefix: string, each: number) => async () =>
  (await Promise.all(clusters.map((c) => countObjects(c, prefix)))).every((n) => n === each);

/** resourceVersions of the benchmark's objects, to tell whether a no-op touched any. */
async function versions(clusters: LocalCluster[], prefix: string): Promise<string> {
  const lists = await Promise.all(clusters.map((c) => kubeList(c, "/api/v1/configmaps")));
  return JSON.stringify(
    lists.map((l) =>
      l
        .filter((o: any) => o.metadata.namespace.startsWith(prefix))
        .map((o: any) => o.metadata.resourceVersion)
        .sort(),
    ),
  );
}

const secs = (from: number, to: number | undefined) => (to === undefined ? undefined : seconds(to - from));

/** The same clusterSelector both sides use: every cluster, or all but shard 2. */
const selector = (dropLast: boolean) => ({
  matchLabels: { env: "bench" },
  ...(dropLast ? { matchExpressions: [{ key: "shard", operator: "NotIn" as const, values: ["2"] }] } : {}),
});

async function fleetSide(run: FleetRun, work: string) {
  const [c0, , c2] = run.downstream;
  // The benchmark's own BundleDeployments (not the agent bundles agentmanagement keeps on every cluster).
  const bundleDeployments = async () =>
    (await kubeList(run.mgmt, "/apis/fleet.cattle.io/v1alpha1/bundledeployments")).filter((bd: any) => bd.metadata.name.startsWith("bench-")).length;
  const repo = syntheticRepo(10, 10, "fleet-bench");
  const paths = fs.readdirSync(repo).sort();
  const targets = (dropLast: boolean) => writeTargets(path.join(work, `targets-${dropLast}.json`), [{ name: "all", clusterSelector: selector(dropLast) }]);

  // 1. first deploy
  let t0 = performance.now();
  let bdsAt: Promise<number | undefined> = when(async () => (await bundleDeployments()) === 30, FLEET_LIMIT_MS);
  let objectsAt = when(present(run.downstream, "fleet-bench-", 10 * 10), FLEET_LIMIT_MS);
  let retries = await fleetApply(run, repo, "bench", paths, targets(false));
  const firstApplied = performance.now();
  const first = { applyS: seconds(firstApplied - t0), bundleDeploymentsS: secs(t0, await bdsAt), objectsS: secs(t0, await objectsAt) };
  if (first.objectsS === undefined)
    throw new Error(
      `Fleet: the first deploy's objects were not all present within ${FLEET_LIMIT_MS / 1000} s; agent log:\n${logTail(run, "fleetagent-c-000")}`,
    );

  // 2. target edit dropping c-002
  t0 = performance.now();
  bdsAt = when(async () => (await bundleDeployments()) === 20, FLEET_LIMIT_MS);
  objectsAt = when(async () => (await countObjects(c2, "fleet-bench-")) === 0, FLEET_LIMIT_MS);
  retries += await fleetApply(run, repo, "bench", paths, targets(true));
  const edit = { applyS: seconds(performance.now() - t0), bundleDeploymentsS: secs(t0, await bdsAt), objectsS: secs(t0, await objectsAt) };

  // 3. no-op: apply unchanged, then watch the objects, the agent pods and the processes' CPU for a while
  const before = await versions(run.downstream, "fleet-bench-");
  const agentPods = async () =>
    JSON.stringify(
      await Promise.all(
        run.downstream.map(async (c) =>
          (await kubeList(c, "/api/v1/namespaces/cattle-fleet-system/pods", "app=fleet-agent")).map((p: any) => p.metadata.uid).sort(),
        ),
      ),
    );
  const podsBefore = await agentPods();
  t0 = performance.now();
  retries += await fleetApply(run, repo, "bench", paths, targets(true));
  const noopApplyS = seconds(performance.now() - t0);
  const cpu0 = fleetCpuSeconds(run);
  const idleMs = 60_000;
  await new Promise((r) => setTimeout(r, idleMs));
  const noop = {
    applyS: noopApplyS,
    objectsRewritten: before !== (await versions(run.downstream, "fleet-bench-")),
    agentPodsReplaced: podsBefore !== (await agentPods()),
    agentPods: JSON.parse(podsBefore).flat().length,
    idleCpuSecondsPerMinute: +((fleetCpuSeconds(run) - cpu0) * (60_000 / idleMs)).toFixed(2),
    residentMiB: Math.round(fleetMemory(run) / 2 ** 20),
  };

  // 4. one 500-object bundle on c-000
  const big = syntheticRepo(1, 500, "fleet-big");
  t0 = performance.now();
  objectsAt = when(present([c0], "fleet-big-", 500), FLEET_LIMIT_MS);
  retries += await fleetApply(run, big, "big", fs.readdirSync(big), writeTargets(path.join(work, "targets-big.json"), [{ name: "one", clusterName: c0.name }]));
  const bigResult = { applyS: seconds(performance.now() - t0), objectsS: secs(t0, await objectsAt) };
  return { first, edit, noop, big: bigResult, bigRepo: big, applyRetries: retries };
}

async function pulumiSide(downstream: LocalCluster[], work: string) {
  const kubeconfigs: ClusterConfig[] = syntheticClusters(DOWNSTREAM.length, (i) => ({ kubeconfig: fs.readFileSync(downstream[i].kubeconfig, "utf8") }));
  const options = (config: StackConfig, stack: string): ops.OperationOptions => ({
    stack,
    stateDir: path.join(work, "state"),
    stackConfigDir: work,
    config,
    deploy: { cacheRoot: path.join(work, "git") },
    env: { PULUMI_CONFIG_PASSPHRASE: "bench" },
  });
  const repo = syntheticRepo(10, 10, "pf-bench");
  const config = (dropLast: boolean) => {
    const c = syntheticConfig(repo, kubeconfigs, { agent: { enabled: false } });
    c.gitRepos[0].targets = [{ name: "all", clusterSelector: selector(dropLast) }];
    return c;
  };
  const [c0, , c2] = downstream;

  let t0 = performance.now();
  let objectsAt = when(present(downstream, "pf-bench-", 10 * 10), 600_000);
  await ops.up(options(config(false), "fleet"));
  const first = { upS: seconds(performance.now() - t0), objectsS: secs(t0, await objectsAt) };

  t0 = performance.now();
  objectsAt = when(async () => (await countObjects(c2, "pf-bench-")) === 0, 600_000);
  await ops.up(options(config(true), "fleet"));
  const edit = { upS: seconds(performance.now() - t0), objectsS: secs(t0, await objectsAt) };

  const before = await versions(downstream, "pf-bench-");
  t0 = performance.now();
  await ops.up({ ...options(config(true), "fleet"), expectNoChanges: true });
  const noop = { upS: seconds(performance.now() - t0), objectsRewritten: before !== (await versions(downstream, "pf-bench-")) };

  const big = syntheticRepo(1, 500, "pf-big");
  const bigConfig = syntheticConfig(big, [kubeconfigs[0]], { agent: { enabled: false } });
  t0 = performance.now();
  objectsAt = when(present([c0], "pf-big-", 500), 600_000);
  await ops.up(options(bigConfig, "big"));
  const bigResult = { upS: seconds(performance.now() - t0), objectsS: secs(t0, await objectsAt) };
  return { first, edit, noop, big: bigResult };
}

/** The same 500 objects by `helm install` (as a chart) and by `kubectl apply --server-side`, on c-000. */
function floors(bigRepo: string, c0: LocalCluster, helm: string, kubectl: string, work: string) {
  const docs = fs
    .readFileSync(path.join(bigRepo, "b000", "objects.yaml"), "utf8")
    .split("---\n")
    .map((d) => YAML.parse(d));
  const chart = path.join(work, "chart");
  fs.mkdirSync(path.join(chart, "templates"), { recursive: true });
  fs.writeFileSync(path.join(chart, "Chart.yaml"), "apiVersion: v2\nname: big\nversion: 0.1.0\n");
  fs.writeFileSync(path.join(chart, "templates", "objects.yaml"), docs.map((d) => YAML.stringify(d)).join("---\n"));
  const file = path.join(work, "kubectl-500.yaml");
  fs.writeFileSync(file, docs.map((d) => YAML.stringify({ ...d, metadata: { ...d.metadata, namespace: "kubectl-big" } })).join("---\n"));
  const timed = (program: string, args: string[]) => {
    const t = performance.now();
    execFileSync(program, args, { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, HOME: work } });
    return seconds(performance.now() - t);
  };
  const helmS = timed(helm, ["--kubeconfig", c0.kubeconfig, "install", "big", chart, "-n", "helm-big", "--create-namespace"]);
  execFileSync(kubectl, ["--kubeconfig", c0.kubeconfig, "create", "namespace", "kubectl-big"], { stdio: "ignore" });
  const kubectlS = timed(kubectl, ["--kubeconfig", c0.kubeconfig, "apply", "--server-side", "-f", file]);
  return { helmInstallS: helmS, kubectlApplyS: kubectlS };
}

const ratio = (ours: number | undefined, theirs: number | undefined) => (ours === undefined || theirs === undefined ? "-" : `${(ours / theirs).toFixed(2)}x`);
const show = (s: number | undefined) => (s === undefined ? `not within ${FLEET_LIMIT_MS / 60_000} min` : String(s));

export async function fleetBench(): Promise<void> {
  toolchain();
  const bin = fleetBinaries();
  const kubectl = path.join(clusterBinaries({ kubectl: true }), "kubectl");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-fleet-"));
  const live = await startLocalClusters({ names: ["fleet-mgmt", ...DOWNSTREAM.map((c) => c.name)], baseDir: path.join(work, "clusters") });
  const [mgmt, ...downstream] = live.clusters;
  const run: FleetRun = { bin, kubectl, mgmt, downstream, dir: path.join(work, "fleet"), pids: [] };
  fs.mkdirSync(run.dir);
  let finished = false;
  // An interrupted run stops what it started (the clusters and Fleet run in process groups of their own).
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`${signal}: stopping Fleet and the local clusters`);
    void stopFleet(run)
      .then(() => stopLocalClusters(live.baseDir))
      .finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
  try {
    await installFleet(run, (i) => DOWNSTREAM[i].labels);
    const fleetStartMs = await startFleet(run);
    console.log(`Fleet ${FLEET_VERSION}: controller and ${downstream.length} agents checked in after ${seconds(fleetStartMs)} s`);
    const fleet = await fleetSide(run, work);
    await stopFleet(run);
    for (const comp of [...COMPONENTS].reverse()) await stopComponent(live, mgmt, comp);
    const ours = await pulumiSide(downstream, work);
    const floor = floors(fleet.bigRepo, downstream[0], path.join(bin, "helm"), kubectl, work);

    console.log(`\nside by side with Fleet ${FLEET_VERSION} (same clusters, bundles and objects; seconds from the command's start):`);
    printTable([
      {
        scenario: "first deploy 3x10x10: every object present",
        Fleet: show(fleet.first.objectsS),
        "pulumi-fleet": show(ours.first.objectsS),
        "pulumi-fleet / Fleet": ratio(ours.first.objectsS, fleet.first.objectsS),
      },
      {
        scenario: "target edit, one cluster dropped: its objects gone",
        Fleet: show(fleet.edit.objectsS),
        "pulumi-fleet": show(ours.edit.objectsS),
        "pulumi-fleet / Fleet": ratio(ours.edit.objectsS, fleet.edit.objectsS),
      },
      {
        scenario: "no-op: command returned",
        Fleet: fleet.noop.applyS,
        "pulumi-fleet": ours.noop.upS,
        "pulumi-fleet / Fleet": ratio(ours.noop.upS, fleet.noop.applyS),
      },
      {
        scenario: "500-object bundle, one cluster: all present",
        Fleet: show(fleet.big.objectsS),
        "pulumi-fleet": show(ours.big.objectsS),
        "pulumi-fleet / Fleet": ratio(ours.big.objectsS, fleet.big.objectsS),
      },
      { scenario: `  the same 500 by helm install (Helm as Fleet links it)`, Fleet: floor.helmInstallS, "pulumi-fleet": "", "pulumi-fleet / Fleet": "" },
      { scenario: "  the same 500 by kubectl apply --server-side", Fleet: floor.kubectlApplyS, "pulumi-fleet": "", "pulumi-fleet / Fleet": "" },
    ]);
    console.log("\nwhere the time goes:");
    printTable([
      {
        step: "first deploy",
        "fleet apply returned": fleet.first.applyS,
        "BundleDeployments created": show(fleet.first.bundleDeploymentsS),
        "objects present": show(fleet.first.objectsS),
        "up returned": ours.first.upS,
      },
      {
        step: "target edit",
        "fleet apply returned": fleet.edit.applyS,
        "BundleDeployments created": show(fleet.edit.bundleDeploymentsS) + " (deleted)",
        "objects present": show(fleet.edit.objectsS) + " (gone)",
        "up returned": ours.edit.upS,
      },
      {
        step: "500 objects",
        "fleet apply returned": fleet.big.applyS,
        "BundleDeployments created": "-",
        "objects present": show(fleet.big.objectsS),
        "up returned": ours.big.upS,
      },
    ]);
    console.log(
      `\nno-op: objects rewritten: Fleet ${fleet.noop.objectsRewritten}, pulumi-fleet ${ours.noop.objectsRewritten}. ` +
        `Fleet's agent pods (${fleet.noop.agentPods}, the Deployment agentmanagement keeps on every cluster) replaced over the no-op and the idle minute: ${fleet.noop.agentPodsReplaced}. ` +
        `Fleet's controller and agents while idle: ${fleet.noop.idleCpuSecondsPerMinute} CPU s per minute, ${fleet.noop.residentMiB} MiB resident (pulumi-fleet runs no process between updates). ` +
        `\`fleet apply\` retried after a write conflict with Fleet's controller (as the gitjob runs its Job again): ${fleet.applyRetries} time(s), inside the timed windows.`,
    );
    console.log(
      `written ${writeResult("fleet", { fleetVersion: FLEET_VERSION, fleetStartS: seconds(fleetStartMs), fleet: { ...fleet, bigRepo: undefined }, pulumiFleet: ours, floor })}`,
    );
    finished = true;
  } finally {
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    await stopFleet(run);
    await stopLocalClusters(live.baseDir);
    if (finished) fs.rmSync(work, { recursive: true, force: true });
    else console.error(`Fleet's logs are kept in ${run.dir}`);
  }
}
