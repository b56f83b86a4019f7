/**
 * The stack file's fields (keys under `pulumi-fleet:`), as one table: stack.ts and git-repo.ts take
 * their allowed keys from here, and schemas/stack.schema.json is generated from it (scripts/schemas.ts).
 * Each section's reader (agent-settings.ts, notifications.ts, ...) takes its keys from its table here;
 * what a schema cannot say (a Go duration, a PEM bundle, an expression) stays in the reader.
 */
import { anyMap, bool, configInt, FieldTable, intOrString, listOf, num, obj, ref, refused, secret, str, stringList, stringMap } from "./field-table";
import { LABEL_SELECTOR_FIELDS, TARGET_CRITERIA_FIELDS } from "./common-fields";
import { FLEET_YAML_FIELDS, HELM_FIELDS, TARGET_FIELDS } from "./fleetyaml-fields";

const selector = (description?: string) => ref("LabelSelector", LABEL_SELECTOR_FIELDS, description);

export const TLS_MODES = ["system-store", "strict"] as const;
export const PULL_POLICIES = ["Always", "IfNotPresent", "Never"] as const;
/** What a webhook is told about: a pair's state changes (core/config/notifications.ts). */
export const NOTIFICATION_TYPES = ["deployed", "failed", "held", "drift", "pruned"] as const;
export const WEBHOOK_FORMATS = ["json", "slack", "teams"] as const;
/** The git hosts whose commit-status API an `up` reports to (core/config/commit-status.ts). */
export const COMMIT_STATUS_HOSTS = ["github", "gitlab", "gitea"] as const;

export const AGENT_FIELDS: FieldTable = {
  enabled: bool("deploy Fleet's agent to every cluster (default true)"),
  imageRepository: str(),
  imageTag: str(),
  imagePullPolicy: str(undefined, PULL_POLICIES),
  privateRepoURL: str(),
  pullSecrets: stringList("image pull Secrets' names"),
  apiServerURL: str("the Fleet management API server the agents register with"),
  apiServerCA: str("a PEM certificate bundle"),
  tlsMode: str(undefined, TLS_MODES),
  checkinInterval: str("a Go duration"),
  garbageCollectionInterval: str("a Go duration"),
  env: stringMap("environment variables of the agent"),
  tolerations: listOf(obj({ key: str(), operator: str("Exists or Equal"), value: str(), effect: str(), tolerationSeconds: num() })),
  affinity: anyMap("a Kubernetes affinity"),
  resources: obj({ limits: stringMap(), requests: stringMap() }),
  hostNetwork: bool(),
  priorityClass: obj({ value: num("an integer"), preemptionPolicy: str("PreemptLowerPriority or Never") }),
  podDisruptionBudget: obj({ minAvailable: intOrString(), maxUnavailable: intOrString() }),
  namespace: str(),
  labels: stringMap(),
  token: secret("the agents' registration token"),
};

export const NOTIFICATIONS_FIELDS: FieldTable = {
  webhooks: listOf(
    obj({
      name: str(),
      url: refused("a webhook URL is a credential and is never kept in the stack file: name an environment variable holding it in urlFromEnv"),
      urlFromEnv: str("the environment variable holding the webhook's URL"),
      format: str("default json", WEBHOOK_FORMATS),
      events: listOf(str(undefined, NOTIFICATION_TYPES), "the event types sent (default: all)"),
    }),
  ),
  kubernetesEvents: bool("a Kubernetes Event on each cluster when a pair's state changes"),
};

export const COMMIT_STATUS_FIELDS: FieldTable = {
  host: str(undefined, COMMIT_STATUS_HOSTS),
  apiUrl: str("the host's API base URL (default https://api.github.com, https://gitlab.com/api/v4; required for gitea)"),
  token: refused("a token is a credential and is never kept in the stack file: name an environment variable holding it in tokenFromEnv"),
  tokenFromEnv: str("the environment variable holding the API token"),
  context: str("the status's name on the commit (default pulumi-fleet/<stack>)"),
  targetUrl: str("the link a status carries (e.g. the status page)"),
  pullRequestComment: bool("one comment per pull request with the per-cluster summary, updated in place"),
  gitRepos: stringList("the GitRepos reported (default: all on the host)"),
};

