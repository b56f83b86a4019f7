/**
 * The stack configuration (stacks/Pulumi.<env>.yaml, keys under `pulumi-fleet:`), typed and validated.
 * Every error names the stack file and the field path. Secret fields (kubeconfig, git credentials) are
 * plain strings here; the components wrap them with pulumi.secret, and nothing logs them.
 */
import * as path from "node:path";
import * as YAML from "yaml";
import { Field, isPlainObject } from "./reader";
import { readHelmOp } from "./helm-op";
import { GitRepoConfig, namespaceAllowed, readGitRepo } from "./git-repo";
import { readLabels, readName, readSecret } from "./fields";
import { FleetError } from "../base/errors";
import { readSelector } from "./selector";
import { LabelSelector } from "../model/selector";
import { readTargetCriteria } from "./target-criteria";
import { automaticShards, readShardOf, readShards, ShardOf, shardMembership, ShardSpec } from "./shards";
import { checkDownstreamNamespaces } from "./downstream-resources";
import { NotificationsConfig, readNotifications } from "./notifications";
import { MetricsConfig, readMetrics } from "./metrics";
import { CommitStatusConfig, readCommitStatus } from "./commit-status";
import { readHealthChecks } from "./health-checks";
import { HealthCheck } from "../model/pair";
import { readSchedules, ScheduleConfig } from "./schedules";
import { AgentSettings, parseAgentSettings } from "./agent-settings";
import { keysOf } from "./field-table";
import { CLUSTER_FIELDS, CLUSTER_GROUP_FIELDS, STACK_FIELDS } from "./stack-fields";

export const CONFIG_NAMESPACE = "pulumi-fleet";

export interface ClusterConfig {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  templateValues: Record<string, unknown>;
  /** Kubeconfig contents (a Pulumi secret in the stack file). */
  kubeconfig?: string;
  /** A context of the ambient kubeconfig, used when `kubeconfig` is not given. */
  context?: string;
  /** Decommissioning: let the provider drop this cluster's resources from state when it is unreachable. */
  deleteUnreachable: boolean;
  /**
   * Render mode only (a live cluster's are read from it): the Kubernetes version and extra API versions
   * charts see in `.Capabilities`, as Helm's --kube-version and --api-versions (default v1.25.0, as `fleet test`).
   */
  kubeVersion?: string;
  apiVersions?: string[];
  /** Per-cluster agent overrides (core/agent/effective.ts resolves them over the global ones). */
  agent?: AgentSettings;
  /** Paused (an incident): every runner leaves its bundle deployments, agent and namespaces exactly as they are (core/desired/holds.ts). */
  paused?: ClusterPause;
}

/** Why and by whom a cluster is paused (Fleet's Cluster `spec.paused`, with the words every report says). */
export interface ClusterPause {
  reason: string;
  by?: string;
  since?: string;
}

export interface ClusterGroupConfig {
  name: string;
  labels: Record<string, string>;
  selector: LabelSelector;
}

export interface StackConfig {
  /** The stack file, for error messages. */
  file: string;
  fleetVersion?: string;
  /** When set, every cluster renders its manifests to <renderDir>/<cluster> instead of applying them. */
  renderDir?: string;
  clusters: ClusterConfig[];
  clusterGroups: ClusterGroupConfig[];
  gitRepos: GitRepoConfig[];
  /** Global agent settings; {} when the stack file sets none. */
  agent: AgentSettings;
  /** The environment is split into these shards (core/config/shards.ts); each shard is a stack of its own. */
  shards?: ShardSpec[];
  /** Set in a shard's stack: `clusters` then holds only this shard's clusters. */
  shard?: ShardContext;
  /** Where `up` and `status` send their events (core/config/notifications.ts). */
  notifications?: NotificationsConfig;
  /** Where the operations leave their Prometheus metrics (core/config/metrics.ts). */
  metrics?: MetricsConfig;
  /** The git host each deployed commit gets its status on (core/config/commit-status.ts). */
  commitStatus?: CommitStatusConfig;
  /** The operator's readiness rule per kind (core/config/health-checks.ts); absent when none. */
  healthChecks?: HealthCheck[];
  /** Maintenance windows (core/config/schedules.ts): outside its window a cluster keeps what it has. */
  schedules?: ScheduleConfig[];
  /** Failures in a row with the same inputs after which a pair is Stalled (core/plan/stalled.ts); absent: the default, 0: never. */
  stalledAfter?: number;
}

/** A shard stack's own view: its name, and the definition's clusters that belong to the other shards. */
export interface ShardContext extends ShardOf {
  /** Clusters of the other shards: their records in this stack's outputs are theirs now (moved away). */
  elsewhere: string[];
  /** Those clusters' configuration: whether a GitRepo still deploys anywhere is a question about the whole environment. */
  otherClusters: ClusterConfig[];
}

export const TOP_LEVEL_KEYS = keysOf(STACK_FIELDS);

