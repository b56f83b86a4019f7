/**
 * Rancher Fleet v0.16.0 run as plain processes on local clusters, for `npm run bench -- fleet`
 * (bench/fleet.ts) only: its CRDs on a management cluster, one Cluster per downstream cluster, the
 * controller, one agent per downstream cluster, and `fleet apply`. The binaries come from
 * tools/build-fleet.sh (built from Fleet's Go module into the tool cache).
 *
 * Registration: Fleet's handshake (a ClusterRegistrationToken, the agent's bootstrap secret, the
 * agentmanagement controller creating the cluster's namespace, service account and token secret)
 * needs agentmanagement, which would also deploy Fleet's agent image into every downstream cluster;
 * no image can be had here. So its result is written directly, as the registration would leave it:
 *  - management: the Cluster in fleet-default, its namespace `cluster-<name>` (annotated as
 *    agentmanagement annotates it), and the Cluster's status.namespace pointing at it;
 *  - downstream: cattle-fleet-system/fleet-agent, the Secret the agent reads first (a kubeconfig
 *    for the management cluster in that namespace, clusterName, clusterNamespace) and, when it
 *    exists and works, uses without registering; and the agent's ConfigMap.
 * The kubeconfig carries the management cluster's admin token, where registration would issue one
 * for a service account bound to the cluster's namespace: more rights, the same requests.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { kubeGet, kubeRequest } from "../automation/kube-client";
import { LocalCluster } from "../automation/local-clusters";
import { builtToolPath } from "../core/tool-build";

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

const clusterNamespace = (c: LocalCluster) => `cluster-${c.name}`;

/** A kubeconfig for `server` with its admin token, whose context defaults to `namespace`. */
function kubeconfigText(c: LocalCluster, namespace?: string): string {
  return [
    "apiVersion: v1", "kind: Config",
    "clusters:", `- name: ${c.name}`, "  cluster:", `    server: ${c.server}`,
    `    certificate-authority-data: ${Buffer.from(c.ca).toString("base64")}`,
    "users:", "- name: admin", "  user:", `    token: ${c.token}`,
    "contexts:", `- name: ${c.name}`, "  context:", `    cluster: ${c.name}`, "    user: admin",
    ...(namespace ? [`    namespace: ${namespace}`] : []),
    `current-context: ${c.name}`, "",
  ].join("\n");
}

async function create(c: LocalCluster, collection: string, body: object): Promise<void> {
  await kubeRequest(c, "POST", collection, { body });
}

