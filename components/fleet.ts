/**
 * The whole fleet as one component: clusters (providers and namespaces), GitRepos, and one
 * BundleDeployment per plan entry under its GitRepo and its cluster's provider. Everything is keyed by
 * names and registered in sorted order, so reordering any list in the stack file changes nothing.
 */
import * as pulumi from "@pulumi/pulumi";
import { FleetError } from "../core/errors";
import { resolveAgents, ResolvedAgent } from "../core/agent/effective";
import { Agent } from "./agent";
import { FleetState } from "../core/pipeline";
import { PlanEntry } from "../core/targeting/plan";
import { BundleDeployment, checkObjectLabels, deploymentName } from "./bundle-deployment";
import { RenderedDeployment, renderDeployments } from "../core/render/deployments";
import { Cluster } from "./cluster";
import { GitRepo } from "./git-repo";
import { namespacesForCluster, NamespaceSpec } from "./namespaces";
import { unchangedDeployments } from "../core/targeting/plan";
import { AccountProviders, accountProviders } from "../core/service-accounts";
import { arrivedClusters, PreviousDeployment } from "./previous";

/** A moved-in cluster's components were moved to the root of the state (arrivedClusters). */
const fromStateRoot = (arrived: boolean): pulumi.Alias[] => (arrived ? [{ parent: pulumi.rootStackResource }] : []);

export const FLEET_TYPE = "pulumi-fleet:index:Fleet";

export interface FleetSummary {
  /** Per cluster: the agent image and the hash of its effective configuration. */
  agents: Record<string, { image: string; pinned: boolean; configHash: string }>;
  gitRepos: Record<string, { commit: string; bundles: string[]; clusters: string[] }>;
  /** Per cluster: "<bundle> <last 12 characters of the deploymentId>". */
  clusters: Record<string, string[]>;
}

export interface DeploymentRecord {
  gitRepo: string;
  bundle: string;
  cluster: string;
  /** The GitRepo target that selected the cluster (named in prune explanations). */
  target: string;
  deploymentId: string;
  commit: string;
  namespace: string;
  paused: boolean;
  objectCount: number;
  /** fleet.yaml correctDrift.enabled: `npm run up` refreshes this deployment's objects first (present only when true). */
  correctDrift?: true;
}

/** The record of one plan entry, as the stack's `deployments` output keeps it. */
export function deploymentRecord(e: PlanEntry, commit: string, objectCount: number): DeploymentRecord {
  return {
    gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, target: e.target, deploymentId: e.deploymentId,
    commit, namespace: e.namespace, paused: e.paused, objectCount, ...(e.options.correctDrift?.enabled ? { correctDrift: true as const } : {}),
  };
}

/** Everything that can fail, computed before the first registration: rendered objects (labels checked) and namespaces. */
export interface PreparedFleet {
  rendered: Map<PlanEntry, RenderedDeployment>;
  /** Deployments with the deploymentId the last update deployed: their comparePatches fields are ignored. */
  unchanged: Set<PlanEntry>;
  namespaces: Map<string, NamespaceSpec[]>;
  agents: Map<string, ResolvedAgent>;
  /** serviceAccount: whom each deployment is applied as, and the kubeconfigs acting as them. */
  accounts: AccountProviders;
  /** Clusters the last update of this stack did not deploy (components/previous.ts arrivedClusters). */
  arrived: ReadonlySet<string>;
}

export function prepareFleet(state: FleetState, previous?: PreviousDeployment, leftOut?: ReadonlySet<string>): PreparedFleet {
  const previousIds = previous?.deploymentIds;
  const rendered = renderDeployments(state.plan.entries, state.bundles, (gitRepo) => state.sources.get(gitRepo)!.commit);
  for (const [e, r] of rendered) checkObjectLabels(r.objects, e);
  const agents = resolveAgents(state.config);
  const byCluster = entriesByCluster(state.plan.entries);
  const namespaces = new Map<string, NamespaceSpec[]>();
  for (const c of state.config.clusters) {
    const entries = byCluster.get(c.name) ?? [];
    const byBundle = new Map(entries.map((e) => [e.bundle, rendered.get(e)!.objects]));
    // The agent owns its namespace; a bundle deploying into it must not create it a second time.
    const agentNs = agents.get(c.name)!.config.namespace;
    namespaces.set(c.name, namespacesForCluster(c.name, entries, byBundle).filter((ns) => ns.name !== agentNs));
  }
  const accounts = accountProviders(state.plan.entries, state.config.clusters, (c) => agents.get(c)!.config.namespace, !!state.config.renderDir, { skip: leftOut });
  for (const e of state.plan.entries) {
    const unread = e.options.serviceAccount ? undefined : accounts.unread.get(e.cluster);
    if (unread) rendered.get(e)!.warnings.push(`serviceAccount: ${unread}`);
  }
  return {
    rendered, namespaces, agents, accounts, unchanged: unchangedDeployments(state.plan.entries, previousIds),
    arrived: arrivedClusters(state.config.clusters.map((c) => c.name), previous),
  };
}