/**
 * Validates raw configuration. `raw` maps keys without the `pulumi-fleet:` prefix to values;
 * relative local repository paths and renderDir are resolved against `baseDir` (the project root).
 */
export function parseStackConfig(raw: Record<string, unknown>, file: string, baseDir: string): StackConfig {
  const root = new Field(raw, "", { file }).object(TOP_LEVEL_KEYS);
  const clusters = root.child("clusters").items().map(readCluster);
  const clusterGroups = root.child("clusterGroups").items().map(readClusterGroup);
  const gitRepos = root
    .child("gitRepos")
    .items()
    .map((f) => readGitRepo(f, baseDir));
  uniqueNames(root.child("clusters"), clusters);
  uniqueNames(root.child("clusterGroups"), clusterGroups);
  uniqueNames(root.child("gitRepos"), gitRepos);
  checkDownstreamNamespaces(root.child("gitRepos"), gitRepos, namespaceAllowed);
  // A HelmOp is a source like a GitRepo (its own team boundary), so it joins the list every stage reads; its bundle is named after it.
  const helmOps = root.child("helmOps").items().map(readHelmOp);
  uniqueNames(root.child("helmOps"), helmOps);
  const gitRepoNames = new Set(gitRepos.map((g) => g.name));
  helmOps.forEach((h, i) => {
    if (gitRepoNames.has(h.name))
      root
        .child("helmOps")
        .index(i)
        .child("name")
        .fail(`${JSON.stringify(h.name)} is also a gitRepos name: a HelmOp and a GitRepo each need their own`);
  });
  gitRepos.push(...helmOps);
  const renderDir = root.child("renderDir").optString();
  const fleetVersion = root.child("fleetVersion").optString();
  const config: StackConfig = {
    file,
    fleetVersion,
    renderDir: renderDir ? path.resolve(baseDir, renderDir) : undefined,
    clusters,
    clusterGroups,
    gitRepos,
    agent: parseAgentSettings(root.child("agent")),
    ...(root.child("notifications").present ? { notifications: readNotifications(root.child("notifications")) } : {}),
    ...(root.child("metrics").present ? { metrics: readMetrics(root.child("metrics"), baseDir) } : {}),
    ...(root.child("commitStatus").present
      ? {
          commitStatus: readCommitStatus(
            root.child("commitStatus"),
            gitRepos.filter((g) => !g.helmOp).map((g) => g.name),
          ),
        }
      : {}),
  };
  const healthChecks = readHealthChecks(root.child("healthChecks"));
  if (healthChecks.length) config.healthChecks = healthChecks;
  const schedules = readSchedules(root.child("schedules"), (t) => readTargetCriteria(t));
  if (schedules.length) config.schedules = schedules;
  const stalledAfter = root.child("stalledAfter").optConfigNumber();
  if (stalledAfter !== undefined && (!Number.isInteger(stalledAfter) || stalledAfter < 0))
    root.child("stalledAfter").fail(`must be a whole number of failures, 0 or more (0: a failing pair is never Stalled; got ${stalledAfter})`);
  if (stalledAfter !== undefined) config.stalledAfter = stalledAfter;
  if (!config.renderDir) {
    clusters.forEach((c, i) => {
      for (const key of ["kubeVersion", "apiVersions"] as const) {
        if (c[key] !== undefined)
          root
            .child("clusters")
            .index(i)
            .child(key)
            .fail("applies in render mode only (renderDir): a live cluster's version and API versions are read from it, as Fleet's agent does");
      }
    });
  }
  return withShards(config, root);
}

/** Checks the shard rule (every cluster in exactly one shard) and, in a shard's stack, keeps only its clusters. */
function withShards(config: StackConfig, root: Field): StackConfig {
  const listed = readShards(root.child("shards"));
  if (listed && root.child("clustersPerShard").present)
    root.child("clustersPerShard").fail("give either shards (a rule per shard) or clustersPerShard (shards chosen automatically), not both");
  if (listed && root.child("shardBy").present) root.child("shardBy").fail("applies with clustersPerShard only, not with a shards: rule");
  const shards = listed ?? automaticShards(root.child("clustersPerShard"), root.child("shardBy"), config.clusters);
  const shard = readShardOf(root.child("shard"));
  if (!shards) {
    if (shard)
      root
        .child("shard")
        .fail("names a shard, but there is no shards: rule nor clustersPerShard (a shard's stack file is a copy of its environment's, which has one)");
    return config;
  }
  const definitionFile = shard ? stackFileFor(shard.environment) : config.file;
  const membership = shardMembership(config.clusters, config.clusterGroups, shards, definitionFile);
  if (!shard) return { ...config, shards };
  if (!shards.some((s) => s.name === shard.name))
    root
      .child("shard")
      .child("name")
      .fail(`${JSON.stringify(shard.name)} is not a shard of ${definitionFile} (${shards.map((s) => s.name).join(", ")})`);
  return shardView(config, shards, membership, shard);
}

