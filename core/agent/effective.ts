/**
 * The agent configuration a cluster actually gets. Resolution per field, as Fleet's: the cluster's own
 * agent setting unless empty (for the API server URL and CA, Fleet's keys of the cluster's secret); then
 * the global setting; then the default. The API server is the Fleet management endpoint the agent
 * registers with, never the runner's route to the cluster (its kubeconfig): rotating that route must not
 * restart an agent. Only this resolved, canonical value is compared or deployed, so the same effective
 * configuration reached another way never changes a byte (fleet#3061 compared the global value with the
 * cluster's own and redeployed every agent on each restart).
 */
import { FleetError, withContext } from "../base/errors";
import { sha256Hex, stableJson } from "../base/hash";
import { StackConfig } from "../config/stack";
import { AgentSettings, Toleration } from "../config/agent-settings";
import { canonicalPem, canonicalQuantity, sortedKeys } from "./canonical";

export const DEFAULT_AGENT_NAMESPACE = "cattle-fleet-system";
export const DEFAULT_AGENT_REPOSITORY = "rancher/fleet-agent";

export interface EffectiveAgentConfig {
  namespace: string;
  image: string;
  imagePullPolicy: string;
  pullSecrets: string[];
  apiServerURL: string;
  apiServerCA: string;
  tlsMode: string;
  checkinInterval: string;
  garbageCollectionInterval: string;
  env: { name: string; value: string }[];
  tolerations: Toleration[];
  affinity: Record<string, unknown>;
  resources: { limits?: Record<string, string>; requests?: Record<string, string> };
  hostNetwork: boolean;
  priorityClass?: { value: number; preemptionPolicy?: string };
  podDisruptionBudget?: { minAvailable?: number | string; maxUnavailable?: number | string };
  labels: Record<string, string>;
}

export interface ResolvedAgent {
  config: EffectiveAgentConfig;
  /** sha256 of the canonical config: the only thing in the pod template that varies with config. */
  hash: string;
  /** True when a tag is pinned (per cluster or globally), so the platform version does not move it. Not part of the config: pinning the tag already running changes nothing. */
  pinned: boolean;
  token?: string;
}

const isEmpty = (v: unknown) =>
  v === undefined ||
  v === "" ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

function pick<K extends keyof AgentSettings>(key: K, cluster: AgentSettings, global: AgentSettings): AgentSettings[K] | undefined {
  return !isEmpty(cluster[key]) ? cluster[key] : !isEmpty(global[key]) ? global[key] : undefined;
}

/** A cluster's agent: where it lives (also where Fleet's `fleet-default` account is looked up), and its config unless `agent.enabled` is false. */
export interface ClusterAgent {
  namespace: string;
  agent?: ResolvedAgent;
}

/** Neither apiServerURL nor fleetVersion is needed by a cluster whose agent is switched off. */
export function resolveClusterAgent(clusterName: string, global: AgentSettings, cluster: AgentSettings, fleetVersion?: string): ClusterAgent {
  const namespace = pick("namespace", cluster, global) ?? DEFAULT_AGENT_NAMESPACE;
  if (pick("enabled", cluster, global) === false) return { namespace };
  return { namespace, agent: resolveAgent(clusterName, global, cluster, fleetVersion) };
}

export function resolveAgent(clusterName: string, global: AgentSettings, cluster: AgentSettings, fleetVersion?: string): ResolvedAgent {
  const get = <K extends keyof AgentSettings>(k: K) => pick(k, cluster, global);
  const tag = get("imageTag");
  if (!tag && !fleetVersion) {
    throw new FleetError("the agent image tag follows fleetVersion, which is not set; set pulumi-fleet:fleetVersion or agent.imageTag", {
      cluster: clusterName,
      field: "fleetVersion",
    });
  }
  const apiServerURL = get("apiServerURL");
  if (!apiServerURL) {
    // Fleet's controller refuses the same ("missing apiServerURL in fleet config"): without it the agent cannot register.
    throw new FleetError(
      "missing apiServerURL in fleet config: set agent.apiServerURL (or this cluster's agent.apiServerURL) to the Fleet management API server the agent registers with",
      { cluster: clusterName, field: "agent.apiServerURL" },
    );
  }
  const prefix = get("privateRepoURL");
  const repository = get("imageRepository") ?? DEFAULT_AGENT_REPOSITORY;
  const image = `${prefix ? `${prefix.replace(/\/+$/, "")}/` : ""}${repository}:${tag ?? `v${fleetVersion!.replace(/^v/, "")}`}`;
  const resources = get("resources");
  const config: EffectiveAgentConfig = {
    namespace: get("namespace") ?? DEFAULT_AGENT_NAMESPACE,
    image,
    imagePullPolicy: get("imagePullPolicy") ?? "IfNotPresent",
    pullSecrets: [...(get("pullSecrets") ?? [])].sort(),
    apiServerURL,
    apiServerCA: canonicalCA(get("apiServerCA") ?? ""),
    tlsMode: get("tlsMode") ?? "system-store",
    checkinInterval: get("checkinInterval") ?? "15m",
    garbageCollectionInterval: get("garbageCollectionInterval") ?? "15m",
    env: Object.entries(get("env") ?? {})
      .map(([name, value]) => ({ name, value }))
      .sort((a, b) => (a.name < b.name ? -1 : 1)),
    tolerations: [...(get("tolerations") ?? [])].map(sortedKeys).sort((a, b) => (stableJson(a) < stableJson(b) ? -1 : 1)),
    affinity: sortedKeys(get("affinity") ?? {}),
    resources: canonicalResources(resources),
    hostNetwork: get("hostNetwork") ?? false,
    labels: sortedKeys(get("labels") ?? {}),
  };
  const pc = get("priorityClass");
  if (pc) config.priorityClass = sortedKeys(pc);
  const pdb = get("podDisruptionBudget");
  if (pdb) config.podDisruptionBudget = pdb;
  const canonical = sortedKeys(config);
  const resolved: ResolvedAgent = { config: canonical, hash: sha256Hex(stableJson(canonical)), pinned: !!tag };
  const token = get("token");
  if (token) resolved.token = token;
  return resolved;
}

/** Every cluster's agent, from the stack's settings (read with the stack file); errors name the file, field and cluster. */
export function resolveClusterAgents(config: Pick<StackConfig, "file" | "agent" | "clusters" | "fleetVersion">): Map<string, ClusterAgent> {
  return new Map(
    config.clusters.map((c) => {
      try {
        return [c.name, resolveClusterAgent(c.name, config.agent, c.agent ?? {}, config.fleetVersion)];
      } catch (err) {
        throw withContext(err, { file: config.file });
      }
    }),
  );
}

/** The agents that are deployed: every cluster's whose agent is not switched off. */
export function deployedAgents(agents: Map<string, ClusterAgent>): Map<string, ResolvedAgent> {
  return new Map([...agents].flatMap(([name, c]) => (c.agent ? [[name, c.agent] as const] : [])));
}

export const resolveAgents = (config: StackConfig) => deployedAgents(resolveClusterAgents(config));

const canonicalCA = (ca: string) => (ca ? canonicalPem(ca) : "");

function canonicalResources(r: AgentSettings["resources"]): EffectiveAgentConfig["resources"] {
  const out: EffectiveAgentConfig["resources"] = {};
  for (const k of ["limits", "requests"] as const) {
    const m = r?.[k];
    if (m && Object.keys(m).length)
      out[k] = Object.fromEntries(
        Object.keys(m)
          .sort()
          .map((n) => [n, canonicalQuantity(m[n])]),
      );
  }
  return out;
}
