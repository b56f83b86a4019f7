/**
 * Independent local Kubernetes clusters for end-to-end tests and local trials: per cluster its own etcd,
 * kube-apiserver, kube-controller-manager (Deployment, ReplicaSet, garbage collector, namespace and
 * service-account controllers), kube-scheduler and kwok (which plays one node and moves scheduled pods
 * to Running, since no container runtime or image can be had here). All on loopback, data in a
 * temporary directory, binaries built by tools/build-clusters.sh.
 *
 * Processes run detached in their own process groups with pid files in clusters.json, so
 * `npm run clusters -- up` can return and `down` (or the mocha fixture) can stop them later.
 */
import { execFileSync, spawn } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { kubeGet, KubeEndpoint, kubeRequest } from "./kube-client";
import { PROJECT_DIR } from "../../core/base/project-dir";

export const COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"] as const;
export type Component = (typeof COMPONENTS)[number];

export interface LocalCluster extends KubeEndpoint {
  name: string;
  dir: string;
  /** Path of a kubeconfig with the admin token and the server's CA inlined. */
  kubeconfig: string;
  ports: { etcdClient: number; etcdPeer: number; apiserver: number };
  pids: Partial<Record<Component, number>>;
}

export interface LocalClusters {
  baseDir: string;
  binDir: string;
  clusters: LocalCluster[];
  /** Wall time of the start, from the first process spawned to the last cluster ready. */
  startupMs: number;
}

const STATE_FILE = "clusters.json";
export const DEFAULT_CLUSTERS_DIR = path.join(os.tmpdir(), "pulumi-fleet-clusters");

/**
 * tools/build-clusters.sh: builds (cold: many minutes) or reuses the binaries; their directory.
 * `kubectl` also builds kubectl of the same release (the benchmarks compare with it).
 */
export function clusterBinaries(options: { kubectl?: boolean } = {}): string {
  try {
    return execFileSync("bash", [path.join(PROJECT_DIR, "tools/build-clusters.sh"), "--bin-dir", ...(options.kubectl ? ["--kubectl"] : [])], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
  } catch (err) {
    throw new Error(`the local cluster binaries could not be built (tools/build-clusters.sh: ${(err as Error).message.split("\n")[0]})`);
  }
}

export interface StartOptions {
  count?: number;
  names?: string[];
  baseDir?: string;
  binDir?: string;
  /** Per-step readiness limit (default 120 s: two cores, three API servers starting at once). */
  timeoutMs?: number;
}

export async function startLocalClusters(options: StartOptions = {}): Promise<LocalClusters> {
  const names = options.names ?? Array.from({ length: options.count ?? 3 }, (_, i) => `local-${i + 1}`);
  const baseDir = options.baseDir ?? DEFAULT_CLUSTERS_DIR;
  if (readLocalClusters(baseDir)) throw new Error(`local clusters are already running from ${baseDir} (stop them first: npm run clusters -- down)`);
  const binDir = options.binDir ?? clusterBinaries();
  fs.rmSync(baseDir, { recursive: true, force: true });
  fs.mkdirSync(baseDir, { recursive: true });
  fs.writeFileSync(path.join(baseDir, "kwok-stages.yaml"), fs.readFileSync(path.join(__dirname, "kwok-stages.yaml")));
  const ports = await freePorts(names.length * 3);
  const clusters: LocalCluster[] = names.map((name, i) => newCluster(baseDir, name, ports.slice(i * 3, i * 3 + 3)));
  const state: LocalClusters = { baseDir, binDir, clusters, startupMs: 0 };
  pendingStates.set(baseDir, state);
  const started = Date.now();
  try {
    await Promise.all(clusters.map((c) => bootCluster(state, c, options.timeoutMs ?? 120_000)));
  } catch (err) {
    await stopLocalClusters(baseDir);
    throw err;
  }
  state.startupMs = Date.now() - started;
  writeState(state);
  return state;
}

export function readLocalClusters(baseDir = DEFAULT_CLUSTERS_DIR): LocalClusters | undefined {
  const file = path.join(baseDir, STATE_FILE);
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as LocalClusters) : undefined;
}