export const METRICS_FIELDS: FieldTable = {
  textfileDirectory: str("node_exporter's textfile collector directory"),
  pushgateway: obj({ url: str(), urlFromEnv: str(), job: str(), timeoutSeconds: num() }),
};

export const HEALTH_CHECK_FIELDS: FieldTable = {
  apiVersion: str(),
  kind: str(),
  current: str("a CEL expression: the object is ready"),
  inProgress: str("a CEL expression"),
  failed: str("a CEL expression"),
};

export const SCHEDULE_FIELDS: FieldTable = {
  name: str(),
  schedule: str("a cron expression"),
  duration: str("a Go duration"),
  location: str("a time zone"),
  targets: obj({ clusters: listOf(ref("GitTarget", TARGET_CRITERIA_FIELDS)) }),
};

export const SHARD_FIELDS: FieldTable = {
  name: str(),
  clusters: stringList("clusters' names"),
  clusterSelector: selector(),
  clusterGroup: str(),
};

export const SHARD_OF_FIELDS: FieldTable = { environment: str(), name: str() };

export const DOWNSTREAM_SECRET_FIELDS: FieldTable = {
  kind: str("Secret"),
  name: str(),
  namespace: str(),
  type: str("default Opaque"),
  labels: stringMap(),
  annotations: stringMap(),
  data: anyMap("key to base64 value, each a Pulumi secret"),
  stringData: anyMap("key to value, each a Pulumi secret"),
};

export const CLUSTER_FIELDS: FieldTable = {
  name: str("the cluster's name (a DNS label)"),
  labels: stringMap("the cluster's labels, matched by targets"),
  annotations: stringMap("the cluster's annotations"),
  templateValues: anyMap("values templates read as .ClusterValues"),
  kubeconfig: secret("the kubeconfig's contents (a Pulumi secret)"),
  context: str("a context of the ambient kubeconfig, when kubeconfig is not given"),
  deleteUnreachable: bool("decommissioning: drop this cluster's resources from state when it is unreachable"),
  paused: obj(
    {
      reason: str("why, said in every preview and report (required)"),
      by: str("who paused it"),
      since: str("when (RFC 3339)"),
    },
    "leave everything on the cluster exactly as it is (its bundle deployments, agent and namespaces) until removed",
  ),
  agent: obj(AGENT_FIELDS, "overrides of the global agent settings"),
  kubeVersion: str("render mode only: the Kubernetes version charts see"),
  apiVersions: stringList("render mode only: extra API versions charts see"),
};

export const CLUSTER_GROUP_FIELDS: FieldTable = {
  name: str("the group's name (a DNS label)"),
  labels: stringMap("the group's labels"),
  selector: selector("the clusters in the group ({} selects every cluster)"),
};

export const GIT_REPO_FIELDS: FieldTable = {
  name: str("the GitRepo's name (a DNS label)"),
  repo: str("a git URL, or a local directory relative to the project"),
  branch: str(),
  revision: str("a commit or tag (excludes branch)"),
  paths: stringList("bundle paths inside the repository"),
  targets: listOf(ref("GitTarget", TARGET_CRITERIA_FIELDS), "default: cluster group default"),
  targetNamespace: str(),
  serviceAccount: str(),
  keepResources: bool(),
  deleteNamespace: bool(),
  paused: bool(),
  allowEmpty: bool(),
  takeOwnership: bool(),
  chartCrds: str(
    "a chart's crds/: Create (the default, as Helm and Fleet's agent: applied at the bundle's install, never updated after) or CreateReplace (as Flux's upgrade.crds: applied at every change, before the objects that use them)",
    ["Create", "CreateReplace"],
  ),
  auth: obj({ sshPrivateKey: secret(), knownHosts: str(), username: str(), token: secret() }),
  caBundle: str(),
  insecureSkipTLSVerify: bool(),
  helmSecret: obj({ username: str(), password: secret(), cacerts: str(), insecureSkipVerify: bool(), basicHTTP: bool() }),
  helmRepoURLRegex: str(),
  allowedChartURLs: stringList(),
  allowedServiceAccounts: stringList(),
  allowedTargetNamespaces: stringList(),
  allowOverrideTargets: bool(),
  allowTakeOwnership: bool(),
  downstreamResources: listOf(obj(DOWNSTREAM_SECRET_FIELDS), "Secrets handed to the GitRepo's clusters"),
  sopsAgeKey: secret(),
  pollingInterval: str("a Go duration (e.g. 15s, 5m)"),
  disablePolling: bool(),
};

