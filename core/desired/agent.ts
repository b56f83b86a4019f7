/**
 * The in-cluster agent of one cluster, from its effective configuration (core/agent), as the objects
 * to create. Names, selector and labels never change, so no configuration change can force a
 * replacement: every change is an update of the same objects. The pod template carries one varying
 * value, the config hash, so the pods roll exactly when the effective configuration changed, and never
 * otherwise.
 *
 * Strategy Recreate: the old pod is gone before the new one starts, so however many changes roll in a
 * row, at most one agent pod runs at a time and one runs at the end (fleet#3483 had five). A surge-free
 * RollingUpdate (maxSurge 0) gives the same count but still overlaps pods during termination.
 */
import { ResolvedAgent } from "../agent/effective";
import { clusterLabels } from "./ownership";
import { PATCH_FORCE_ANNOTATION } from "./labels";
import { clusterNamespaceName } from "./namespaces";

export const AGENT_NAME = "fleet-agent";
export const CONFIG_HASH_ANNOTATION = "pulumi-fleet.io/agent-config-hash";
const SELECTOR = { app: AGENT_NAME };
/** The agent's one Secret (its registration token); any other Secret of a cluster's setup is an operator's (operator-secrets.ts). */
export const AGENT_BOOTSTRAP_SECRET = `${AGENT_NAME}-bootstrap`;

type Manifest = Record<string, unknown>;

/** The agent's objects, each the arguments of its typed resource; optional ones only when configured. */
export interface AgentObjects {
  image: string;
  /** The logical name of the cluster's Namespace resource for this namespace, used while the agent was off: aliased, so switching it on updates that namespace instead of deleting it. */
  namespaceAlias: string;
  configHash: string;
  namespace: Manifest;
  serviceAccount: Manifest;
  clusterRole: Manifest;
  /** Its roleRef names clusterRole: the component refers to that resource, so the binding waits for it. */
  clusterRoleBinding: Manifest & { roleRef: { apiGroup: string; kind: string; name: string } };
  /** stringData holds the agent's token: registered as a secret. */
  secret: Manifest & { stringData: Record<string, string> };
  priorityClass?: Manifest & { value: number };
  podDisruptionBudget?: Manifest;
  deployment: Manifest;
}

/** The logical names of the agent's resources, `<cluster>/agent/<role>` (under the Agent component). */
export const agentResourceName = (cluster: string, role: string) => `${cluster}/agent/${role}`;
export const agentNamespaceResource = (cluster: string) => agentResourceName(cluster, "namespace");

export function agentObjects(cluster: string, agent: ResolvedAgent): AgentObjects {
  const { config, hash } = agent;
  const ns = config.namespace;
  const labels = { ...config.labels, ...SELECTOR, ...clusterLabels(cluster) };
  const annotations = { [PATCH_FORCE_ANNOTATION]: "true" };
  const meta = (objName: string, namespaced = true) => ({ name: objName, ...(namespaced ? { namespace: ns } : {}), labels, annotations });
  const priorityClassName = config.priorityClass ? `${AGENT_NAME}-${ns}` : undefined;
  const fromSecret = (envName: string, key: string) => ({ name: envName, valueFrom: { secretKeyRef: { name: AGENT_BOOTSTRAP_SECRET, key } } });
  return {
    image: config.image,
    configHash: hash,
    namespaceAlias: clusterNamespaceName(cluster, ns),
    namespace: { metadata: { name: ns, labels, annotations } },
    serviceAccount: { metadata: meta(AGENT_NAME) },
    clusterRole: {
      metadata: meta(`${AGENT_NAME}-${ns}`, false),
      rules: [
        { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
        { nonResourceURLs: ["*"], verbs: ["*"] },
      ],
    },
    clusterRoleBinding: {
      metadata: meta(`${AGENT_NAME}-${ns}`, false),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${AGENT_NAME}-${ns}` },
      subjects: [{ kind: "ServiceAccount", name: AGENT_NAME, namespace: ns }],
    },
    secret: {
      metadata: meta(AGENT_BOOTSTRAP_SECRET),
      stringData: { apiServerURL: config.apiServerURL, apiServerCA: config.apiServerCA, token: agent.token ?? "" },
    },
    ...(config.priorityClass && priorityClassName
      ? {
          priorityClass: {
            metadata: meta(priorityClassName, false),
            value: config.priorityClass.value,
            ...(config.priorityClass.preemptionPolicy ? { preemptionPolicy: config.priorityClass.preemptionPolicy } : {}),
          },
        }
      : {}),
    ...(config.podDisruptionBudget
      ? {
          podDisruptionBudget: { metadata: meta(AGENT_NAME), spec: { ...config.podDisruptionBudget, selector: { matchLabels: SELECTOR } } },
        }
      : {}),
    deployment: {
      metadata: meta(AGENT_NAME),
      spec: {
        replicas: 1,
        revisionHistoryLimit: 2,
        strategy: { type: "Recreate" },
        selector: { matchLabels: SELECTOR },
        template: {
          metadata: { labels, annotations: { [CONFIG_HASH_ANNOTATION]: hash } },
          spec: {
            serviceAccountName: AGENT_NAME,
            ...(config.pullSecrets.length ? { imagePullSecrets: config.pullSecrets.map((n) => ({ name: n })) } : {}),
            ...(config.tolerations.length ? { tolerations: config.tolerations } : {}),
            ...(Object.keys(config.affinity).length ? { affinity: config.affinity } : {}),
            ...(config.hostNetwork ? { hostNetwork: true } : {}),
            ...(priorityClassName ? { priorityClassName } : {}),
            containers: [
              {
                name: AGENT_NAME,
                image: config.image,
                imagePullPolicy: config.imagePullPolicy,
                env: [
                  { name: "NAMESPACE", value: ns },
                  { name: "AGENT_TLS_MODE", value: config.tlsMode },
                  { name: "CHECKIN_INTERVAL", value: config.checkinInterval },
                  { name: "GARBAGE_COLLECTION_INTERVAL", value: config.garbageCollectionInterval },
                  fromSecret("API_SERVER_URL", "apiServerURL"),
                  fromSecret("API_SERVER_CA", "apiServerCA"),
                  ...config.env,
                ],
                ...(Object.keys(config.resources).length ? { resources: config.resources } : {}),
              },
            ],
          },
        },
      },
    },
  };
}
