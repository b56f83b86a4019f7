/**
 * The stack configuration (stacks/Pulumi.<env>.yaml, keys under `pulumi-fleet:`), typed and validated.
 * Every error names the stack file and the field path. Secret fields (kubeconfig, git credentials) are
 * plain strings here; the components wrap them with pulumi.secret, and nothing logs them.
 */
import * as path from "node:path";
import * as YAML from "yaml";
import { Field, isPlainObject } from "./reader";
import { FleetError } from "../errors";
import { LabelSelector, readSelector } from "../targeting/selector";
import { readTargetCriteria, TargetCriteria } from "./target-criteria";
import { dnsLabelProblem, labelKeyProblem, labelValueProblem } from "../k8s-validation";
import { readShardOf, readShards, ShardOf, shardMembership, ShardSpec } from "./shards";
import { checkDownstreamNamespaces, DownstreamSecret, readDownstreamResources } from "./downstream-resources";
import { NotificationsConfig, readNotifications } from "./notifications";
import { MetricsConfig, readMetrics } from "./metrics";
import { HealthCheck, readHealthChecks } from "./health-checks";
import { readSchedules, ScheduleConfig } from "./schedules";
import { PollingSettings, readPolling } from "./polling";

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
  /** Per-cluster agent overrides, validated by the agent stage. */
  agent?: Record<string, unknown>;
}

export interface ClusterGroupConfig {
  name: string;
  labels: Record<string, string>;
  selector: LabelSelector;
}

export interface GitAuth {
  sshPrivateKey?: string;
  knownHosts?: string;
  username?: string;
  token?: string;
}

export interface GitRepoConfig extends PollingSettings {
  name: string;
  repo: string;
  branch?: string;
  revision?: string;
  paths: string[];
  targets: TargetCriteria[];
  targetNamespace?: string;
  serviceAccount?: string;
  keepResources: boolean;
  deleteNamespace: boolean;
  paused: boolean;
  allowEmpty: boolean;
  /**
   * The operator's own takeOwnership for every bundle of this GitRepo: objects that exist on the clusters
   * (deployed by Fleet, say) are adopted instead of refused. For moving over; fleet.yaml cannot widen it.
   */
  takeOwnership?: boolean;
  auth?: GitAuth;
  caBundle?: string;
  insecureSkipTLSVerify: boolean;
  /** Credentials and transport for remote Helm charts: the keys of Fleet's helmSecretName secret. */
  helmSecret?: HelmSecret;
  /** Fleet's helmRepoURLRegex: helmSecret's credentials go only to chart URLs it matches (from the start). */
  helmRepoURLRegex?: string;
  /**
   * The chart URLs this GitRepo's content may make the runner pull from: Go regular expressions, each
   * matched against the whole normalized URL (scheme://host[:port]/path) of every request of a pull,
   * redirects and index.yaml's chart URLs included. Empty: no remote chart is pulled. The operator's
   * setting; content cannot widen it.
   */
  allowedChartURLs?: string[];
  /**
   * The service accounts this GitRepo's content may deploy as (fleet.yaml and targetCustomizations
   * `serviceAccount`), besides the stack's own `serviceAccount`, as Fleet's GitRepoRestriction and Policy
   * `allowedServiceAccounts`. Unset: content may name none when the stack names one (core/reach.ts).
   */
  allowedServiceAccounts?: string[];
  /**
   * The namespaces this GitRepo's objects and lookups may be in: exact names or `*` patterns, as Fleet's
   * `allowedTargetNamespaces`. When set, cluster-scoped objects other than those Namespaces are refused.
   */
  allowedTargetNamespaces?: string[];
  /** fleet.yaml `overrideTargets` may reach clusters outside `targets` (Fleet's default); off, it only narrows them. */
  allowOverrideTargets?: boolean;
  /** fleet.yaml `helm.takeOwnership` is honoured (never of what another GitRepo owns); off, such a bundle is refused. */
  allowTakeOwnership?: boolean;
  /** Secrets from the stack's encrypted config, created on every cluster the GitRepo targets before its bundles (core/desired/operator-secrets.ts). */
  downstreamResources?: DownstreamSecret[];
  /**
   * The age identities (an age key file's text) this GitRepo's SOPS-encrypted manifests are decrypted
   * with (core/bundles/sops.ts). A Pulumi secret; this GitRepo's alone, so another team's file does not open.
   */
  sopsAgeKey?: string;
}

