/**
 * Fleet's target matcher (bundlematch.go / clustermatcher.go) and every question it answers, decided
 * once per run as one value (`decideTargets`): criteria of a target are ANDed, a target with no
 * criteria matches nothing, and a cluster in several groups matches when any group satisfies the
 * target. GitRepo targets decide *whether* a cluster gets the bundle (first match, and only if the
 * cluster passes the allow-list); fleet.yaml targets and targetCustomizations decide *how*. The plan,
 * the reach check, the operator's Secrets, the maintenance windows and the rollouts read the answers;
 * none of them matches a target itself.
 */
import { DEFAULT_TARGET, TargetCriteria } from "../config/target-criteria";
import { LabelSelector, selectorMatches } from "../model/selector";
import { Bundle, BundleTarget, RolloutStrategy } from "../bundles/types";

/** Fleet lets clusterName also match Rancher's display-name label. */
export const CLUSTER_DISPLAY_NAME_LABEL = "management.cattle.io/cluster-display-name";

export interface ClusterView {
  name: string;
  labels: Record<string, string>;
  /** Group name to group labels, for the groups whose selector matches this cluster. */
  groups: Map<string, Record<string, string>>;
}

/** What targeting reads of a cluster and of a cluster group (the stack's ClusterConfig and ClusterGroupConfig). */
export interface TargetedCluster {
  name: string;
  labels: Record<string, string>;
}
export interface TargetingGroup {
  name: string;
  labels: Record<string, string>;
  selector: LabelSelector;
}

export function clusterViews(clusters: TargetedCluster[], groups: TargetingGroup[]): ClusterView[] {
  return clusters.map((c) => {
    const member = new Map<string, Record<string, string>>();
    for (const g of [...groups].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (selectorMatches(g.selector, c.labels)) member.set(g.name, g.labels);
    }
    return { name: c.name, labels: c.labels, groups: member };
  });
}

function criteriaHold(t: TargetCriteria, cluster: ClusterView, group: string, groupLabels: Record<string, string>): boolean {
  let any = false;
  if (t.clusterName) {
    any = true;
    if (t.clusterName !== cluster.name && cluster.labels[CLUSTER_DISPLAY_NAME_LABEL] !== t.clusterName) return false;
  }
  if (t.clusterGroup) {
    any = true;
    if (t.clusterGroup !== group) return false;
  }
  if (t.clusterGroupSelector) {
    any = true;
    if (!selectorMatches(t.clusterGroupSelector, groupLabels)) return false;
  }
  if (t.clusterSelector) {
    any = true;
    if (!selectorMatches(t.clusterSelector, cluster.labels)) return false;
  }
  return any;
}

/** Whether the target matches the cluster through any of its groups (or with no group at all). */
export function targetMatches(t: TargetCriteria, cluster: ClusterView): boolean {
  if (cluster.groups.size === 0) return criteriaHold(t, cluster, "", NO_LABELS);
  for (const [group, labels] of cluster.groups) if (criteriaHold(t, cluster, group, labels)) return true;
  return false;
}

const NO_LABELS: Record<string, string> = Object.freeze({}) as Record<string, string>;

function sameGroupMatch(t: TargetCriteria, restrictions: TargetCriteria[], cluster: ClusterView): boolean {
  if (cluster.groups.size === 0) return holdWithRestriction(t, restrictions, cluster, "", NO_LABELS);
  for (const [group, labels] of cluster.groups) if (holdWithRestriction(t, restrictions, cluster, group, labels)) return true;
  return false;
}

function holdWithRestriction(t: TargetCriteria, restrictions: TargetCriteria[], cluster: ClusterView, group: string, labels: Record<string, string>): boolean {
  if (!criteriaHold(t, cluster, group, labels)) return false;
  for (const r of restrictions) if (criteriaHold(r, cluster, group, labels)) return true;
  return false;
}

export interface MatchResult {
  /** The GitRepo (or overrideTargets) target that selected the cluster. */
  target: BundleTarget;
  /** The customizations that configure it, in list order (one at most in FirstMatch mode). */
  customizations: BundleTarget[];
  doNotDeploy: boolean;
}

