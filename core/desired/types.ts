/**
 * The desired state: everything the program registers, as one plain value (core/desired/state.ts
 * computes it; components/ only maps it to resources). Lists are in registration order.
 */
import { PlanEntry } from "../targeting/plan";
import { FleetState } from "../plan/pipeline";
import { JournalObject } from "./journal";
import { AgentObjects } from "./agent";
import { DesiredObject } from "./objects";
import { PairSpec } from "../model/pair";
import { DeploymentRecord, FleetSummary } from "./records";
import { DeploymentFailure } from "../plan/failures";

/** The type tokens of the project's components (automation/ reads steps by them). */
export const FLEET_TYPE = "pulumi-fleet:index:Fleet";
export const CLUSTER_TYPE = "pulumi-fleet:index:Cluster";
export const GIT_REPO_TYPE = "pulumi-fleet:index:GitRepo";
export const BUNDLE_DEPLOYMENT_TYPE = "pulumi-fleet:index:BundleDeployment";
/** One distinct render's manifests, named by its digest, that the pairs deploying it name (components/content.ts). */
export const BUNDLE_CONTENT_TYPE = "pulumi-fleet:index:BundleContent";
export const AGENT_TYPE = "pulumi-fleet:index:Agent";

/**
 * The logical name of a stack's one pulumi-fleet provider, which serves every cluster: "fleet:<stack>"
 * (a colon no cluster name has, so it is never read as a cluster's, as providers of earlier versions,
 * one per cluster, were named).
 */
export const stackProviderName = (stack: string) => `fleet:${stack}`;

/** How one cluster is reached, as one identity: an entry of the stack provider's configuration (components/fleet.ts; the kubeconfig is a secret there). */
export interface ProviderSettings {
  /** Its key in that configuration, which pairs name: "<cluster>", or "<cluster>/as/<user>". */
  name: string;
  clusterIdentifier: string;
  renderYamlToDirectory?: string;
  kubeClientSettings?: { qps: number; burst: number };
  kubeconfig?: string;
  context?: string;
  deleteUnreachable?: true;
}

/** How pulumi-fleet's provider reaches one cluster as one identity: an entry of its configuration's `clusters`, under the settings' name. */
export type ClusterAccess = Omit<ProviderSettings, "name">;

export interface DesiredNamespace {
  /** Logical name: "<cluster>/<namespace>". */
  name: string;
  metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> };
  /** Kept on the cluster unless every bundle in it sets deleteNamespace. */
  retainOnDelete: boolean;
  /** The namespace the cluster's agent creates when it is on: an alias to the agent's resource keeps it across the switch. */
  wasAgentNamespace?: true;
}

export interface DesiredCluster {
  name: string;
  provider: ProviderSettings;
  /** serviceAccount: one provider per user the cluster's deployments are applied as (sorted by user). */
  accountProviders: { user: string; provider: ProviderSettings }[];
  namespaces: DesiredNamespace[];
  /** Absent when the cluster's agent is switched off (`agent.enabled: false`). */
  agent?: AgentObjects;
  /** The namespaces, the agent and the operator's Secrets as the one resource that creates them (setup.ts); absent when there are none. */
  setup?: PairSpec;
  /** Not deployed by this stack's last update: its resources may sit at the root of the state (previous.ts arrivedClusters). */
  arrived: boolean;
}

export interface DesiredGitRepo {
  name: string;
  commit: string;
  bundles: string[];
  clusters: string[];
}

export interface DesiredDeployment {
  /** deploymentKey: "<cluster>/<gitRepo>/<bundle>", the BundleDeployment's logical name. */
  key: string;
  /** The plan entry it deploys; absent for a held deployment. */
  entry?: PlanEntry;
  gitRepo: string;
  cluster: string;
  commit: string;
  /** Keys of the deployments of the same cluster it waits for (fleet.yaml dependsOn); each comes earlier in the list. */
  dependsOn: string[];
  /** The user it is applied as (serviceAccount); absent: the cluster's own provider. */
  account?: string;
  /** The namespaces its Cluster creates that its objects are in (it is applied once they exist). */
  clusterNamespaces: string[];
  /** Some of its objects are in the namespace its cluster's agent creates: it is applied once the agent is. */
  inAgentNamespace?: true;
  /** Its GitRepo's downstreamResources are on its cluster (operator-secrets.ts): it is applied after the cluster's setup, which creates them. */
  afterOperatorSecrets?: true;
  /** Shown in the preview, one line each ("bundle <b> on cluster <c>: ..."). */
  warnings: string[];
  objects: DesiredObject[];
  /** The BundleDeployment's inputs; `waitFor` (the states of `dependsOn`) is added where it is registered. */
  spec: PairSpec;
  record: DeploymentRecord;
  arrived: boolean;
  /** A failed deployment keeping what it last deployed (held.ts): its record and the state's objects, frozen. */
  held?: true;
  /** A held deployment's appliedDeploymentId as the state has it (else the record's deploymentId). */
  appliedDeploymentId?: string;
  /** Its templates' lookups read a Secret (now, or when the state's objects were rendered): its objects are registered as a secret. */
  secret?: true;
}

export interface DesiredState {
  /** Sources, bundles and plan the state was computed from (the operations explain previews with it). */
  fleet: FleetState;
  /** Sorted by name. */
  clusters: DesiredCluster[];
  /** Sorted by name. */
  gitRepos: DesiredGitRepo[];
  /** In dependency order: a deployment's dependsOn come before it. */
  deployments: DesiredDeployment[];
  summary: FleetSummary;
  /** The `deployments` output, keyed by deploymentKey, in the order of `deployments`. */
  records: Record<string, DeploymentRecord>;
  /** What this update may create, for the crash journal (core/desired/journal.ts). */
  journal: JournalObject[];
  /** Bundle deployments that failed this update (failures.ts), sorted; each keeps what it last deployed. */
  failures: DeploymentFailure[];
  /** Preview lines about the whole fleet. */
  warnings: string[];
}
