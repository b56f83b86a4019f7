/**
 * The fleet's state and an operation's outcome as Prometheus's text exposition format 0.0.4, the format
 * node_exporter's textfile collector reads and the Pushgateway accepts: a pure function of the facts an
 * operation gathered. Labels stay bounded (stack, GitRepo, bundle, cluster, state, operation): a
 * deploymentId or commit changes with every deploy and would make a new series each time.
 */
import { DeploymentState, STATE_RANK } from "../reports/status";
import { PairCondition } from "../reports/vocabulary";

/** One bundle deployment (a pair) as an operation left it. */
export interface PairMetrics {
  gitRepo: string;
  bundle: string;
  /** "" for a bundle that failed before its clusters were known. */
  cluster: string;
  state: DeploymentState;
  /** Why, beside the state (reports/vocabulary.ts). */
  condition?: PairCondition;
  /** Objects its record holds; undefined when nothing was deployed. */
  objects?: number;
  /** When its current deploymentId was first deployed (ISO 8601, the record's deployedAt), if known. */
  deployedAt?: string;
}

/** A cluster as the operation's probe and the stack's record of it left it (automation/clusters/observed.ts). */
export interface ClusterMetrics {
  cluster: string;
  /** Paused in the stack file (`clusters[].paused`): its bundle deployments are left exactly as they are. */
  paused: boolean;
  /** Its API server did not answer this operation's probe; absent when nothing was probed (render mode). */
  offline?: boolean;
  /** When its API server last answered (ISO 8601), if ever. */
  lastSeen?: string;
}

export interface FleetStateMetrics {
  stack: string;
  /** When the operation read this state. */
  observedAt: Date;
  pairs: PairMetrics[];
  /** The stack file's clusters. */
  clusters?: ClusterMetrics[];
  /** Whether a rollback is pinned; undefined when the operation did not read the stack's runs. */
  pinned?: boolean;
}

export const OPERATIONS = ["up", "preview", "status", "refresh", "destroy"] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface RunMetrics {
  stack: string;
  operation: Operation;
  success: boolean;
  durationMs: number;
  finishedAt: Date;
  /** The engine's resources by step kind ("same", "create", "update", ...), when the engine ran. */
  engine?: Record<string, number>;
}

/** Every state, in Fleet's rank order: each pair has one series per state (1 for its own), as kube-state-metrics does. */
export const STATES = (Object.keys(STATE_RANK) as DeploymentState[]).sort((a, b) => STATE_RANK[b] - STATE_RANK[a]);

type Labels = Record<string, string>;
interface Family {
  name: string;
  help: string;
  samples: { labels: Labels; value: number }[];
}

/** A label value as the text format requires: backslash, double quote and line feed escaped. */
export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** HELP text escapes backslash and line feed only. */
function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** Go's float formatting as the parser reads it: integers without an exponent, NaN and infinities spelled out. */
function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return Number.isInteger(v) && Math.abs(v) < 1e21 ? v.toFixed(0) : String(v);
}

function render(families: Family[]): string {
  return families
    .filter((f) => f.samples.length)
    .map(
      (f) =>
        [
          `# HELP ${f.name} ${escapeHelp(f.help)}`,
          `# TYPE ${f.name} gauge`,
          ...f.samples.map((s) => {
            const labels = Object.entries(s.labels)
              .map(([k, v]) => `${k}="${escapeLabelValue(v)}"`)
              .join(",");
            return `${f.name}${labels ? `{${labels}}` : ""} ${formatValue(s.value)}`;
          }),
        ].join("\n") + "\n",
    )
    .join("");
}

const seconds = (d: Date) => d.getTime() / 1000;

