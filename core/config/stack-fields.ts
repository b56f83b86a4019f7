/**
 * The stack file's fields (keys under `pulumi-fleet:`), as one table: stack.ts and git-repo.ts take
 * their allowed keys from here, and schemas/stack.schema.json is generated from it (scripts/schemas.ts).
 * Sections with readers of their own (agent, notifications, metrics, ...) are typed here as a mapping
 * or a list; their keys are checked when the stack is read.
 */
import { any, bool, FieldTable, listOf, obj, ref, secret, str, stringList, stringMap, anyMap } from "../schema/field-table";
import { LABEL_SELECTOR_FIELDS, TARGET_CRITERIA_FIELDS } from "../schema/common-fields";

const section = (reader: string) => any(`checked by ${reader} when the stack is read`);

export const CLUSTER_FIELDS: FieldTable = {
  name: str("the cluster's name (a DNS label)"),
  labels: stringMap("the cluster's labels, matched by targets"),
  annotations: stringMap("the cluster's annotations"),
  templateValues: anyMap("values templates read as .ClusterValues"),
  kubeconfig: secret("the kubeconfig's contents (a Pulumi secret)"),
  context: str("a context of the ambient kubeconfig, when kubeconfig is not given"),
  deleteUnreachable: bool("decommissioning: drop this cluster's resources from state when it is unreachable"),
  agent: section("core/config/agent-settings.ts"),
  kubeVersion: str("render mode only: the Kubernetes version charts see"),
  apiVersions: stringList("render mode only: extra API versions charts see"),
};

export const CLUSTER_GROUP_FIELDS: FieldTable = {
  name: str("the group's name (a DNS label)"),
  labels: stringMap("the group's labels"),
  selector: ref("LabelSelector", LABEL_SELECTOR_FIELDS, "the clusters in the group ({} selects every cluster)"),
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
  downstreamResources: section("core/config/downstream-resources.ts"),
  sopsAgeKey: secret(),
  pollingInterval: str("a Go duration (e.g. 15s, 5m)"),
  disablePolling: bool(),
};

export const STACK_FIELDS: FieldTable = {
  fleetVersion: str(),
  renderDir: str("render mode: manifests are written here instead of applied"),
  clusters: listOf(obj(CLUSTER_FIELDS)),
  clusterGroups: listOf(obj(CLUSTER_GROUP_FIELDS)),
  gitRepos: listOf(obj(GIT_REPO_FIELDS)),
  agent: section("core/config/agent-settings.ts"),
  shards: section("core/config/shards.ts"),
  shard: section("core/config/shards.ts"),
  notifications: section("core/config/notifications.ts"),
  metrics: section("core/config/metrics.ts"),
  healthChecks: section("core/config/health-checks.ts"),
  schedules: section("core/config/schedules.ts"),
};
