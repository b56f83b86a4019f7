/**
 * The engine's step events, attributed to what users think in: per BundleDeployment (cluster, bundle)
 * and per cluster agent. Attribution walks each resource's parent chain up to the nearest
 * BundleDeployment or Agent component, so Helm and Kustomize children count for their bundle too.
 */
import { OpType } from "@pulumi/pulumi/automation";
import { AGENT_TYPE, BUNDLE_DEPLOYMENT_TYPE, CLUSTER_TYPE } from "../../core/desired/types";
import { CLUSTER_SETUP_TYPE } from "../../core/desired/setup";
import { AGENT_BOOTSTRAP_SECRET } from "../../core/desired/agent";
import { clusterOfKey, nameOfUrn, parseDeploymentKey } from "../../core/model/keys";
import { isUnqualifiedKey } from "../../core/migrate/renames";
import { applied, withheldMessages } from "../../core/model/pair";
import { expandPairSteps } from "./pair-steps";
import { hookRuns } from "./hook-runs";
import { Step } from "./step-recorder";

// Reports read a step's name through here: they import only types from core (test/unit/reports-imports.test.ts).
export { nameOfUrn };

export interface ChangeCounts {
  created: number;
  updated: number;
  replaced: number;
  deleted: number;
}

export interface DeploymentSteps extends ChangeCounts {
  key: string;
  cluster: string;
  /** "" for an earlier version's BundleDeployment component, named "<cluster>/<bundle>" (core/migrate/renames.ts), which leaves the state. */
  gitRepo: string;
  bundle: string;
  /** The BundleDeployment itself is deleted: the bundle is pruned from the cluster. */
  pruned: boolean;
  failed: boolean;
  steps: Step[];
  /** The Helm hooks its step runs, in order ("pre-upgrade Job web/migrate": hook-runs.ts); never objects it keeps. */
  hooks?: string[];
  /** The BundleDeployment's state and messages as its provider reported them in this operation (a refresh, an apply). */
  report?: { state: string; messages: string[]; applied: boolean };
}

export interface AgentSteps extends ChangeCounts {
  cluster: string;
  /** Replaced resources ("<type> <name>"): a replaced agent Deployment restarts the agent. */
  replacements: string[];
  failed: boolean;
}

export interface GroupedSteps {
  deployments: Map<string, DeploymentSteps>;
  agents: Map<string, AgentSteps>;
  /** Clusters with an error on any of their resources (provider, namespaces, agent, bundles), sorted. */
  failedClusters: string[];
}

const COUNTED: Partial<Record<OpType, keyof ChangeCounts>> = {
  create: "created",
  update: "updated",
  replace: "replaced",
  delete: "deleted",
};

/**
 * Steps per BundleDeployment and per agent. Only custom resources (real objects) count: components
 * have no object of their own. "replace" is counted once; its create-replacement and delete-replaced
 * halves are not counted again.
 */
