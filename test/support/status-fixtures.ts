/**
 * A known fleet state for the status page tests, built by hand (no engine): every Fleet state at
 * least once, a pair no target selects, a cluster in no group, an unreachable cluster, and a message
 * with markup in it that must come out as text.
 */
import { DeploymentState, DeploymentStatus, STATE_RANK, StatusReport } from "../../automation/reports/status";

export const INJECTION = `"<script>document.title='owned'</script>" & <b>bold</b>`;

const ID = (bundle: string, cluster: string) =>
  `s-${bundle.padEnd(12, "0").slice(0, 12)}abcdef0123456789abcdef0123456789abcdef012345:${cluster.padEnd(8, "f").slice(0, 8)}`;

/** [gitRepo, bundle, cluster, state, message] */
const ROWS: [string, string, string, DeploymentState, string][] = [
  ["apps", "web", "dev-1", "Ready", ""],
  ["apps", "web", "dev-2", "Ready", ""],
  ["apps", "web", "prod-eu-1", "Ready", ""],
  ["apps", "web", "prod-eu-2", "Modified", `modified Deployment apps/web (spec.replicas); ${INJECTION}`],
  ["apps", "web", "prod-us-1", "Ready", ""],
  ["apps", "api", "dev-1", "WaitApplied", "a newer deploymentId waits for `up`"],
  ["apps", "api", "dev-2", "Ready", ""],
  ["apps", "api", "prod-eu-1", "Ready", ""],
  ["apps", "api", "prod-eu-2", "Ready", ""],
  ["apps", "api", "prod-us-1", "ErrApplied", "the last update failed on this cluster"],
  ["apps", "worker", "prod-eu-1", "NotReady", "Deployment apps/worker: 1/3 ready"],
  ["apps", "worker", "prod-eu-2", "Ready", ""],
  ["apps", "worker", "prod-us-1", "Pending", "not deployed yet"],
  ["infra", "ingress", "prod-eu-1", "Ready", ""],
  ["infra", "ingress", "prod-eu-2", "Ready", ""],
  ["infra", "ingress", "prod-us-1", "Ready", ""],
  ["infra", "monitoring", "dev-1", "Ready", ""],
  ["infra", "monitoring", "dev-2", "OutOfSync", "paused: a newer deploymentId waits"],
  ["infra", "monitoring", "prod-eu-1", "Ready", ""],
  ["infra", "monitoring", "prod-eu-2", "Ready", ""],
  ["infra", "monitoring", "prod-us-1", "Ready", ""],
  ["infra", "monitoring", "edge-1", "NotReady", "cluster unreachable: connect ECONNREFUSED 10.0.0.7:6443"],
];

const CLUSTERS: { name: string; groups: string[]; labels: Record<string, string> }[] = [
  { name: "dev-1", groups: ["dev"], labels: { env: "dev", region: "eu-west" } },
  { name: "dev-2", groups: ["dev"], labels: { env: "dev", region: "us-east" } },
  { name: "edge-1", groups: [], labels: { region: "eu-west" } },
  { name: "prod-eu-1", groups: ["prod"], labels: { env: "prod", region: "eu-west" } },
  { name: "prod-eu-2", groups: ["prod"], labels: { env: "prod", region: "eu-west" } },
  { name: "prod-us-1", groups: ["prod"], labels: { env: "prod", region: "us-east" } },
];

/** Expected counts of the known fleet: 22 deployments in 6 clusters x 5 bundles = 30 cells. */
export const KNOWN_COUNTS = { ErrApplied: 1, WaitApplied: 1, Modified: 1, OutOfSync: 1, Pending: 1, NotReady: 2, Ready: 15, NotTargeted: 8 };

const worst = (items: DeploymentStatus[]): DeploymentState =>
  items.reduce<DeploymentState>((w, d) => (STATE_RANK[d.state] > STATE_RANK[w] ? d.state : w), "Ready");

export function knownFleetReport(): StatusReport {
  const deployments: DeploymentStatus[] = ROWS.map(([gitRepo, bundle, cluster, state, message]) => ({
    gitRepo,
    bundle,
    cluster,
    state,
    message,
    deploymentId: ID(bundle, cluster),
    ...(state === "Pending" ? {} : { appliedDeploymentId: state === "WaitApplied" || state === "OutOfSync" ? ID(bundle, "old") : ID(bundle, cluster) }),
  }));
  const bundles = [...new Set(deployments.map((d) => `${d.gitRepo}/${d.bundle}`))].sort().map((k) => {
    const items = deployments.filter((d) => `${d.gitRepo}/${d.bundle}` === k);
    return {
      gitRepo: items[0].gitRepo,
      bundle: items[0].bundle,
      state: worst(items),
      readyClusters: items.filter((d) => d.state === "Ready").length,
      desiredReadyClusters: items.length,
    };
  });
  const gitRepos = ["apps", "infra"].map((g) => {
    const items = deployments.filter((d) => d.gitRepo === g);
    const clusters = [...new Set(items.map((d) => d.cluster))];
    const ready = clusters.filter((c) => items.every((d) => d.cluster !== c || d.state === "Ready")).length;
    return {
      gitRepo: g,
      commit: g === "apps" ? "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c" : "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d",
      state: worst(items),
      readyClusters: ready,
      desiredReadyClusters: clusters.length,
    };
  });
  const clusters = CLUSTERS.map((c) => {
    const items = deployments.filter((d) => d.cluster === c.name);
    return {
      cluster: c.name,
      state: worst(items),
      readyBundles: items.filter((d) => d.state === "Ready").length,
      desiredReadyBundles: items.length,
      labels: c.labels,
      groups: c.groups,
      agent: {
        image: c.name === "prod-us-1" ? "registry.example.com/rancher/fleet-agent:v0.13.0" : "rancher/fleet-agent:v0.13.1",
        configHash: `${c.name.length}a7f3c9e2b14d8f60a7f3c9e2b14d8f60a7f3c9e2b14d8f60a7f3c9e2b14d8f6`.slice(0, 64),
        pinned: c.name === "prod-us-1",
      },
      reachable: c.name !== "edge-1",
      ...(c.name === "edge-1" ? { unreachableReason: "connect ECONNREFUSED 10.0.0.7:6443" } : {}),
    };
  });
  return { stack: "prod", deployments, bundles, gitRepos, clusters, takenAt: "2026-05-04T09:30:00.000Z" };
}