export interface HelmSecret {
  username?: string;
  password?: string;
  cacerts?: string;
  insecureSkipVerify: boolean;
  basicHTTP: boolean;
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
  /** Global agent settings, validated by the agent stage. */
  agent?: Record<string, unknown>;
  /** The environment is split into these shards (core/config/shards.ts); each shard is a stack of its own. */
  shards?: ShardSpec[];
  /** Set in a shard's stack: `clusters` then holds only this shard's clusters. */
  shard?: ShardContext;
  /** Where `up` and `status` send their events (core/config/notifications.ts). */
  notifications?: NotificationsConfig;
  /** Where the operations leave their Prometheus metrics (core/config/metrics.ts). */
  metrics?: MetricsConfig;
  /** The operator's readiness rule per kind (core/config/health-checks.ts); absent when none. */
  healthChecks?: HealthCheck[];
  /** Maintenance windows (core/config/schedules.ts): outside its window a cluster keeps what it has. */
  schedules?: ScheduleConfig[];
}

/** A shard stack's own view: its name, and the definition's clusters that belong to the other shards. */
export interface ShardContext extends ShardOf {
  /** Clusters of the other shards: their records in this stack's outputs are theirs now (moved away). */
  elsewhere: string[];
  /** Those clusters' configuration: whether a GitRepo still deploys anywhere is a question about the whole environment. */
  otherClusters: ClusterConfig[];
}

export const TOP_LEVEL_KEYS = ["fleetVersion", "renderDir", "clusters", "clusterGroups", "gitRepos", "agent", "shards", "shard", "notifications", "metrics", "healthChecks", "schedules"] as const;

/**
 * Validates raw configuration. `raw` maps keys without the `pulumi-fleet:` prefix to values;
 * relative local repository paths and renderDir are resolved against `baseDir` (the project root).
 */
export function parseStackConfig(raw: Record<string, unknown>, file: string, baseDir: string): StackConfig {
  const root = new Field(raw, "", { file }).object(TOP_LEVEL_KEYS);
  const clusters = root.child("clusters").items().map(readCluster);
  const clusterGroups = root.child("clusterGroups").items().map(readClusterGroup);
  const gitRepos = root.child("gitRepos").items().map((f) => readGitRepo(f, baseDir));
  uniqueNames(root.child("clusters"), clusters);
  uniqueNames(root.child("clusterGroups"), clusterGroups);
  uniqueNames(root.child("gitRepos"), gitRepos);
  checkDownstreamNamespaces(root.child("gitRepos"), gitRepos, namespaceAllowed);
  const renderDir = root.child("renderDir").optString();
  const fleetVersion = root.child("fleetVersion").optString();
  const config: StackConfig = {
    file,
    fleetVersion,
    renderDir: renderDir ? path.resolve(baseDir, renderDir) : undefined,
    clusters,
    clusterGroups,
    gitRepos,
    agent: root.child("agent").optMap(),
    ...(root.child("notifications").present ? { notifications: readNotifications(root.child("notifications")) } : {}),
    ...(root.child("metrics").present ? { metrics: readMetrics(root.child("metrics"), baseDir) } : {}),
  };
  const healthChecks = readHealthChecks(root.child("healthChecks"));
  if (healthChecks.length) config.healthChecks = healthChecks;
  const schedules = readSchedules(root.child("schedules"), (t) => readTargetCriteria(t));
  if (schedules.length) config.schedules = schedules;
  if (!config.renderDir) {
    clusters.forEach((c, i) => {
      for (const key of ["kubeVersion", "apiVersions"] as const) {
        if (c[key] !== undefined) root.child("clusters").index(i).child(key).fail("applies in render mode only (renderDir): a live cluster's version and API versions are read from it, as Fleet's agent does");
      }
    });
  }
  return withShards(config, root);
}