export function groupSteps(recorded: Step[], failedUrns: Iterable<string> = [], moving: ReadonlySet<string> = new Set()): GroupedSteps {
  const failedSet = new Set(failedUrns);
  for (const s of recorded) if (failedSet.has(s.urn)) s.failed = true;
  // Read before the expansion, which turns a pair's own step into a component's (custom: false).
  const prunes = new Set(recorded.filter(isPrune).map((s) => `${s.op} ${s.urn}`));
  const steps = expandPairSteps(recorded, moving);
  for (const s of steps) if (failedSet.has(s.urn)) s.failed = true;
  const byUrn = new Map<string, Step>();
  for (const s of steps) if (!byUrn.has(s.urn) || s.op !== "same") byUrn.set(s.urn, s);
  const ownerOf = (s: Step): Step | undefined => {
    for (let cur: Step | undefined = s, hops = 0; cur && hops < 50; cur = cur.parent ? byUrn.get(cur.parent) : undefined, hops++) {
      if (cur.type === BUNDLE_DEPLOYMENT_TYPE || cur.type === AGENT_TYPE || cur.type === CLUSTER_SETUP_TYPE) return cur;
    }
    return undefined;
  };

  const deployments = new Map<string, DeploymentSteps>();
  const agents = new Map<string, AgentSteps>();
  for (const s of steps) {
    const owner = ownerOf(s);
    if (!owner) continue;
    const name = nameOfUrn(owner.urn);
    const counted = s.custom ? COUNTED[s.op] : undefined;
    if (owner.type === BUNDLE_DEPLOYMENT_TYPE) {
      const d = deployments.get(name) ?? {
        key: name,
        ...deploymentOfName(name),
        created: 0,
        updated: 0,
        replaced: 0,
        deleted: 0,
        pruned: false,
        failed: false,
        steps: [],
      };
      deployments.set(name, d);
      const hooks = s.urn === owner.urn ? hookRuns(s) : [];
      if (hooks.length) d.hooks = hooks;
      if (s.urn === owner.urn && prunes.has(`${s.op} ${s.urn}`)) d.pruned = true;
      // A pair whose objects are a secret has its messages masked in the events (components/bundle-deployment.ts).
      if (s.urn === owner.urn && typeof s.outputs?.state === "string") {
        d.report = {
          state: s.outputs.state,
          applied: applied(s.outputs.state),
          messages: Array.isArray(s.outputs.messages) ? s.outputs.messages : s.outputs.messages ? withheldMessages("unknown") : [],
        };
      }
      if (counted) d[counted]++;
      if (s.failed) d.failed = true;
      if (s.custom && s.op !== "same") d.steps.push(s);
    } else {
      // A cluster's setup holds its namespaces and the operator's Secrets beside its agent: neither is an agent change.
      if (owner.type === CLUSTER_SETUP_TYPE && (s.type === "kubernetes:core/v1:Namespace" || isOperatorSecret(s))) continue;
      const a = agents.get(name) ?? { cluster: name, created: 0, updated: 0, replaced: 0, deleted: 0, replacements: [], failed: false };
      agents.set(name, a);
      if (counted) a[counted]++;
      if (s.custom && s.op === "replace") a.replacements.push(`${s.type} ${nameOfUrn(s.urn)}`);
      if (s.failed) a.failed = true;
    }
  }
  const failedClusters = new Set<string>();
  for (const urn of [...failedSet, ...steps.filter((s) => s.failed).map((s) => s.urn)]) {
    const cluster = clusterOfUrn(urn);
    if (cluster) failedClusters.add(cluster);
  }
  return { deployments, agents, failedClusters: [...failedClusters].sort() };
}

/** A Secret of a cluster's setup other than its agent's token: a GitRepo's downstreamResources (core/desired/operator-secrets.ts). */
const isOperatorSecret = (s: Step) => s.type === "kubernetes:core/v1:Secret" && !nameOfUrn(s.urn).endsWith(`:${AGENT_BOOTSTRAP_SECRET}`);

/**
 * A BundleDeployment step that prunes the bundle from its cluster: the pair deleted, or an earlier
 * version's deployment retired (a pair created with no deploymentID, adopting its objects to prune
 * them: core/desired/state.ts retiringDeployments). An earlier version's BundleDeployment component
 * leaving the state is no prune: its objects move into the pair that adopts them.
 */
function isPrune(s: Step): boolean {
  if (!s.custom) return false;
  return s.op === "delete" || (s.op === "create" && s.inputs?.deploymentId === "" && !!s.inputs?.adopt);
}

/** The cluster, GitRepo and bundle a BundleDeployment's name says (an earlier version's names have no GitRepo). */
function deploymentOfName(name: string): { cluster: string; gitRepo: string; bundle: string } {
  if (!isUnqualifiedKey(name)) return parseDeploymentKey(name);
  const cluster = clusterOfKey(name);
  return { cluster, gitRepo: "", bundle: name.slice(cluster.length + 1) };
}

/**
 * Every resource on a cluster is named "<cluster>/..." and the cluster's components (and an earlier
 * version's providers of it) are named "<cluster>"; the stack, its one provider and the fleet-wide
 * components belong to no cluster.
 */
/** Whether an engine resource type is a BundleDeployment's (for reports, which read no core value). */
export function isBundleDeployment(type: string): boolean {
  return type === BUNDLE_DEPLOYMENT_TYPE;
}

export function clusterOfUrn(urn: string): string | undefined {
  const type = urn.slice(0, urn.lastIndexOf("::")).split("::").pop() ?? "";
  const name = nameOfUrn(urn);
  if (name.includes("/")) return name.slice(0, name.indexOf("/"));
  const leaf = type.slice(type.lastIndexOf("$") + 1);
  if (name.includes(":")) return undefined; // the stack's one provider (core/desired/types.ts stackProviderName)
  return ["pulumi:providers:kubernetes", "pulumi:providers:pulumi-fleet", CLUSTER_TYPE, AGENT_TYPE, CLUSTER_SETUP_TYPE].includes(leaf) ? name : undefined;
}

export function hasChanges(c: ChangeCounts): boolean {
  return c.created + c.updated + c.replaced + c.deleted > 0;
}
