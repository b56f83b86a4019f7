/**
 * Rancher Fleet v0.16.0 run as plain processes on local clusters, for `npm run bench -- fleet`
 * (bench/fleet.ts) only: its CRDs on a management cluster, one Cluster per downstream cluster, the
 * controller, one agent per downstream cluster, and `fleet apply`. The binaries come from
 * tools/build-fleet.sh (built from Fleet's Go module into the tool cache).
 *
 * Registration is Fleet's own handshake, with agent processes where Fleet would run its agent image:
 * a ClusterRegistrationToken on the management cluster; agentmanagement issues its values (a
 * service-account token the local clusters' kube-controller-manager fills in); each agent starts
 * from a fleet-agent-bootstrap Secret holding them, creates a ClusterRegistration, and receives a
 * kubeconfig for its cluster namespace with that namespace's service account. agentmanagement then
 * also creates, per cluster, the bundle that deploys Fleet's agent Deployment; the agent processes
 * apply it like any bundle, and its pod "runs" on the clusters' kwok node without an image. Startup
 * waits for those bundles, so they are not inside a timed window.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { kubeGet, kubeList, kubeRequest } from "../automation/clusters/kube-client";
import { isRunning, killGroup, LocalCluster } from "../automation/clusters/local-clusters";
import { builtToolPath } from "../core/base/tool-build";

export const FLEET_VERSION = "v0.16.0";
const SYSTEM = "cattle-fleet-system";
export const WORKSPACE = "fleet-default";
const FLEET_API = "/apis/fleet.cattle.io/v1alpha1";

/** tools/build-fleet.sh: the directory of fleetcontroller, fleetagent, fleet and helm (built or reused). */
export function fleetBinaries(): string {
  return builtToolPath("build-fleet.sh", `Fleet ${FLEET_VERSION}`);
}

export interface FleetRun {
  bin: string;
  kubectl: string;
  mgmt: LocalCluster;
  downstream: LocalCluster[];
  dir: string;
  /** Process ids of the controller and the agents (each in a process group of its own). */
  pids: { name: string; pid: number }[];
}

async function create(c: LocalCluster, collection: string, body: object): Promise<void> {
  await kubeRequest(c, "POST", collection, { body });
}

/**
 * Management side: Fleet's CRDs, its system and workspace namespaces, the controller's config (the
 * management API server's URL and CA, which registration hands to agents), one Cluster per
 * downstream cluster (pre-created with its labels and a clientID, as an operator pre-registers
 * clusters) and one ClusterRegistrationToken.
 */