/** Decides whether and how a bundle goes to a cluster; undefined when no target selects it. */
export function matchBundle(bundle: Bundle, cluster: ClusterView): MatchResult | undefined {
  // bundle.targets: the customizations, then the GitRepo targets (as many as restrictions).
  const nCustom = bundle.targets.length - bundle.restrictions.length;
  let target: BundleTarget | undefined;
  for (let i = nCustom; i < bundle.targets.length && !target; i++) {
    if (sameGroupMatch(bundle.targets[i], bundle.restrictions, cluster)) target = bundle.targets[i];
  }
  if (!target) return undefined;
  const all = bundle.targetCustomizationMode === "AllMatches";
  const customizations: BundleTarget[] = [];
  for (let i = 0; i < nCustom && (all || customizations.length === 0); i++) {
    if (targetMatches(bundle.targets[i], cluster)) customizations.push(bundle.targets[i]);
  }
  return { target, customizations, doNotDeploy: !!target.doNotDeploy || customizations.some((c) => c.doNotDeploy) };
}

/** A bundle's match on one cluster. */
export interface ClusterMatch extends MatchResult {
  cluster: string;
}

/** Per explicit partition of a rolloutStrategy, the clusters its criteria match (a cluster may be in several). */
export function partitionClusters(rollout: RolloutStrategy, views: ClusterView[]): ReadonlySet<string>[] {
  return rollout.partitions.map((p) => new Set(views.filter((v) => targetMatches(p, v)).map((v) => v.name)));
}

/** What the stack and its bundles target, decided once per run. */
export interface Targeting {
  /** Per bundle, the clusters a GitRepo target selects and how, in the stack's cluster order (doNotDeploy included). */
  bundles: Map<Bundle, ClusterMatch[]>;
  /** Per GitRepo name, the clusters its stack targets select (Fleet's default target when it lists none). */
  gitRepos: Map<string, ReadonlySet<string>>;
  /** Per schedule name, the clusters it targets. */
  schedules: Map<string, ReadonlySet<string>>;
  /** Per bundle with rolloutStrategy.partitions, the clusters each partition selects, in the partitions' order. */
  partitions: Map<Bundle, ReadonlySet<string>[]>;
  /**
   * In a shard's stack, whether some bundle of the GitRepo deploys to another shard's cluster (so this
   * shard no longer deploying it is not the GitRepo emptied). Answered when asked, once per GitRepo: a
   * shard does not match every bundle against the whole environment on each run.
   */
  deploysElsewhere: (gitRepo: string) => boolean;
}

/** What of the stack targeting reads. */
export interface TargetedStack {
  clusters: TargetedCluster[];
  clusterGroups: TargetingGroup[];
  gitRepos?: { name: string; targets: TargetCriteria[] }[];
  schedules?: { name: string; targets: TargetCriteria[] }[];
  /** A shard's stack: the environment's clusters of the other shards. */
  shard?: { otherClusters: TargetedCluster[] };
}

/** Every target of the stack and of its bundles against the stack's clusters: pure, and the only place targets are matched. */
export function decideTargets(stack: TargetedStack, bundles: Bundle[]): Targeting {
  const views = clusterViews(stack.clusters, stack.clusterGroups);
  const selected = (targets: TargetCriteria[]) => new Set(views.filter((v) => targets.some((t) => targetMatches(t, v))).map((v) => v.name));
  const matches = (bundle: Bundle, on: ClusterView[]): ClusterMatch[] =>
    on.flatMap((v) => {
      const m = matchBundle(bundle, v);
      return m ? [{ ...m, cluster: v.name }] : [];
    });
  let others: ClusterView[] | undefined;
  const elsewhere = new Map<string, boolean>();
  return {
    bundles: new Map(bundles.map((b) => [b, matches(b, views)])),
    gitRepos: new Map((stack.gitRepos ?? []).map((r) => [r.name, selected(r.targets.length ? r.targets : [DEFAULT_TARGET])])),
    schedules: new Map((stack.schedules ?? []).map((s) => [s.name, selected(s.targets)])),
    partitions: new Map(bundles.flatMap((b) => (b.rolloutStrategy?.partitions.length ? [[b, partitionClusters(b.rolloutStrategy, views)]] : []))),
    deploysElsewhere: (gitRepo) => {
      others ??= clusterViews(stack.shard?.otherClusters ?? [], stack.clusterGroups);
      if (!elsewhere.has(gitRepo))
        elsewhere.set(
          gitRepo,
          bundles.some((b) => b.gitRepo === gitRepo && matches(b, others!).some((m) => !m.doNotDeploy)),
        );
      return elsewhere.get(gitRepo)!;
    },
  };
}
