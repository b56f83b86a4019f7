/**
 * What a cluster needs before its bundles, as one engine resource: the namespaces its bundles need
 * (namespaces.ts), its agent's objects (agent.ts) and the operator's Secrets (operator-secrets.ts), applied as one set by pulumi-fleet's provider
 * (tools/fleet-provider), pruned and deleted as a BundleDeployment is. Each namespace is applied on its
 * own first: one the API server refuses fails only the pairs that need it (namespaces.ts
 * namespacesRefusedFor), never the agent, the Secrets or another team's namespace. One resource per cluster instead
 * of one per object, and no Kubernetes provider process per cluster (BENCHMARKS.md §13).
 */
import { sha256Hex, stableJson } from "../base/hash";
import { clusterLabels } from "./ownership";
import { AgentObjects } from "./agent";
import { deletePolicyOf, RETAIN_REASONS } from "./delete-policy";
import { OperatorSecret } from "./operator-secrets";
import { KUBERNETES_PROVIDER_FIELD_MANAGERS, PairObject, pairObjectKey, PairSpec } from "../model/pair";
import { BUNDLE_DEPLOYMENT_TYPE, DesiredCluster, DesiredDeployment, DesiredNamespace } from "./types";

export const CLUSTER_SETUP_TYPE = "pulumi-fleet:index:ClusterSetup";

/** The resources whose objects pulumi-fleet's provider applies as one set: a pair, and a cluster's setup. */
export const isAppliedSet = (type: string) => type === BUNDLE_DEPLOYMENT_TYPE || type === CLUSTER_SETUP_TYPE;

/** How long `up` waits for the agent to be ready (the Kubernetes provider's default wait for a Deployment). */
const AGENT_READY_SECONDS = 600;

/**
 * The cluster's setup, or undefined when it has nothing to create. What it adopts of an earlier
 * version's resources is the migration's (core/migrate/adoptions.ts), added by components/cluster.ts.
 */
export function clusterSetup(
  cluster: string,
  namespaces: DesiredNamespace[],
  agent: AgentObjects | undefined,
  operatorSecrets: OperatorSecret[] = [],
): PairSpec | undefined {
  const objects: { manifest: Record<string, unknown>; retain?: string }[] = [
    ...namespaces.map((ns) => ({
      manifest: { apiVersion: "v1", kind: "Namespace", metadata: ns.metadata },
      ...(ns.retainOnDelete ? { retain: RETAIN_REASONS.namespace } : {}),
    })),
    ...(agent ? agentManifests(agent) : []),
  ];
  if (!objects.length && !operatorSecrets.length) return undefined;
  const byKey = (list: typeof objects): Record<string, PairObject> => Object.fromEntries(list.map((o) => [keyOf(o.manifest), o]));
  const secret = byKey(objects.filter((o) => o.manifest.kind === "Secret"));
  const plain = byKey(objects.filter((o) => o.manifest.kind !== "Secret"));
  const operator = byKey(operatorSecrets.map((s) => ({ manifest: s.manifest })));
  // The deploymentID is kept in clear: the operator's Secrets count in it by what they are, never by their
  // values (a hash of a short password could be guessed back); a changed value is a change of the secret objects.
  const identities = operatorSecrets.map(({ manifest: { data, ...rest } }) => ({ ...rest, keys: Object.keys(data).sort() }));
  return {
    deploymentId: `setup-${sha256Hex(stableJson(identities.length ? [plain, secret, identities] : [plain, secret])).slice(0, 16)}`,
    objects: plain,
    ...(Object.keys(secret).length || operatorSecrets.length ? { secretObjects: { ...secret, ...operator } } : {}),
    ...(agent ? { timeoutSeconds: AGENT_READY_SECONDS } : {}),
    adoptFieldManagers: [KUBERNETES_PROVIDER_FIELD_MANAGERS],
    deletePolicy: deletePolicyOf(clusterLabels(cluster)),
  };
}

/** The agent's objects as manifests, its namespace kept when it goes. */
function agentManifests(a: AgentObjects): { manifest: Record<string, unknown>; retain?: string }[] {
  const typed = (apiVersion: string, kind: string, o: Record<string, unknown>) => ({ manifest: { apiVersion, kind, ...o } });
  return [
    { ...typed("v1", "Namespace", a.namespace), retain: RETAIN_REASONS.agentNamespace },
    typed("v1", "ServiceAccount", a.serviceAccount),
    typed("rbac.authorization.k8s.io/v1", "ClusterRole", a.clusterRole),
    typed("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", a.clusterRoleBinding),
    typed("v1", "Secret", a.secret),
    ...(a.priorityClass ? [typed("scheduling.k8s.io/v1", "PriorityClass", a.priorityClass)] : []),
    ...(a.podDisruptionBudget ? [typed("policy/v1", "PodDisruptionBudget", a.podDisruptionBudget)] : []),
    typed("apps/v1", "Deployment", a.deployment),
  ];
}

const keyOf = (m: Record<string, unknown>) => pairObjectKey(m as { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } });

/**
 * The keys of the setup's Secrets whose values its deploymentID counts (the agent's: clusterSetup), as
 * opposed to the operator's Secrets, counted there by what they are only.
 */
export function secretsCountedInDeploymentId(c: DesiredCluster): Set<string> {
  return new Set(c.agent ? [keyOf({ apiVersion: "v1", kind: "Secret", ...c.agent.secret })] : []);
}

/** Whether a pair is applied after its cluster's setup, when the cluster has one: its namespaces, the agent's, or its GitRepo's Secrets there. */
export function appliedAfterSetup(d: Pick<DesiredDeployment, "clusterNamespaces" | "inAgentNamespace" | "afterOperatorSecrets">): boolean {
  return d.clusterNamespaces.length > 0 || !!d.inAgentNamespace || !!d.afterOperatorSecrets;
}

/** The cluster with the one resource that creates its namespaces and agent, when it has any. */
export function withSetup(c: DesiredCluster, secrets: OperatorSecret[] = [], paused = false): DesiredCluster {
  const setup = clusterSetup(c.name, c.namespaces, c.agent, secrets);
  return setup ? { ...c, setup: paused ? { ...setup, paused: true } : setup } : c;
}