export async function installFleet(run: FleetRun, labels: (i: number) => Record<string, string>): Promise<void> {
  const { mgmt } = run;
  const kubectl = (...args: string[]) => execFileSync(run.kubectl, ["--kubeconfig", mgmt.kubeconfig, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  kubectl("apply", "--server-side", "-f", path.join(run.bin, "..", "share", "crds.yaml"));
  kubectl("wait", "--for", "condition=established", "crd", "--all", "--timeout=120s");
  for (const ns of [SYSTEM, WORKSPACE]) await create(mgmt, "/api/v1/namespaces", { metadata: { name: ns } });
  await create(mgmt, `/api/v1/namespaces/${SYSTEM}/configmaps`, {
    metadata: { name: "fleet-controller" },
    data: {
      config: JSON.stringify({
        apiServerURL: mgmt.server,
        apiServerCA: Buffer.from(mgmt.ca).toString("base64"),
        agentImage: `rancher/fleet-agent:${FLEET_VERSION}`,
      }),
    },
  });
  for (const [i, c] of run.downstream.entries()) {
    await create(mgmt, `${FLEET_API}/namespaces/${WORKSPACE}/clusters`, {
      apiVersion: "fleet.cattle.io/v1alpha1",
      kind: "Cluster",
      metadata: { name: c.name, labels: labels(i) },
      spec: { clientID: c.name },
    });
  }
  await create(mgmt, `${FLEET_API}/namespaces/${WORKSPACE}/clusterregistrationtokens`, {
    apiVersion: "fleet.cattle.io/v1alpha1",
    kind: "ClusterRegistrationToken",
    metadata: { name: "bench" },
    spec: {},
  });
}

/** The token's values (registration URL, CA, service-account token), once agentmanagement has issued them. */
async function registrationValues(run: FleetRun, deadline: number): Promise<Record<string, string>> {
  for (;;) {
    const token = await kubeGet(run.mgmt, `${FLEET_API}/namespaces/${WORKSPACE}/clusterregistrationtokens/bench`);
    const name = token?.status?.secretName;
    const secret = name ? await kubeGet(run.mgmt, `/api/v1/namespaces/${WORKSPACE}/secrets/${name}`) : undefined;
    if (secret?.data?.values) return secret.data;
    checkAlive(run);
    if (Date.now() > deadline)
      throw new Error(`Fleet's ClusterRegistrationToken issued no values; last lines of agentmanagement.log:\n${logTail(run, "agentmanagement")}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Downstream side, as Fleet's agent chart installs it for a registration token: the
 * fleet-agent-bootstrap Secret (the token's values) and the agent's ConfigMap with the clientID
 * that matches the pre-created Cluster.
 */
async function bootstrapAgent(c: LocalCluster, values: Record<string, string>): Promise<void> {
  await create(c, "/api/v1/namespaces", { metadata: { name: SYSTEM } });
  await create(c, `/api/v1/namespaces/${SYSTEM}/configmaps`, { metadata: { name: "fleet-agent" }, data: { config: JSON.stringify({ clientID: c.name }) } });
  await create(c, `/api/v1/namespaces/${SYSTEM}/secrets`, { metadata: { name: "fleet-agent-bootstrap" }, data: values });
}

function launch(run: FleetRun, name: string, program: string, args: string[], env: Record<string, string>): void {
  const log = fs.openSync(path.join(run.dir, `${name}.log`), "a");
  const child = spawn(path.join(run.bin, program), args, {
    detached: true,
    stdio: ["ignore", log, log],
    env: { PATH: process.env.PATH ?? "", HOME: run.dir, GOMAXPROCS: "2", ...env },
  });
  fs.closeSync(log);
  child.unref();
  if (!child.pid) throw new Error(`${program} did not start`);
  run.pids.push({ name, pid: child.pid });
}

const ELECTION = { CATTLE_ELECTION_LEASE_DURATION: "30s", CATTLE_ELECTION_RENEW_DEADLINE: "25s", CATTLE_ELECTION_RETRY_PERIOD: "10s" };

/**
 * The controller's core controllers and its agentmanagement (no gitjob or helmops: `fleet apply`
 * plays gitjob), then one agent per downstream cluster, registering through the token, with the
 * worker counts Fleet's chart sets. Returns once every agent has checked in and every agent bundle
 * agentmanagement created is deployed and ready.
 */
export async function startFleet(run: FleetRun, timeoutMs = 300_000): Promise<number> {
  const t0 = performance.now();
  const deadline = Date.now() + timeoutMs;
  const mgmtConfig = run.mgmt.kubeconfig; // the admin's: Fleet's chart gives its controller every verb on every resource
  launch(run, "fleetcontroller", "fleetcontroller", ["--disable-metrics"], {
    KUBECONFIG: mgmtConfig,
    NAMESPACE: SYSTEM,
    FLEET_HEALTHPROBE_BIND_ADDRESS: "0",
    ...ELECTION,
    BUNDLE_RECONCILER_WORKERS: "50",
    BUNDLEDEPLOYMENT_RECONCILER_WORKERS: "50",
    CLUSTER_RECONCILER_WORKERS: "50",
    CLUSTERGROUP_RECONCILER_WORKERS: "50",
    CONTENT_RECONCILER_WORKERS: "50",
  });
  // --disable-bootstrap: no "local" Cluster for the management cluster itself (it runs no agent here).
  launch(run, "agentmanagement", "fleetcontroller", ["agentmanagement", "--disable-bootstrap"], {
    KUBECONFIG: mgmtConfig,
    NAMESPACE: SYSTEM,
    ...ELECTION,
    FLEET_AGENT_REPLICA_COUNT: "1",
    // What the agent bundle it writes passes on to each agent (the chart's agent.leaderElection values).
    FLEET_AGENT_ELECTION_LEASE_DURATION: "30s",
    FLEET_AGENT_ELECTION_RENEW_DEADLINE: "25s",
    FLEET_AGENT_ELECTION_RETRY_PERIOD: "10s",
  });
  const values = await registrationValues(run, deadline);
  for (const c of run.downstream) {
    await bootstrapAgent(c, values);
    launch(run, `fleetagent-${c.name}`, "fleetagent", ["--leader-elect=false"], {
      KUBECONFIG: c.kubeconfig,
      NAMESPACE: SYSTEM,
      FLEET_AGENT_METRICS_BIND_ADDRESS: "0",
      FLEET_AGENT_PROBE_BIND_ADDRESS: "0",
      BUNDLEDEPLOYMENT_RECONCILER_WORKERS: "50",
      DRIFT_RECONCILER_WORKERS: "50",
      ...ELECTION,
    });
  }
  for (;;) {
    checkAlive(run);
    const clusters = await kubeList(run.mgmt, `${FLEET_API}/namespaces/${WORKSPACE}/clusters`);
    const agentBundles = await kubeList(run.mgmt, `${FLEET_API}/bundledeployments`);
    const checkedIn = clusters.filter((c: any) => c.status?.agent?.lastSeen).length;
    const ready = agentBundles.filter((bd: any) => bd.status?.ready).length;
    if (checkedIn === run.downstream.length && agentBundles.length === run.downstream.length && ready === agentBundles.length) break;
    if (Date.now() > deadline) {
      throw new Error(
        `Fleet's agents: ${checkedIn} of ${run.downstream.length} checked in, ${ready} of ${agentBundles.length} agent bundles ready after ` +
          `${timeoutMs / 1000} s; last lines of fleetagent-${run.downstream[0].name}.log:\n${logTail(run, `fleetagent-${run.downstream[0].name}`)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return performance.now() - t0;
}

function checkAlive(run: FleetRun): void {
  for (const p of run.pids) if (!isRunning(p.pid)) throw new Error(`Fleet's ${p.name} exited; last lines of ${p.name}.log:\n${logTail(run, p.name)}`);
}

/** Times `fleet apply` met a write conflict and was run again, per run (reported with the results). */
export const FLEET_APPLY_RETRIES = 5;

/**
 * `fleet apply -n fleet-default --targets-file FILE NAME PATH...` in `cwd`, as Fleet's gitjob runs it.
 * When Fleet's controller updates a Bundle between `fleet apply`'s read and write, the apply fails with
 * a conflict ("the object has been modified"); the gitjob's Job is then run again, and so is this, up
 * to FLEET_APPLY_RETRIES times. Resolves to the number of retries it needed.
 */
export async function fleetApply(run: FleetRun, cwd: string, name: string, paths: string[], targetsFile: string): Promise<number> {
  for (let retries = 0; ; retries++) {
    try {
      await promisify(execFile)(path.join(run.bin, "fleet"), ["apply", "-n", WORKSPACE, "--targets-file", targetsFile, name, ...paths], {
        cwd,
        env: { PATH: process.env.PATH ?? "", HOME: run.dir, KUBECONFIG: run.mgmt.kubeconfig },
      });
      return retries;
    } catch (err) {
      const text = (err as { stderr?: string }).stderr ?? (err as Error).message;
      if (retries < FLEET_APPLY_RETRIES && /the object has been modified/.test(text)) continue;
      throw new Error(`fleet apply ${name} failed${retries ? ` after ${retries} retries` : ""}: ${text}`);
    }
  }
}

/** A targets file as Fleet's gitjob writes one from a GitRepo's targets (targets, and the same as restrictions). */
export function writeTargets(file: string, targets: object[]): string {
  fs.writeFileSync(file, JSON.stringify({ targets, targetRestrictions: targets }));
  return file;
}

/** User + system CPU seconds the Fleet processes have used so far (from /proc). */
export function fleetCpuSeconds(run: FleetRun): number {
  const tick = 100; // USER_HZ on Linux
  return run.pids.reduce((sum, p) => {
    try {
      const fields = fs
        .readFileSync(`/proc/${p.pid}/stat`, "utf8")
        .replace(/^.*\) /, "")
        .split(" ");
      return sum + (Number(fields[11]) + Number(fields[12])) / tick;
    } catch {
      return sum;
    }
  }, 0);
}

/** Resident memory of the Fleet processes, bytes. */
export function fleetMemory(run: FleetRun): number {
  return run.pids.reduce((sum, p) => {
    try {
      return sum + Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p.pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
    } catch {
      return sum;
    }
  }, 0);
}

export async function stopFleet(run: FleetRun): Promise<void> {
  await Promise.all(run.pids.map((p) => killGroup(p.pid)));
  run.pids = [];
}

export function logTail(run: FleetRun, name: string, lines = 15): string {
  const file = path.join(run.dir, `${name}.log`);
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").slice(-lines).join("\n") : "(no log)";
}
