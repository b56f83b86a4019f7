/**
 * What the stack exports: the summary (per agent, GitRepo and cluster; read back by the next update's
 * guards) and one record per bundle deployment (the `deployments` output, read by status, the PR
 * summary and deploy events); read back after an update, the pairs whose BundleDeployment is not Ready.
 */
import { ResolvedAgent } from "../agent/effective";
import { FleetState } from "../plan/pipeline";
import { PlanEntry } from "../targeting/plan";
import { DeploymentFailure } from "../plan/failures";
import { deploymentKey } from "../model/keys";
import { helmOpEntryKey } from "../config/helm-op";
import { GitRepoConfig } from "../config/git-repo";
import { applied, PairReport } from "../model/pair";

export interface FleetSummary {
  /** Per cluster: the agent image and the hash of its effective configuration. */
  agents: Record<string, { image: string; pinned: boolean; configHash: string }>;
  gitRepos: Record<string, { commit: string; chart?: string; bundles: string[]; clusters: string[] }>;
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
  /** The Helm revision Fleet's agent would be at: 1 on the first deploy, one more per new deploymentID. */
  revision: number;
  /** fleet.yaml correctDrift.enabled: `npm run up` refreshes this deployment's objects first (present only when true). */
  correctDrift?: true;
  /**
   * When an update first deployed this deploymentId (ISO 8601), carried unchanged while it stays the
   * same: the metrics' deployment age. Absent in records older than it, until the deploymentId changes.
   */
  deployedAt?: string;
}

/** The record of one plan entry, as the stack's `deployments` output keeps it. */
export function deploymentRecord(e: PlanEntry, commit: string, objectCount: number, revision = 1, deployedAt?: string): DeploymentRecord {
  return {
    gitRepo: e.gitRepo,
    bundle: e.bundle,
    cluster: e.cluster,
    target: e.target,
    deploymentId: e.deploymentId,
    commit,
    namespace: e.namespace,
    paused: e.paused,
    objectCount,
    revision,
    ...(e.options.correctDrift?.enabled ? { correctDrift: true as const } : {}),
    ...(deployedAt ? { deployedAt } : {}),
  };
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The plan's order within a cluster. */
const byRepoThenBundle = (a: { gitRepo: string; bundle: string }, b: { gitRepo: string; bundle: string }) =>
  a.gitRepo !== b.gitRepo ? (a.gitRepo < b.gitRepo ? -1 : 1) : a.bundle < b.bundle ? -1 : a.bundle > b.bundle ? 1 : 0;

/** Plan entries grouped by cluster, once: filtering the whole plan per cluster is quadratic at fleet scale. */
export function entriesByCluster(entries: PlanEntry[]): Map<string, PlanEntry[]> {
  const out = new Map<string, PlanEntry[]>();
  for (const e of entries) {
    const list = out.get(e.cluster);
    if (list) list.push(e);
    else out.set(e.cluster, [e]);
  }
  return out;
}

/**
 * `held`: the records of failed deployments that keep what they deployed (they count as deployed).
 * `before`: the last update's GitRepo records, whose HelmOp entry keys stay while the HelmOp is not read.
 */
export function summarize(
  state: FleetState,
  agents: Map<string, ResolvedAgent>,
  held: DeploymentRecord[] = [],
  before: Record<string, { chart?: string }> = {},
): FleetSummary {
  const { config, plan } = state;
  const byCluster = entriesByCluster(plan.entries);
  return {
    agents: Object.fromEntries(
      [...agents.keys()].sort().map((name) => {
        const a = agents.get(name)!;
        return [name, { image: a.config.image, pinned: a.pinned, configHash: a.hash }];
      }),
    ),
    gitRepos: Object.fromEntries(
      [...config.gitRepos].sort(byName).map((r) => [
        r.name,
        {
          // A GitRepo that could not be read keeps the commit its held deployments were deployed from.
          commit: state.sources.get(r.name)?.commit ?? held.find((h) => h.gitRepo === r.name)?.commit ?? "",
          ...helmOpKey(r, state.sources.has(r.name), before[r.name]?.chart),
          bundles: [
            ...new Set([
              ...state.bundles.filter((b) => b.gitRepo === r.name).map((b) => b.name),
              ...held.filter((h) => h.gitRepo === r.name).map((h) => h.bundle),
            ]),
          ].sort(),
          clusters: [...new Set([...plan.entries, ...held].filter((e) => e.gitRepo === r.name).map((e) => e.cluster))].sort(),
        },
      ]),
    ),
    clusters: Object.fromEntries(
      [...config.clusters]
        .sort(byName)
        .map((c) => [
          c.name,
          [...(byCluster.get(c.name) ?? []), ...held.filter((h) => h.cluster === c.name)]
            .sort(byRepoThenBundle)
            .map((e) => `${e.bundle} ${e.deploymentId.slice(-12)}`),
        ]),
    ),
  };
}

/**
 * The pairs whose BundleDeployment did not reach Ready in the last update, as Fleet reports them: the
 * provider's state (ErrApplied: the API server refused an object; NotReady: not ready within the
 * timeout; WaitApplied: waiting for a dependsOn or rollout gate) and its messages, naming each object
 * with the server's words. Each kept what it had; the next `up` tries it again.
 */
export function pairFailures(states: Record<string, PairReport>, records: Record<string, DeploymentRecord>): DeploymentFailure[] {
  const out: DeploymentFailure[] = [];
  for (const [key, r] of Object.entries(states)) {
    if (applied(r.state)) continue;
    const record = records[key];
    if (!record) continue;
    const reason = `${r.state}: ${r.messages.length ? r.messages.join("; ") : "no message"}`;
    out.push({
      gitRepo: record.gitRepo,
      bundle: record.bundle,
      cluster: record.cluster,
      reason,
      message: `gitRepo ${record.gitRepo}, bundle ${record.bundle}, cluster ${record.cluster}: ${reason}`,
      ...(r.appliedDeploymentId ? { kept: { deploymentId: r.appliedDeploymentId, objects: record.objectCount } } : {}),
    });
  }
  return out.sort((a, b) => (deploymentKey(a) < deploymentKey(b) ? -1 : 1));
}

/** A HelmOp's entry key (core/desired/previous.ts keptHelmOpVersion): the one its version was resolved for, kept while it is not read. */
function helmOpKey(r: GitRepoConfig, read: boolean, before: string | undefined): { chart?: string } {
  if (!r.helmOp) return {};
  const chart = read ? helmOpEntryKey(r.helmOp) : before;
  return chart ? { chart } : {};
}