/** Checks the shard rule (every cluster in exactly one shard) and, in a shard's stack, keeps only its clusters. */
function withShards(config: StackConfig, root: Field): StackConfig {
  const shards = readShards(root.child("shards"));
  const shard = readShardOf(root.child("shard"));
  if (!shards) {
    if (shard) root.child("shard").fail("names a shard, but there is no shards: rule (a shard's stack file is a copy of its environment's, which has one)");
    return config;
  }
  const definitionFile = shard ? stackFileFor(shard.environment) : config.file;
  const membership = shardMembership(config.clusters, config.clusterGroups, shards, definitionFile);
  if (!shard) return { ...config, shards };
  if (!shards.some((s) => s.name === shard.name)) root.child("shard").child("name").fail(`${JSON.stringify(shard.name)} is not a shard of ${definitionFile} (${shards.map((s) => s.name).join(", ")})`);
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

function readName(f: Field): string {
  const name = f.string();
  const problem = dnsLabelProblem(name);
  if (problem) f.fail(`invalid name ${JSON.stringify(name)}: ${problem}`);
  return name;
}

function readLabels(f: Field, what: "label" | "annotation"): Record<string, string> {
  const map = f.stringMap();
  for (const [k, v] of Object.entries(map)) {
    const keyProblem = labelKeyProblem(k);
    if (keyProblem) f.child(k).fail(`invalid ${what} key: ${keyProblem}`);
    if (what === "label") {
      const valueProblem = labelValueProblem(v);
      if (valueProblem) f.child(k).fail(`invalid label value ${JSON.stringify(v)}: ${valueProblem}`);
    }
  }
  return map;
}

/** A secret field: a plain string in the decrypted config, or `{secure: ...}` when read from the file. */
function readSecret(f: Field): string | undefined {
  if (isPlainObject(f.value) && typeof (f.value as { secure?: unknown }).secure === "string") return undefined;
  return f.optString();
}

function readCluster(f: Field): ClusterConfig {
  f.object(["name", "labels", "annotations", "templateValues", "kubeconfig", "context", "deleteUnreachable", "agent", "kubeVersion", "apiVersions"]);
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
  const agent = f.child("agent").optMap();
  if (agent !== undefined) cluster.agent = agent;
  const kubeVersion = f.child("kubeVersion").optString();
  if (kubeVersion !== undefined) {
    if (!/^v?\d+\.\d+(\.\d+)?$/.test(kubeVersion)) f.child("kubeVersion").fail(`must be a Kubernetes version such as v1.30.2 or 1.30 (got ${JSON.stringify(kubeVersion)})`);
    cluster.kubeVersion = kubeVersion;
  }
  if (f.child("apiVersions").value !== undefined) {
    cluster.apiVersions = f.child("apiVersions").stringList();
    f.child("apiVersions").items().forEach((item, i) => {
      if (!/^[a-z0-9.-]+(\/[a-z0-9]+)?(\/[A-Za-z0-9]+)?$/.test(cluster.apiVersions![i])) item.fail("must be group/version or group/version/Kind, as Helm's --api-versions (for example monitoring.coreos.com/v1/ServiceMonitor)");
    });
  }
  return cluster;
}

function readClusterGroup(f: Field): ClusterGroupConfig {
  f.object(["name", "labels", "selector"]);
  const selector = readSelector(f.child("selector"));
  if (!selector) return f.child("selector").fail("is required (use {} to select every cluster)");
  return { name: readName(f.child("name")), labels: readLabels(f.child("labels"), "label"), selector };
}

const REMOTE_URL = /^(https?|ssh|git):\/\/|^[\w.-]+@[\w.-]+:/;

function readGitRepo(f: Field, baseDir: string): GitRepoConfig {
  f.object([
    "name", "repo", "branch", "revision", "paths", "targets", "targetNamespace", "serviceAccount",
    "keepResources", "deleteNamespace", "paused", "allowEmpty", "takeOwnership", "auth", "caBundle", "insecureSkipTLSVerify",
    "helmSecret", "helmRepoURLRegex", "allowedChartURLs",
    "allowedServiceAccounts", "allowedTargetNamespaces", "allowOverrideTargets", "allowTakeOwnership", "downstreamResources", "sopsAgeKey",
    "pollingInterval", "disablePolling",
  ]);
  let repo = f.child("repo").string();
  if (!REMOTE_URL.test(repo) && !repo.startsWith("file://")) repo = path.resolve(baseDir, repo);
  if (/^https?:\/\/[^/]*@/.test(repo)) {
    f.child("repo").fail("must not embed credentials in the URL; use auth.username and auth.token (Pulumi secrets)");
  }
  const paths = f.child("paths").stringList();
  paths.forEach((p, i) => {
    if (p.split(/[\\/]/).includes("..")) f.child("paths").index(i).fail(`path ${JSON.stringify(p)} escapes the repository`);
  });
  const g: GitRepoConfig = {
    name: readName(f.child("name")),
    repo,
    paths,
    targets: f.child("targets").items().map((t) => readTargetCriteria(t)),
    keepResources: f.child("keepResources").bool(),
    deleteNamespace: f.child("deleteNamespace").bool(),
    paused: f.child("paused").bool(),
    allowEmpty: f.child("allowEmpty").bool(),
    insecureSkipTLSVerify: f.child("insecureSkipTLSVerify").bool(),
    ...readPolling(f),
  };
  if (f.child("takeOwnership").bool()) g.takeOwnership = true;
  if (f.child("allowOverrideTargets").bool()) g.allowOverrideTargets = true;
  if (f.child("allowTakeOwnership").bool()) g.allowTakeOwnership = true;
  const accounts = f.child("allowedServiceAccounts");
  if (accounts.present) g.allowedServiceAccounts = accounts.stringList();
  const targetNamespace = f.child("targetNamespace").optString();
  if (targetNamespace) {
    const problem = dnsLabelProblem(targetNamespace);
    if (problem) f.child("targetNamespace").fail(`invalid namespace ${JSON.stringify(targetNamespace)}: ${problem}`);
    g.targetNamespace = targetNamespace;
  }
  const serviceAccount = f.child("serviceAccount").optString();
  if (serviceAccount) g.serviceAccount = serviceAccount;
  const namespaces = f.child("allowedTargetNamespaces");
  if (namespaces.present) {
    g.allowedTargetNamespaces = namespaces.stringList();
    namespaces.items().forEach((item, i) => {
      const problem = dnsLabelProblem(g.allowedTargetNamespaces![i].replace(/\*/g, "x"));
      if (problem) item.fail(`invalid namespace pattern ${JSON.stringify(g.allowedTargetNamespaces![i])}: ${problem} (a name, or a name with * for any characters)`);
    });
    if (g.targetNamespace && !namespaceAllowed(g.targetNamespace, g.allowedTargetNamespaces)) {
      f.child("targetNamespace").fail(`${JSON.stringify(g.targetNamespace)} is not in allowedTargetNamespaces`);
    }
  }
  const branch = f.child("branch").optString();
  const revision = f.child("revision").optString();
  if (branch && revision) f.child("revision").fail("set either branch or revision, not both");
  if (branch) g.branch = branch;
  if (revision) g.revision = revision;
  const caBundle = f.child("caBundle").optString();
  if (caBundle) g.caBundle = caBundle;
  const auth = f.child("auth");
  if (auth.present) {
    auth.object(["sshPrivateKey", "knownHosts", "username", "token"]);
    const a: GitAuth = {};
    const key = readSecret(auth.child("sshPrivateKey"));
    if (key) a.sshPrivateKey = key;
    const knownHosts = auth.child("knownHosts").optString();
    if (knownHosts) a.knownHosts = knownHosts;
    const username = auth.child("username").optString();
    if (username) a.username = username;
    const token = readSecret(auth.child("token"));
    if (token) a.token = token;
    if (a.sshPrivateKey && !a.knownHosts) auth.child("knownHosts").fail("is required with sshPrivateKey (host keys are always verified)");
    g.auth = a;
  }
  const helmSecret = f.child("helmSecret");
  if (helmSecret.present) {
    helmSecret.object(["username", "password", "cacerts", "insecureSkipVerify", "basicHTTP"]);
    const h: HelmSecret = { insecureSkipVerify: helmSecret.child("insecureSkipVerify").bool(), basicHTTP: helmSecret.child("basicHTTP").bool() };
    const username = helmSecret.child("username").optString();
    const password = readSecret(helmSecret.child("password"));
    if (username) h.username = username;
    if (password) h.password = password;
    // Fleet refuses a secret with one of the two.
    if (helmSecret.child("username").present !== helmSecret.child("password").present) {
      helmSecret.fail("username and password must be set together");
    }
    const cacerts = helmSecret.child("cacerts").optString();
    if (cacerts) h.cacerts = cacerts;
    g.helmSecret = h;
  }
  // Compiled by fleet-render with Go's regexp (RE2), as Fleet does, when a chart is pulled.
  const regex = f.child("helmRepoURLRegex").optString();
  if (regex) {
    g.helmRepoURLRegex = regex;
  }
  const allowed = f.child("allowedChartURLs");
  if (allowed.present) g.allowedChartURLs = allowed.stringList();
  const downstream = readDownstreamResources(f.child("downstreamResources"), g, namespaceAllowed);
  if (downstream.length) g.downstreamResources = downstream;
  const ageKey = readSecret(f.child("sopsAgeKey"));
  if (ageKey !== undefined) {
    // The message never quotes the value: it is the key.
    if (!isAgeIdentityFile(ageKey)) f.child("sopsAgeKey").fail("is not an age key file: one or more AGE-SECRET-KEY-1... lines (age-keygen's output; # comments allowed)");
    g.sopsAgeKey = ageKey;
  }
  return g;
}

/** An age identity file as age reads one: AGE-SECRET-KEY-1 identities (Bech32), one per line, blank and # lines aside. */
function isAgeIdentityFile(text: string): boolean {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
  return lines.length > 0 && lines.every((l) => /^AGE-SECRET-KEY-1[023456789ACDEFGHJKLMNPQRSTUVWXYZ]{58}$/.test(l));
}

/** Whether a namespace is one of `allowed`: exact names, or patterns where `*` stands for any characters (never a regular expression of content). */
export function namespaceAllowed(namespace: string, allowed: readonly string[]): boolean {
  return allowed.some((p) => {
    const parts = p.split("*");
    if (parts.length === 1) return p === namespace;
    if (!namespace.startsWith(parts[0]) || !namespace.endsWith(parts[parts.length - 1]) || namespace.length < parts[0].length + parts[parts.length - 1].length) return false;
    let at = parts[0].length;
    const end = namespace.length - parts[parts.length - 1].length;
    for (const mid of parts.slice(1, -1)) {
      const found = namespace.indexOf(mid, at);
      if (found < 0 || found + mid.length > end) return false;
      at = found + mid.length;
    }
    return true;
  });
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