/** A shard's stack configuration from its environment's: only its clusters, the others' as context. */
export function shardView(config: StackConfig, shards: ShardSpec[], membership: Map<string, string>, shard: ShardOf): StackConfig {
  const mine = config.clusters.filter((c) => membership.get(c.name) === shard.name);
  const others = config.clusters.filter((c) => membership.get(c.name) !== shard.name);
  return { ...config, shards, clusters: mine, shard: { ...shard, elsewhere: others.map((c) => c.name), otherClusters: others } };
}

function uniqueNames(list: Field, items: { name: string }[]): void {
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    const first = seen.get(item.name);
    if (first !== undefined) list.index(i).fail(`duplicate name ${JSON.stringify(item.name)} (also at index ${first})`);
    seen.set(item.name, i);
  });
}

function readPause(f: Field): ClusterPause {
  f.object(["reason", "by", "since"]);
  const reason = f.child("reason").optString()?.trim();
  if (!reason) f.child("reason").fail("is required: say why the cluster is paused (every preview and report shows it)");
  const pause: ClusterPause = { reason: reason! };
  const by = f.child("by").optString();
  if (by) pause.by = by;
  const since = f.child("since").optString();
  if (since !== undefined) {
    if (!/^\d{4}-\d{2}-\d{2}T/.test(since) || Number.isNaN(Date.parse(since)))
      f.child("since").fail(`must be an RFC 3339 time such as 2026-11-29T04:40:00Z (got ${JSON.stringify(since)})`);
    pause.since = since;
  }
  return pause;
}

function readCluster(f: Field): ClusterConfig {
  f.object(keysOf(CLUSTER_FIELDS));
  const cluster: ClusterConfig = {
    name: readName(f.child("name")),
    labels: readLabels(f.child("labels"), "label"),
    annotations: readLabels(f.child("annotations"), "annotation"),
    templateValues: f.child("templateValues").optMap() ?? {},
    deleteUnreachable: f.child("deleteUnreachable").bool(),
  };
  const kubeconfig = readSecret(f.child("kubeconfig"));
  if (kubeconfig !== undefined) {
    if (!isPlainObject(parseYamlOrUndefined(kubeconfig))) f.child("kubeconfig").fail("is not a kubeconfig (a YAML mapping)");
    cluster.kubeconfig = kubeconfig;
  }
  const context = f.child("context").optString();
  if (context !== undefined) cluster.context = context;
  const paused = f.child("paused");
  if (paused.present) cluster.paused = readPause(paused);
  const agent = f.child("agent");
  if (agent.present) cluster.agent = parseAgentSettings(new Field(agent.value, agent.path, { ...agent.context, cluster: cluster.name }));
  const kubeVersion = f.child("kubeVersion").optString();
  if (kubeVersion !== undefined) {
    if (!/^v?\d+\.\d+(\.\d+)?$/.test(kubeVersion))
      f.child("kubeVersion").fail(`must be a Kubernetes version such as v1.30.2 or 1.30 (got ${JSON.stringify(kubeVersion)})`);
    cluster.kubeVersion = kubeVersion;
  }
  if (f.child("apiVersions").value !== undefined) {
    cluster.apiVersions = f.child("apiVersions").stringList();
    f.child("apiVersions")
      .items()
      .forEach((item, i) => {
        if (!/^[a-z0-9.-]+(\/[a-z0-9]+)?(\/[A-Za-z0-9]+)?$/.test(cluster.apiVersions![i]))
          item.fail("must be group/version or group/version/Kind, as Helm's --api-versions (for example monitoring.coreos.com/v1/ServiceMonitor)");
      });
  }
  return cluster;
}

function readClusterGroup(f: Field): ClusterGroupConfig {
  f.object(keysOf(CLUSTER_GROUP_FIELDS));
  const selector = readSelector(f.child("selector"));
  if (!selector) return f.child("selector").fail("is required (use {} to select every cluster)");
  return { name: readName(f.child("name")), labels: readLabels(f.child("labels"), "label"), selector };
}

/** The stack file path shown in errors for a stack. */
export function stackFileFor(stack: string): string {
  return `stacks/Pulumi.${stack}.yaml`;
}

/** Reads `pulumi-fleet:` keys out of a parsed stack file (the `config:` section). */
export function configFromStackFile(doc: unknown, file: string): Record<string, unknown> {
  if (!isPlainObject(doc)) throw new FleetError("stack file must be a YAML mapping", { file });
  const config = (doc.config ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (key.startsWith(`${CONFIG_NAMESPACE}:`)) out[key.slice(CONFIG_NAMESPACE.length + 1)] = value;
  }
  return out;
}

function parseYamlOrUndefined(text: string): unknown {
  try {
    return YAML.parse(text);
  } catch {
    return undefined;
  }
}