/**
 * Stops every process of every cluster (TERM, then KILL after 10 s) and removes the data. The clusters
 * stop at once, each from the top down (kwok and the controllers, then the API server, then etcd): an
 * API server whose etcd went first does not end on TERM and waited out the 10 s.
 */
export async function stopLocalClusters(baseDir = DEFAULT_CLUSTERS_DIR): Promise<void> {
  const state = readLocalClusters(baseDir) ?? pendingStates.get(baseDir);
  if (state) {
    const clients = COMPONENTS.filter((comp) => comp !== "kube-apiserver" && comp !== "etcd");
    await Promise.all(
      state.clusters.map(async (c) => {
        await Promise.all(clients.map((comp) => stopComponent(state, c, comp)));
        await stopComponent(state, c, "kube-apiserver");
        await stopComponent(state, c, "etcd");
      }),
    );
  }
  pendingStates.delete(baseDir);
  fs.rmSync(baseDir, { recursive: true, force: true });
}

/** Stops one component of one cluster (for example its API server, to make it unreachable). */
export async function stopComponent(state: LocalClusters, cluster: LocalCluster, component: Component): Promise<void> {
  const pid = cluster.pids[component];
  if (!pid) return;
  await killGroup(pid);
  delete cluster.pids[component];
  delete stateCluster(state, cluster).pids[component];
  if (fs.existsSync(path.join(state.baseDir, STATE_FILE))) writeState(state);
}

/** Starts a stopped component again with its original flags and data, and waits until it serves. */
export async function startComponent(state: LocalClusters, cluster: LocalCluster, component: Component, timeoutMs = 120_000): Promise<void> {
  launch(state, cluster, component);
  // Recorded in the state written, whichever copy of the cluster the caller holds: whoever stops the
  // clusters reads the pids from it (a copy read before was updated alone, and its process outlived the run).
  stateCluster(state, cluster).pids[component] = cluster.pids[component];
  writeState(state);
  if (component === "kube-apiserver") await waitForApiServer(cluster, timeoutMs);
}

/** The state's own entry of a cluster (a caller may hold a copy read earlier). */
function stateCluster(state: LocalClusters, cluster: LocalCluster): LocalCluster {
  return state.clusters.find((c) => c.name === cluster.name) ?? cluster;
}

/** Resident memory (bytes) of every running process of the clusters, from /proc. */
export function residentMemory(state: LocalClusters): { total: number; byComponent: Record<string, number> } {
  const byComponent: Record<string, number> = {};
  let total = 0;
  for (const c of state.clusters) {
    for (const [comp, pid] of Object.entries(c.pids)) {
      const status = readProcStatus(pid!);
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status ?? "")?.[1] ?? 0);
      byComponent[comp] = (byComponent[comp] ?? 0) + kb * 1024;
      total += kb * 1024;
    }
  }
  return { total, byComponent };
}

export function isRunning(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return !/State:\s+Z/.test(readProcStatus(pid) ?? "");
  } catch {
    return false;
  }
}

// ---- internals ----

/** States being started (not yet in clusters.json), so a failed start can still be cleaned up. */
const pendingStates = new Map<string, LocalClusters>();