/** Fleet's CRDs, the workspace, the Clusters as registration leaves them, and each downstream cluster's agent credentials. */
export async function installFleet(run: FleetRun, labels: (i: number) => Record<string, string>): Promise<void> {
  const { mgmt } = run;
  const kubectl = (...args: string[]) => execFileSync(run.kubectl, ["--kubeconfig", mgmt.kubeconfig, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  kubectl("apply", "--server-side", "-f", path.join(run.bin, "..", "share", "crds.yaml"));
  kubectl("wait", "--for", "condition=established", "crd", "--all", "--timeout=120s");
  for (const ns of [SYSTEM, WORKSPACE]) await create(mgmt, "/api/v1/namespaces", { metadata: { name: ns } });
  for (const [i, c] of run.downstream.entries()) {
    await create(mgmt, `${FLEET_API}/namespaces/${WORKSPACE}/clusters`, {
      apiVersion: "fleet.cattle.io/v1alpha1", kind: "Cluster", metadata: { name: c.name, labels: labels(i) }, spec: {},
    });
    await create(mgmt, "/api/v1/namespaces", {
      metadata: {
        name: clusterNamespace(c), labels: { "fleet.cattle.io/managed": "true" },
        annotations: { "fleet.cattle.io/cluster-namespace": WORKSPACE, "fleet.cattle.io/cluster": c.name },
      },
    });
    await kubeRequest(mgmt, "PATCH", `${FLEET_API}/namespaces/${WORKSPACE}/clusters/${c.name}/status`, { body: { status: { namespace: clusterNamespace(c) } } });
    await create(c, "/api/v1/namespaces", { metadata: { name: SYSTEM } });
    await create(c, `/api/v1/namespaces/${SYSTEM}/configmaps`, { metadata: { name: "fleet-agent" }, data: { config: "{}" } });
    await create(c, `/api/v1/namespaces/${SYSTEM}/secrets`, {
      metadata: { name: "fleet-agent" },
      stringData: {
        kubeconfig: kubeconfigText(mgmt, clusterNamespace(c)), clusterNamespace: WORKSPACE, clusterName: c.name,
        deploymentNamespace: clusterNamespace(c),
      },
    });
  }
}

function launch(run: FleetRun, name: string, program: string, args: string[], env: Record<string, string>): void {
  const log = fs.openSync(path.join(run.dir, `${name}.log`), "a");
  const child = spawn(path.join(run.bin, program), args, {
    detached: true, stdio: ["ignore", log, log], env: { PATH: process.env.PATH ?? "", HOME: run.dir, GOMAXPROCS: "2", ...env },
  });
  fs.closeSync(log);
  child.unref();
  if (!child.pid) throw new Error(`${program} did not start`);
  run.pids.push({ name, pid: child.pid });
}

/**
 * The controller (core controllers only: no subcommand, so no gitjob, helmops or agentmanagement)
 * and one agent per downstream cluster, with the worker counts Fleet's chart sets. Returns once every
 * agent has checked in (its Cluster's status.agent.lastSeen is set).
 */
export async function startFleet(run: FleetRun, timeoutMs = 180_000): Promise<number> {
  const t0 = performance.now();
  const mgmtConfig = path.join(run.dir, "mgmt.kubeconfig");
  fs.writeFileSync(mgmtConfig, kubeconfigText(run.mgmt), { mode: 0o600 });
  launch(run, "fleetcontroller", "fleetcontroller", ["--disable-metrics"], {
    KUBECONFIG: mgmtConfig, NAMESPACE: SYSTEM, FLEET_HEALTHPROBE_BIND_ADDRESS: "0",
    // Read even when leader election is off (internal/cmd/options.go); the chart's values.
    CATTLE_ELECTION_LEASE_DURATION: "30s", CATTLE_ELECTION_RENEW_DEADLINE: "25s", CATTLE_ELECTION_RETRY_PERIOD: "10s",
    BUNDLE_RECONCILER_WORKERS: "50", BUNDLEDEPLOYMENT_RECONCILER_WORKERS: "50", CLUSTER_RECONCILER_WORKERS: "50",
    CLUSTERGROUP_RECONCILER_WORKERS: "50", CONTENT_RECONCILER_WORKERS: "50",
  });
  for (const c of run.downstream) {
    launch(run, `fleetagent-${c.name}`, "fleetagent", ["--leader-elect=false"], {
      KUBECONFIG: c.kubeconfig, NAMESPACE: SYSTEM, FLEET_AGENT_METRICS_BIND_ADDRESS: "0", FLEET_AGENT_PROBE_BIND_ADDRESS: "0",
      BUNDLEDEPLOYMENT_RECONCILER_WORKERS: "50", DRIFT_RECONCILER_WORKERS: "50",
      CATTLE_ELECTION_LEASE_DURATION: "30s", CATTLE_ELECTION_RENEW_DEADLINE: "25s", CATTLE_ELECTION_RETRY_PERIOD: "10s",
    });
  }
  const deadline = Date.now() + timeoutMs;
  for (const c of run.downstream) {
    for (;;) {
      for (const p of run.pids) if (!alive(p.pid)) throw new Error(`Fleet's ${p.name} exited; last lines of ${p.name}.log:\n${logTail(run, p.name)}`);
      const cluster = await kubeGet(run.mgmt, `${FLEET_API}/namespaces/${WORKSPACE}/clusters/${c.name}`);
      if (cluster?.status?.agent?.lastSeen) break;
      if (Date.now() > deadline) throw new Error(`Fleet's agent for ${c.name} did not check in within ${timeoutMs / 1000} s; last lines of its log:\n${logTail(run, `fleetagent-${c.name}`)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return performance.now() - t0;
}

/** `fleet apply -n fleet-default --targets-file FILE NAME PATH...` in `cwd`, as Fleet's gitjob runs it. */
export async function fleetApply(run: FleetRun, cwd: string, name: string, paths: string[], targetsFile: string): Promise<void> {
  try {
    await promisify(execFile)(path.join(run.bin, "fleet"), ["apply", "-n", WORKSPACE, "--targets-file", targetsFile, name, ...paths], {
      cwd, env: { PATH: process.env.PATH ?? "", HOME: run.dir, KUBECONFIG: path.join(run.dir, "mgmt.kubeconfig") },
    });
  } catch (err) {
    throw new Error(`fleet apply ${name} failed: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`);
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
      const fields = fs.readFileSync(`/proc/${p.pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ");
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
  for (const p of run.pids) {
    try {
      process.kill(-p.pid, "SIGTERM");
    } catch {
      /* gone */
    }
  }
  const deadline = Date.now() + 10_000;
  while (run.pids.some((p) => alive(p.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const p of run.pids) {
    try {
      process.kill(-p.pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
  run.pids = [];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/State:\s+Z/.test(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

export function logTail(run: FleetRun, name: string, lines = 15): string {
  const file = path.join(run.dir, `${name}.log`);
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").slice(-lines).join("\n") : "(no log)";
}
