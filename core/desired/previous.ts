/**
 * What the last successful update deployed (the stack's own outputs, read by the program and handed
 * in as a value). Two safety rules need it: a GitRepo that deployed to clusters must not silently drop
 * to zero (a wrong selector would wipe a fleet in one update: argo-cd#18480), and a paused GitRepo
 * stays on the commit it last deployed.
 */
import { FleetError } from "../base/errors";
import { GitRepoConfig } from "../config/git-repo";
import { helmOpEntryKey } from "../config/helm-op";
import { Plan } from "../targeting/plan";
import { clusterOfKey } from "../model/keys";
import { DeploymentRecord, FleetSummary } from "./records";

export interface DeployedGitRepo {
  commit: string;
  /** A HelmOp's chart (repo, chart, version constraint) when its version was resolved (helmOpChartKey). */
  chart?: string;
  clusters: string[];
}

export interface PreviousDeployment {
  gitRepos: Record<string, DeployedGitRepo>;
  /** The deploymentId of each BundleDeployment (deploymentKey), from the `deployments` output. */
  deploymentIds?: Record<string, string>;
  /** Whether each BundleDeployment was paused, from the same output. */
  paused?: Record<string, boolean>;
  /** Each BundleDeployment's Helm revision, from the same output (absent in records older than it). */
  revisions?: Record<string, number>;
  /** Each cluster's agent as the last update recorded it (`summary.agents`): what a paused cluster still runs. */
  agents?: FleetSummary["agents"];
  /** Every cluster the last update deployed, from `summary.clusters` (`summary.agents` in summaries older than the agent switch, when every cluster had one). */
  clusters?: string[];
  /** The `deployments` output's records with a deploymentId: what a failed deployment keeps (held.ts). */
  records?: Record<string, DeploymentRecord>;
}

/** The output the per-BundleDeployment records are exported under (index.ts). */
export const DEPLOYMENTS_OUTPUT = "deployments";

/** The output each BundleDeployment's state is exported under (components/fleet.ts); absent in stacks of earlier versions. */
export const DEPLOYMENT_STATES_OUTPUT = "deploymentStates";

/** The output each cluster's setup (its namespaces and agent) state is exported under, by cluster (components/fleet.ts). */
export const CLUSTER_SETUP_STATES_OUTPUT = "clusterSetupStates";

/** The output name the Fleet component's record is exported under (index.ts). */
export const RECORD_OUTPUT = "summary";

/**
 * The previous deployment from the outputs as the engine returns them (either may be missing on a
 * new stack, or hold anything after a hand edit): undefined when there is no usable summary. The
 * outputs are of the current layout (an earlier one is migrated first: core/migrate).
 */
export function previousFromOutputs(summary: unknown, deployments: unknown): PreviousDeployment | undefined {
  const value = summary as PreviousDeployment | undefined;
  if (!value || typeof value !== "object" || !value.gitRepos) return undefined;
  const byKey =
    deployments && typeof deployments === "object"
      ? (deployments as Record<string, { deploymentId?: string; paused?: boolean; revision?: number; gitRepo?: string }>)
      : undefined;
  const records = byKey ? Object.entries(byKey).filter(([, r]) => typeof r?.deploymentId === "string") : undefined;
  const deploymentIds = records && Object.fromEntries(records.map(([k, r]) => [k, r.deploymentId!]));
  const paused = records && Object.fromEntries(records.map(([k, r]) => [k, r.paused === true]));
  const revisions = records && Object.fromEntries(records.filter(([, r]) => typeof r.revision === "number").map(([k, r]) => [k, r.revision!]));
  const listed = value as { clusters?: unknown; agents?: unknown };
  const clusters = [listed.clusters, listed.agents].find((m): m is Record<string, unknown> => !!m && typeof m === "object");
  return {
    gitRepos: value.gitRepos,
    deploymentIds,
    ...(records ? { records: Object.fromEntries(records) as Record<string, DeploymentRecord> } : {}),
    ...(paused ? { paused } : {}),
    ...(revisions ? { revisions } : {}),
    ...(clusters ? { clusters: Object.keys(clusters) } : {}),
    ...(listed.agents && typeof listed.agents === "object" ? { agents: listed.agents as FleetSummary["agents"] } : {}),
  };
}

/**
 * Clusters this stack did not deploy last time: new ones, and ones moved in from another shard. A
 * moved-in cluster's resources sit at the root of the state (`pulumi state move` reparents what it
 * moves to the stack and drops the parents from the URNs), so the components of these clusters carry
 * that URN as an alias; after one update the cluster is deployed here and the aliases go away.
 */
