/**
 * Fleet's target matcher (bundlematch.go / clustermatcher.go): criteria of a target are ANDed, a target
 * with no criteria matches nothing, and a cluster in several groups matches when any group satisfies
 * the target. GitRepo targets decide *whether* a cluster gets the bundle (first match, and only if the
 * cluster passes the allow-list); fleet.yaml targets and targetCustomizations decide *how*.
 */
import { ClusterConfig, ClusterGroupConfig } from "../config/stack";
import { TargetCriteria } from "../config/target-criteria";
import { selectorMatches } from "./selector";
import { Bundle, BundleTarget } from "../bundles/types";

/** Fleet lets clusterName also match Rancher's display-name label. */
export const CLUSTER_DISPLAY_NAME_LABEL = "management.cattle.io/cluster-display-name";

export interface ClusterView {
  name: string;
  labels: Record<string, string>;
  /** Group name to group labels, for the groups whose selector matches this cluster. */
  groups: Map<string, Record<string, string>>;
}

export function clusterViews(clusters: ClusterConfig[], groups: ClusterGroupConfig[]): ClusterView[] {
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