/** The fleet's state: what `up` and `status` leave (one file, one Pushgateway group, per stack). */
export function fleetStateExposition(m: FleetStateMetrics): string {
  const pairs = worstPerPair(m.pairs);
  const pairLabels = (p: PairMetrics): Labels => ({ stack: m.stack, git_repo: p.gitRepo, bundle: p.bundle, cluster: p.cluster });
  const deployed = pairs.flatMap((p) => {
    const at = p.deployedAt ? Date.parse(p.deployedAt) : NaN;
    return Number.isFinite(at) ? [{ labels: pairLabels(p), value: at / 1000 }] : [];
  });
  return render([
    {
      name: "pulumi_fleet_bundledeployment_state",
      help: "Fleet's state of each bundle deployment (bundle on cluster): 1 for its state, 0 for the others.",
      samples: pairs.flatMap((p) => STATES.map((state) => ({ labels: { ...pairLabels(p), state }, value: p.state === state ? 1 : 0 }))),
    },
    {
      name: "pulumi_fleet_bundledeployment_condition",
      help: "1 for a bundle deployment's condition beside its state (Stalled, Offline, Paused, OffSchedule, Held); no series when it has none.",
      samples: pairs.flatMap((p) => (p.condition ? [{ labels: { ...pairLabels(p), condition: p.condition }, value: 1 }] : [])),
    },
    {
      name: "pulumi_fleet_bundledeployment_objects",
      help: "Kubernetes objects the bundle deployment holds, as its record says.",
      samples: pairs.flatMap((p) => (p.objects === undefined ? [] : [{ labels: pairLabels(p), value: p.objects }])),
    },
    {
      name: "pulumi_fleet_bundledeployment_drifted",
      help: "1 when objects of the bundle deployment were changed or deleted on the cluster since it was applied (state Modified), else 0.",
      samples: pairs.map((p) => ({ labels: pairLabels(p), value: p.state === "Modified" ? 1 : 0 })),
    },
    {
      name: "pulumi_fleet_bundledeployment_deployed_timestamp_seconds",
      help: "When the bundle deployment's current deploymentID was first deployed, in seconds since the epoch (its age: time() minus this).",
      samples: deployed,
    },
    {
      name: "pulumi_fleet_cluster_offline",
      help: "1 when the cluster's API server did not answer the operation that wrote this state (Offline), else 0.",
      samples: (m.clusters ?? []).flatMap((c) =>
        c.offline === undefined ? [] : [{ labels: { stack: m.stack, cluster: c.cluster }, value: c.offline ? 1 : 0 }],
      ),
    },
    {
      name: "pulumi_fleet_cluster_paused",
      help: "1 when the cluster is paused in the stack file (its bundle deployments left exactly as they are), else 0.",
      samples: (m.clusters ?? []).map((c) => ({ labels: { stack: m.stack, cluster: c.cluster }, value: c.paused ? 1 : 0 })),
    },
    {
      name: "pulumi_fleet_cluster_last_seen_timestamp_seconds",
      help: "When the cluster's API server last answered a probe, in seconds since the epoch (Fleet's Cluster status.agent.lastSeen).",
      samples: (m.clusters ?? []).flatMap((c) =>
        c.lastSeen ? [{ labels: { stack: m.stack, cluster: c.cluster }, value: Date.parse(c.lastSeen) / 1000 }] : [],
      ),
    },
    {
      name: "pulumi_fleet_rollback_pinned",
      help: "1 while a rollback is pinned (npm run rollback; the watcher holds until the next commit or --unpin), else 0.",
      samples: m.pinned === undefined ? [] : [{ labels: { stack: m.stack }, value: m.pinned ? 1 : 0 }],
    },
    {
      name: "pulumi_fleet_state_timestamp_seconds",
      help: "When the operation that wrote this state read it, in seconds since the epoch.",
      samples: [{ labels: { stack: m.stack }, value: seconds(m.observedAt) }],
    },
  ]);
}

/** An operation's outcome: one file, one Pushgateway group, per stack and operation. */
export function runExposition(r: RunMetrics): string {
  const labels = { stack: r.stack, operation: r.operation };
  return render([
    {
      name: "pulumi_fleet_run_success",
      help: "1 when the operation's last run succeeded, 0 when it failed (a failed bundle deployment fails an up).",
      samples: [{ labels, value: r.success ? 1 : 0 }],
    },
    {
      name: "pulumi_fleet_run_duration_seconds",
      help: "How long the operation's last run took, in seconds.",
      samples: [{ labels, value: r.durationMs / 1000 }],
    },
    {
      name: "pulumi_fleet_run_timestamp_seconds",
      help: "When the operation's last run ended, in seconds since the epoch.",
      samples: [{ labels, value: seconds(r.finishedAt) }],
    },
    {
      name: "pulumi_fleet_engine_resources",
      help: "The Pulumi engine's resources in the operation's last run, by step (same, create, update, delete, replace, ...).",
      samples: Object.keys(r.engine ?? {})
        .sort()
        .map((step) => ({ labels: { ...labels, step }, value: r.engine![step] })),
    },
  ]);
}

/** One entry per pair, sorted; a pair given twice keeps its worst state (a series must appear once). */
function worstPerPair(list: PairMetrics[]): PairMetrics[] {
  const byKey = new Map<string, PairMetrics>();
  for (const p of list) {
    const seen = byKey.get(pairKey(p));
    // A condition is a fact beside the state: kept whichever report of the pair has the worse state.
    const worse = !seen || STATE_RANK[p.state] > STATE_RANK[seen.state] ? p : seen;
    const condition = worse.condition ?? seen?.condition ?? p.condition;
    byKey.set(pairKey(p), condition ? { ...worse, condition } : worse);
  }
  return [...byKey].sort(([a], [b]) => compareKeys(a, b)).map(([, p]) => p);
}

const pairKey = (p: PairMetrics) => `${p.gitRepo}\u0000${p.bundle}\u0000${p.cluster}`;
const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