export function arrivedClusters(clusters: string[], previous: PreviousDeployment | undefined): Set<string> {
  const known = new Set(previous?.clusters ?? []);
  return new Set(clusters.filter((c) => !known.has(c)));
}

/**
 * Fails when a GitRepo that matched clusters last time matches none now (unless allowEmpty). A source
 * that yields no bundles already fails in the bundle reader, before this point. In a shard's stack,
 * `deploysElsewhere` says whether the GitRepo's bundles still go to another shard's clusters: Fleet sees one environment.
 */
export function checkNothingEmptied(
  repos: GitRepoConfig[],
  plan: Plan,
  previous: PreviousDeployment | undefined,
  deploysElsewhere?: (gitRepo: string) => boolean,
): void {
  if (!previous) return;
  for (const repo of repos) {
    const before = previous.gitRepos[repo.name]?.clusters ?? [];
    if (before.length === 0 || repo.allowEmpty) continue;
    if (plan.entries.some((e) => e.gitRepo === repo.name)) continue;
    // A shard: the GitRepo is not emptied while its bundles still deploy to another shard's clusters (match.ts Targeting.deploysElsewhere).
    if (deploysElsewhere?.(repo.name)) continue;
    throw new FleetError(
      `matched ${before.length} cluster(s) in the last deployment (${before.join(", ")}) and matches none now, so this update would ` +
        `delete everything it deployed. Check the targets, cluster labels and groups; if emptying it is intended, set allowEmpty: true on this GitRepo`,
      { gitRepo: repo.name, field: "targets" },
    );
  }
}

/**
 * The commit each GitRepo deploys: the one the shard runner resolved for every shard (`commits`), and
 * for a paused GitRepo the one it last deployed, so its bundles' content does not move. A plain
 * directory's "dir-" content hash is not a commit: such a repository is read as it is.
 */
export function pinCommits(repos: GitRepoConfig[], commits: Record<string, string> | undefined, previous?: PreviousDeployment): GitRepoConfig[] {
  return repos.map((r) => {
    const record = previous?.gitRepos[r.name];
    // A paused one stays whatever was resolved for the run; a kept HelmOp version yields to a run's own (a rollback's).
    if (r.paused) return pinned(pinned(r, commits?.[r.name]), record?.commit);
    return pinned(pinned(r, keptHelmOpVersion(r, record)), commits?.[r.name]);
  });
}

/**
 * Fleet's HelmOp without polling resolves its version when its controller reconciles it (an edit of the
 * HelmOp: helmop_controller.go handleVersion, whose check is true for any constraint), and keeps it in
 * between: an `up` of an unchanged entry does not move it to a newer chart; an edited one resolves again.
 */
export function keptHelmOpVersion(repo: GitRepoConfig, record: DeployedGitRepo | undefined): string | undefined {
  if (!repo.helmOp || repo.helmOp.polled || !record?.commit) return undefined;
  return record.chart === helmOpEntryKey(repo.helmOp) ? record.commit : undefined;
}

function pinned(repo: GitRepoConfig, commit: string | undefined): GitRepoConfig {
  return commit && !commit.startsWith("dir-") ? { ...repo, revision: commit, branch: undefined } : repo;
}

/**
 * A shard's records without the clusters that now belong to other shards: their state was moved there
 * (`npm run shards -- --apply`), so they are neither this stack's to prune nor evidence that a GitRepo emptied.
 */
export function withoutClusters(previous: PreviousDeployment | undefined, clusters: string[] | undefined): PreviousDeployment | undefined {
  if (!previous || !clusters?.length) return previous;
  const gone = new Set(clusters);
  return {
    gitRepos: Object.fromEntries(Object.entries(previous.gitRepos).map(([name, r]) => [name, { ...r, clusters: r.clusters.filter((c) => !gone.has(c)) }])),
    ...(previous.clusters ? { clusters: previous.clusters.filter((c) => !gone.has(c)) } : {}),
    deploymentIds: previous.deploymentIds && Object.fromEntries(Object.entries(previous.deploymentIds).filter(([key]) => !gone.has(clusterOfKey(key)))),
    ...(previous.paused ? { paused: Object.fromEntries(Object.entries(previous.paused).filter(([key]) => !gone.has(clusterOfKey(key)))) } : {}),
    ...(previous.records ? { records: Object.fromEntries(Object.entries(previous.records).filter(([key]) => !gone.has(clusterOfKey(key)))) } : {}),
    ...(previous.revisions ? { revisions: Object.fromEntries(Object.entries(previous.revisions).filter(([key]) => !gone.has(clusterOfKey(key)))) } : {}),
  };
}