/** Fleet's HelmOp spec fields that are fleet.yaml's too (a HelmOp's spec is a BundleSpec): they become its bundle's fleet.yaml. */
export const HELM_OP_SPEC_KEYS = [
  "helm",
  "defaultNamespace",
  "namespace",
  "namespaceLabels",
  "namespaceAnnotations",
  "keepResources",
  "deleteNamespace",
  "deleteCRDResources",
  "forceSyncGeneration",
  "diff",
  "correctDrift",
  "ignore",
  "labels",
  "paused",
  "rolloutStrategy",
  "dependsOn",
] as const;

export const HELM_OP_NO_FILES = "a HelmOp has no files to read values from (Fleet ignores it); put the values in helm.values";

/** In the order the importer writes an entry (core/import/helm-ops.ts). */
export const HELM_OP_FIELDS: FieldTable = {
  name: str("the HelmOp's name (a DNS label): its bundle's name; unique among gitRepos and helmOps"),
  helm: obj(
    { ...HELM_FIELDS, valuesFiles: refused(HELM_OP_NO_FILES) },
    "the chart: repo and chart (or an oci:// repo, or a .tgz URL as chart), version (a semver constraint; empty: the newest), values",
  ),
  targets: listOf(obj(TARGET_FIELDS), "the clusters, each target with its own options (default: cluster group default)"),
  ...Object.fromEntries(HELM_OP_SPEC_KEYS.filter((k) => k !== "helm").map((k) => [k, FLEET_YAML_FIELDS[k]])),
  serviceAccount: str("the service account the chart is applied as"),
  pollingInterval: str("a Go duration: how often a version constraint is resolved again (absent or 0: never, as Fleet's HelmOp)"),
  helmSecret: GIT_REPO_FIELDS.helmSecret,
  insecureSkipTLSVerify: bool("the chart's requests skip TLS verification"),
  helmRepoURLRegex: str(),
  allowedChartURLs: stringList("the URLs the chart may be pulled from (as gitRepos[]): required"),
  allowedServiceAccounts: stringList(),
  allowedTargetNamespaces: stringList(),
  allowTakeOwnership: bool(),
  takeOwnership: bool(),
  chartCrds: GIT_REPO_FIELDS.chartCrds,
  allowEmpty: bool(),
};

export const STACK_FIELDS: FieldTable = {
  fleetVersion: str(),
  renderDir: str("render mode: manifests are written here instead of applied"),
  clusters: listOf(obj(CLUSTER_FIELDS)),
  clusterGroups: listOf(obj(CLUSTER_GROUP_FIELDS)),
  gitRepos: listOf(obj(GIT_REPO_FIELDS)),
  helmOps: listOf(obj(HELM_OP_FIELDS), "charts from a Helm repository or OCI registry by version, without a GitRepo (Fleet's HelmOp)"),
  agent: obj(AGENT_FIELDS),
  shards: listOf(obj(SHARD_FIELDS), "the environment split into shards, each a stack of its own"),
  clustersPerShard: configInt("the environment split automatically into shards of about this many clusters each (instead of shards)"),
  shardBy: str("with clustersPerShard: a cluster label whose clusters are kept together, each value's clusters split into shards <value>-1, <value>-2, ..."),
  shard: obj(SHARD_OF_FIELDS, "set in a shard's stack"),
  notifications: obj(NOTIFICATIONS_FIELDS),
  commitStatus: obj(COMMIT_STATUS_FIELDS, "the deploy result on each deployed commit, per environment"),
  metrics: obj(METRICS_FIELDS),
  healthChecks: listOf(obj(HEALTH_CHECK_FIELDS)),
  schedules: listOf(obj(SCHEDULE_FIELDS), "maintenance windows"),
  stalledAfter: configInt(
    "a pair that fails this many times in a row with the same inputs is Stalled: not applied again until they change or `--retry` (default 3; 0: never)",
  ),
};