/** Plan entries grouped by cluster, once: filtering the whole plan per cluster is quadratic at fleet scale. */
function entriesByCluster(entries: PlanEntry[]): Map<string, PlanEntry[]> {
  const out = new Map<string, PlanEntry[]>();
  for (const e of entries) {
    const list = out.get(e.cluster);
    if (list) list.push(e);
    else out.set(e.cluster, [e]);
  }
  return out;
}

export class Fleet extends pulumi.ComponentResource {
  readonly clusters = new Map<string, Cluster>();
  readonly gitRepos = new Map<string, GitRepo>();
  readonly deployments = new Map<string, BundleDeployment>();
  readonly agents = new Map<string, Agent>();
  readonly summary: FleetSummary;
  readonly deploymentRecords: pulumi.Output<Record<string, DeploymentRecord>>;

  constructor(name: string, state: FleetState, prepared: PreparedFleet, opts: pulumi.ComponentResourceOptions = {}) {
    super(FLEET_TYPE, name, {}, opts);
    const { config, plan } = state;
    const bundles = new Map(state.bundles.map((b) => [b.name, b]));
    const commitOf = (gitRepo: string) => state.sources.get(gitRepo)!.commit;

    for (const c of [...config.clusters].sort(byName)) {
      const cluster = new Cluster(c.name, {
        config: c, renderDir: config.renderDir, namespaces: prepared.namespaces.get(c.name) ?? [],
        accounts: prepared.accounts.kubeconfigs.get(c.name), arrived: prepared.arrived.has(c.name),
      }, { parent: this, aliases: fromStateRoot(prepared.arrived.has(c.name)) });
      this.clusters.set(c.name, cluster);
      this.agents.set(c.name, new Agent(c.name, { cluster: c.name, agent: prepared.agents.get(c.name)!, provider: cluster.provider }, { parent: cluster }));
    }

    this.summary = summarize(state, prepared.agents);
    for (const repo of [...config.gitRepos].sort(byName)) {
      this.gitRepos.set(repo.name, new GitRepo(repo.name, this.summary.gitRepos[repo.name], { parent: this }));
    }

    const entryByKey = new Map(plan.entries.map((e) => [deploymentName(e), e]));
    const inProgress = new Set<string>();
    const register = (entry: PlanEntry): BundleDeployment => {
      const key = deploymentName(entry);
      const done = this.deployments.get(key);
      if (done) return done;
      if (inProgress.has(key)) {
        throw new FleetError(`dependsOn forms a cycle through ${[...inProgress].join(" -> ")}`, { gitRepo: entry.gitRepo, bundle: entry.bundle, cluster: entry.cluster, field: "dependsOn" });
      }
      inProgress.add(key);
      const dependsOn = entry.dependsOn.map((d) => register(entryByKey.get(deploymentName({ bundle: d, cluster: entry.cluster }))!));
      inProgress.delete(key);
      const cluster = this.clusters.get(entry.cluster)!;
      const deployment = new BundleDeployment(key, {
        entry, bundle: bundles.get(entry.bundle)!, commit: commitOf(entry.gitRepo),
        provider: cluster.providerFor(prepared.accounts.userOf.get(entry)), namespaces: cluster.namespaces, objects: prepared.rendered.get(entry)!.objects, dependsOn,
        warnings: prepared.rendered.get(entry)!.warnings, kept: prepared.rendered.get(entry)!.kept,
        ignoredFields: prepared.unchanged.has(entry) ? prepared.rendered.get(entry)!.ignoredFields : undefined,
      }, { parent: this.gitRepos.get(entry.gitRepo)!, aliases: fromStateRoot(prepared.arrived.has(entry.cluster)) });
      this.deployments.set(key, deployment);
      return deployment;
    };
    for (const entry of plan.entries) register(entry);

    this.deploymentRecords = pulumi.all([...this.deployments.entries()].map(([key, d]) => {
      const e = entryByKey.get(key)!;
      return d.objectCount.apply((objectCount): [string, DeploymentRecord] => [key, deploymentRecord(e, commitOf(e.gitRepo), objectCount)]);
    })).apply((pairs) => Object.fromEntries(pairs));
    this.registerOutputs({ summary: this.summary, deployments: this.deploymentRecords });
  }
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function summarize(state: FleetState, agents: Map<string, ResolvedAgent>): FleetSummary {
  const { config, plan } = state;
  const byCluster = entriesByCluster(plan.entries);
  return {
    agents: Object.fromEntries([...agents.keys()].sort().map((name) => {
      const a = agents.get(name)!;
      return [name, { image: a.config.image, pinned: a.pinned, configHash: a.hash }];
    })),
    gitRepos: Object.fromEntries([...config.gitRepos].sort(byName).map((r) => [r.name, {
      commit: state.sources.get(r.name)!.commit,
      bundles: state.bundles.filter((b) => b.gitRepo === r.name).map((b) => b.name).sort(),
      clusters: [...new Set(plan.entries.filter((e) => e.gitRepo === r.name).map((e) => e.cluster))].sort(),
    }])),
    clusters: Object.fromEntries([...config.clusters].sort(byName).map((c) => [c.name,
      (byCluster.get(c.name) ?? []).map((e) => `${e.bundle} ${e.deploymentId.slice(-12)}`)])),
  };
}