function newCluster(baseDir: string, name: string, [etcdClient, etcdPeer, apiserver]: number[]): LocalCluster {
  const dir = path.join(baseDir, name);
  fs.mkdirSync(path.join(dir, "pki"), { recursive: true });
  const token = crypto.randomBytes(24).toString("hex");
  fs.writeFileSync(path.join(dir, "tokens.csv"), `${token},admin,admin-uid,"system:masters"\n`, { mode: 0o600 });
  const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
  fs.writeFileSync(path.join(dir, "sa.key"), privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  return {
    name,
    dir,
    token,
    ca: "",
    server: `https://127.0.0.1:${apiserver}`,
    kubeconfig: path.join(dir, "kubeconfig"),
    ports: { etcdClient, etcdPeer, apiserver },
    pids: {},
  };
}

async function bootCluster(state: LocalClusters, c: LocalCluster, timeoutMs: number): Promise<void> {
  launch(state, c, "etcd");
  await waitFor(`${c.name}: etcd health`, timeoutMs, c, "etcd", async () => {
    const res = await fetch(`http://127.0.0.1:${c.ports.etcdClient}/health`);
    return res.ok && ((await res.json()) as { health?: string }).health === "true";
  });
  launch(state, c, "kube-apiserver");
  await waitForApiServer(c, timeoutMs);
  writeKubeconfig(c);
  for (const comp of ["kube-controller-manager", "kube-scheduler", "kwok"] as const) launch(state, c, comp);
  await kubeRequest(c, "POST", "/api/v1/nodes", { body: fakeNode("node-1") });
  // Ready node = kwok works; the default ServiceAccount = the controller manager works.
  await waitFor(`${c.name}: node Ready (kwok)`, timeoutMs, c, "kwok", async () => {
    const node = await kubeGet(c, "/api/v1/nodes/node-1");
    return node?.status?.conditions?.some((x: any) => x.type === "Ready" && x.status === "True") ?? false;
  });
  // The NodeRestriction admission adds a not-ready taint to every new node; the node lifecycle
  // controller would lift it, but it is off (no kubelet heartbeats), so lift it here.
  await kubeRequest(c, "PATCH", "/api/v1/nodes/node-1", { body: { spec: { taints: null } } });
  await waitFor(
    `${c.name}: default ServiceAccount (kube-controller-manager)`,
    timeoutMs,
    c,
    "kube-controller-manager",
    async () => (await kubeGet(c, "/api/v1/namespaces/default/serviceaccounts/default")) !== undefined,
  );
}

async function waitForApiServer(c: LocalCluster, timeoutMs: number): Promise<void> {
  const crt = path.join(c.dir, "pki", "apiserver.crt");
  await waitFor(`${c.name}: kube-apiserver /readyz`, timeoutMs, c, "kube-apiserver", async () => {
    if (!fs.existsSync(crt)) return false;
    c.ca = fs.readFileSync(crt, "utf8");
    return (await kubeRequest<string>(c, "GET", "/readyz", { timeoutMs: 5000 })) === "ok";
  });
}

function launch(state: LocalClusters, c: LocalCluster, comp: Component): void {
  const log = fs.openSync(path.join(c.dir, `${comp}.log`), "a");
  const child = spawn(path.join(state.binDir, comp), componentArgs(state, c, comp), {
    detached: true,
    stdio: ["ignore", log, log],
    // Clusters started outside a test run name a run of their own (test/support/processes.ts), so a leftover
    // check of a test run on the same machine does not count them.
    env: { ...process.env, GOMAXPROCS: "2", PULUMI_FLEET_TEST_RUN: process.env.PULUMI_FLEET_TEST_RUN ?? `clusters ${state.baseDir}` },
  });
  fs.closeSync(log);
  child.unref();
  if (!child.pid) throw new Error(`${c.name}: ${comp} did not start (${path.join(state.binDir, comp)})`);
  c.pids[comp] = child.pid;
}

function componentArgs(state: LocalClusters, c: LocalCluster, comp: Component): string[] {
  const kubeconfig = `--kubeconfig=${c.kubeconfig}`;
  switch (comp) {
    case "etcd":
      return [
        `--name=${c.name}`,
        `--data-dir=${path.join(c.dir, "etcd")}`,
        "--unsafe-no-fsync",
        `--listen-client-urls=http://127.0.0.1:${c.ports.etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${c.ports.etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${c.ports.etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${c.ports.etcdPeer}`,
        `--initial-cluster=${c.name}=http://127.0.0.1:${c.ports.etcdPeer}`,
        "--auto-compaction-retention=1",
        "--quota-backend-bytes=1073741824",
        "--listen-metrics-urls=",
      ];
    case "kube-apiserver":
      return [
        `--etcd-servers=http://127.0.0.1:${c.ports.etcdClient}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${c.ports.apiserver}`,
        `--cert-dir=${path.join(c.dir, "pki")}`,
        `--token-auth-file=${path.join(c.dir, "tokens.csv")}`,
        "--authorization-mode=Node,RBAC",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${path.join(c.dir, "sa.key")}`,
        `--service-account-signing-key-file=${path.join(c.dir, "sa.key")}`,
        "--service-cluster-ip-range=10.96.0.0/16",
        "--endpoint-reconciler-type=none",
        "--allow-privileged=true",
        "--profiling=false",
      ];
    case "kube-controller-manager":
      return [
        kubeconfig,
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        "--secure-port=0",
        `--service-account-private-key-file=${path.join(c.dir, "sa.key")}`,
        `--root-ca-file=${path.join(c.dir, "pki", "apiserver.crt")}`,
        // No kubelet heartbeats: the node lifecycle controller would mark the kwok node NotReady and evict its pods.
        "--controllers=*,-node-lifecycle-controller",
      ];
    case "kube-scheduler":
      return [kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0"];
    case "kwok":
      return [kubeconfig, "--manage-all-nodes=true", "--cidr=10.244.0.1/16", "--node-ip=10.1.0.1", `--config=${path.join(state.baseDir, "kwok-stages.yaml")}`];
  }
}

function writeKubeconfig(c: LocalCluster): void {
  const ca = Buffer.from(c.ca).toString("base64");
  fs.writeFileSync(
    c.kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      `- name: ${c.name}`,
      "  cluster:",
      `    server: ${c.server}`,
      `    certificate-authority-data: ${ca}`,
      "users:",
      "- name: admin",
      "  user:",
      `    token: ${c.token}`,
      "contexts:",
      `- name: ${c.name}`,
      "  context:",
      `    cluster: ${c.name}`,
      "    user: admin",
      `current-context: ${c.name}`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
}

function fakeNode(name: string): object {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      annotations: { "node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake" },
      labels: { "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", type: "kwok" },
    },
    status: { allocatable: { cpu: "32", memory: "256Gi", pods: "110" }, capacity: { cpu: "32", memory: "256Gi", pods: "110" } },
  };
}

async function waitFor(what: string, timeoutMs: number, c: LocalCluster, comp: Component, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    if (!isRunning(c.pids[comp])) throw new Error(`${what}: ${comp} exited; last lines of ${comp}.log:\n${logTail(c, comp)}`);
    try {
      if (await check()) return;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not ready after ${timeoutMs / 1000} s (${last || "no error"}); last lines of ${comp}.log:\n${logTail(c, comp)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function logTail(c: LocalCluster, comp: Component): string {
  const file = path.join(c.dir, `${comp}.log`);
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").slice(-15).join("\n") : "(no log)";
}

/** SIGTERM to the process group `pid` leads, SIGKILL after 10 s, and back once the leader is gone. */
export async function killGroup(pid: number): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      /* already gone */
    }
  };
  signal("SIGTERM");
  const deadline = Date.now() + 10_000;
  while (isRunning(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isRunning(pid)) signal("SIGKILL");
  while (isRunning(pid)) await new Promise((r) => setTimeout(r, 50));
}

function readProcStatus(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
}

function writeState(state: LocalClusters): void {
  fs.writeFileSync(path.join(state.baseDir, STATE_FILE), JSON.stringify(state, null, 2));
}

/** Distinct free loopback ports: all held open at once so none is handed out twice. */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once("error", reject);
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}
