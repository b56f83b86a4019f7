/**
 * The plan: one entry per (bundle, cluster) that Fleet would create a BundleDeployment for, with the
 * matched target, merged options, final helm values, namespace and deploymentId. Deterministic: the
 * entries are sorted by GitRepo, bundle and cluster, so reordering any list in the stack file changes
 * nothing.
 */
import { FleetError } from "../errors";
import { sha256Hex, stableJson } from "../hash";
import { helmReleaseNameOf } from "../naming";
import { ClusterConfig, ClusterGroupConfig } from "../config/stack";
import { Bundle, DeploymentOptions } from "../bundles/types";
import { selectorMatches } from "./selector";
import { clusterViews, matchBundle } from "./match";
import { mergeOptions, optionsOf } from "./merge";
import { templateHelmValues } from "./values";

export const REPO_NAME_LABEL = "fleet.cattle.io/repo-name";

export interface PlanEntry {
  gitRepo: string;
  bundle: string;
  cluster: string;
  /** Name of the target that selected the cluster. */
  target: string;
  /** Names of the customizations applied, in order. */
  customizations: string[];
  options: DeploymentOptions;
  /** The namespace objects without one land in (fleet.yaml namespace, else defaultNamespace, else "default"). */
  namespace: string;
  releaseName: string;
  manifestId: string;
  deploymentId: string;
  paused: boolean;
  /** Bundles (same cluster) this one waits for. */
  dependsOn: string[];
}

export interface Plan {
  entries: PlanEntry[];
  /** (bundle, cluster) pairs skipped by doNotDeploy, for explanations. */
  skipped: { gitRepo: string; bundle: string; cluster: string; target: string }[];
}

/** Fleet's DeploymentID: manifestID + ":" + sha256 of the options without diff and correctDrift. */
export function deploymentIdOf(manifestId: string, options: DeploymentOptions): string {
  const { diff: _diff, correctDrift: _drift, ...rest } = options;
  return `${manifestId}:${sha256Hex(stableJson(rest))}`;
}

export function buildPlan(bundles: Bundle[], clusters: ClusterConfig[], groups: ClusterGroupConfig[]): Plan {
  const views = clusterViews(clusters, groups);
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const entries: PlanEntry[] = [];
  const skipped: Plan["skipped"] = [];
  // Two passes: match and merge everything, then template every cluster's helm values in one batch.
  const pending: { entry: Omit<PlanEntry, "options" | "namespace" | "deploymentId">; base: DeploymentOptions; cluster: ClusterConfig }[] = [];
  for (const bundle of bundles) {
    // Merged options depend on the bundle and the matched targets only, not on the cluster: merge once
    // per combination, so a 1,000-cluster fleet does not merge (and clone) the same options 1,000 times.
    const merged = new Map<string, DeploymentOptions>();
    const releaseName = helmReleaseNameOf(bundle.name);
    for (const view of views) {
      const match = matchBundle(bundle, view);
      if (!match) continue;
      if (match.doNotDeploy) {
        skipped.push({ gitRepo: bundle.gitRepo, bundle: bundle.name, cluster: view.name, target: match.target.name });
        continue;
      }
      const cluster = byName.get(view.name)!;
      const key = [match.target.name, ...match.customizations.map((c) => c.name)].join("\u0000");
      let base = merged.get(key);
      if (!base) {
        base = mergeOptions(bundle.options, customOptions(bundle, match));
        merged.set(key, base);
      }
      pending.push({
        entry: {
          gitRepo: bundle.gitRepo,
          bundle: bundle.name,
          cluster: cluster.name,
          target: match.target.name,
          customizations: match.customizations.map((c) => c.name),
          releaseName: base.helm?.releaseName || releaseName,
          manifestId: bundle.manifestId,
          paused: bundle.paused,
          dependsOn: [],
        },
        base,
        cluster,
      });
    }
  }
  const withHelm = pending.filter((p) => p.base.helm);
  const templated = templateHelmValues(withHelm.map((p) => ({ helm: p.base.helm!, cluster: p.cluster, ctx: { gitRepo: p.entry.gitRepo, bundle: p.entry.bundle } })));
  const helmOf = new Map(withHelm.map((p, i) => [p, templated[i]]));
  for (const p of pending) {
    const helm = helmOf.get(p);
    const options = helm && helm !== p.base.helm ? { ...p.base, helm } : p.base;
    entries.push({
      ...p.entry,
      options,
      namespace: options.namespace || options.defaultNamespace || "default",
      deploymentId: deploymentIdOf(p.entry.manifestId, options),
    });
  }
  resolveDependencies(entries, bundles);
  const order = (e: { gitRepo: string; bundle: string; cluster: string }) => `${e.gitRepo}\u0000${e.bundle}\u0000${e.cluster}`;
  entries.sort((a, b) => (order(a) < order(b) ? -1 : 1));
  skipped.sort((a, b) => (order(a) < order(b) ? -1 : 1));
  return { entries, skipped };
}

/** FirstMatch: the first customization's options; AllMatches: all of them merged over the target's. */
function customOptions(bundle: Bundle, match: NonNullable<ReturnType<typeof matchBundle>>): DeploymentOptions {
  let custom = optionsOf(match.target as never);
  if (bundle.targetCustomizationMode === "AllMatches") {
    for (const c of match.customizations) custom = mergeOptions(custom, optionsOf(c as never));
  } else if (match.customizations[0]) {
    custom = optionsOf(match.customizations[0] as never);
  }
  return custom;
}

/** dependsOn by name or label selector; the dependency must be deployed to the same cluster. */
function resolveDependencies(entries: PlanEntry[], bundles: Bundle[]): void {
  const onCluster = new Map<string, Set<string>>();
  for (const e of entries) {
    if (!onCluster.has(e.cluster)) onCluster.set(e.cluster, new Set());
    onCluster.get(e.cluster)!.add(e.bundle);
  }
  const bundleByName = new Map(bundles.map((b) => [b.name, b]));
  for (const e of entries) {
    const bundle = bundleByName.get(e.bundle)!;
    const deps = new Set<string>();
    for (const d of bundle.dependsOn) {
      const names = d.name
        ? [d.name]
        : bundles.filter((b) => b.name !== bundle.name && selectorMatches(d.selector!, { ...b.labels, [REPO_NAME_LABEL]: b.gitRepo })).map((b) => b.name);
      for (const n of names) {
        if (!onCluster.get(e.cluster)?.has(n)) {
          throw new FleetError(`dependsOn ${n}, which is not deployed to this cluster (it would never become ready)`, {
            gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: bundle.fleetYaml, field: "dependsOn",
          });
        }
        deps.add(n);
      }
    }
    e.dependsOn = [...deps].sort();
  }
}
