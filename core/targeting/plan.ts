/**
 * The plan: one entry per (bundle, cluster) that Fleet would create a BundleDeployment for, with the
 * matched target, merged options, final helm values, namespace and deploymentId. Deterministic: the
 * entries are sorted by GitRepo, bundle and cluster, so reordering any list in the stack file changes
 * nothing.
 */
import { FleetError } from "../base/errors";
import { bundleRef, deploymentKey } from "../model/keys";
import { sha256Hex, stableJson } from "../base/hash";
import { helmReleaseNameOf } from "../base/naming";
import { ClusterConfig, ClusterGroupConfig } from "../config/stack";
import { Bundle, DeploymentOptions } from "../bundles/types";
import { ClusterMatch, decideTargets, MatchResult } from "./match";
import { resolveDependencies } from "./depends-on";
import { mergeOptions, optionsOf } from "./merge";
import { templateHelmValues, templateHelmValuesEach, ValuesJob } from "./values";
import { runRenderer } from "../renderer/fleet-render";
import { Renderer } from "../model/renderer-protocol";

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
  /** Bundles (same cluster) this one waits for, as bundle refs (core/model/keys.ts). */
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

/**
 * The plan entries whose deploymentId (manifest and options) is the one the last update deployed,
 * from the stack's `deployments` output, keyed by deploymentKey.
 */
export function unchangedDeployments(entries: PlanEntry[], deployed: Record<string, string> | undefined): Set<PlanEntry> {
  return new Set(entries.filter((e) => deployed?.[deploymentKey(e)] === e.deploymentId));
}

/**
 * deploymentIdOf for the entries of one merged options object (`base`) whose helm options differ only
 * in `values`, as templateHelmValues returns them (one per cluster): the base's stable JSON is made once
 * with a slot where the values go, and each distinct values object is serialised once. Equal to
 * deploymentIdOf by construction (stableJson sorts keys at every level, so the values' text lands in
 * the slot); a base whose JSON holds the slot's marker itself falls back to deploymentIdOf.
 */
export class DeploymentIds {
  private static readonly SLOT = "\u0000pulumi-fleet:helm.values\u0000";
  private readonly around = new Map<DeploymentOptions, [before: string, after: string] | null>();
  private readonly valuesJson = new Map<unknown, string>();
  private readonly plain = new Map<DeploymentOptions, [manifestId: string, id: string]>();

  /** The deploymentId of `{ ...base, helm }`, where helm is base.helm or base.helm with other values. */
  of(manifestId: string, base: DeploymentOptions, helm: DeploymentOptions["helm"]): string {
    if (!helm || helm === base.helm) {
      const cached = this.plain.get(base);
      if (cached?.[0] === manifestId) return cached[1];
      const id = deploymentIdOf(manifestId, base);
      this.plain.set(base, [manifestId, id]);
      return id;
    }
    let around = this.around.get(base);
    if (around === undefined) {
      const { diff: _diff, correctDrift: _drift, ...rest } = base;
      const parts = stableJson({ ...rest, helm: { ...base.helm, values: DeploymentIds.SLOT } }).split(JSON.stringify(DeploymentIds.SLOT));
      around = parts.length === 2 ? [parts[0], parts[1]] : null;
      this.around.set(base, around);
    }
    if (!around || helm.values === undefined) return deploymentIdOf(manifestId, { ...base, helm });
    let json = this.valuesJson.get(helm.values);
    if (json === undefined) this.valuesJson.set(helm.values, (json = stableJson(helm.values)));
    return `${manifestId}:${sha256Hex(around[0] + json + around[1])}`;
  }
}

/**
 * How a plan isolates failures: a (bundle, cluster) pair whose helm values cannot be templated or whose
 * dependsOn cannot be met goes to `onFailure` and is left out; `unread` names bundles of the GitRepos
 * that could not be read (a dependency on one waits for it). Without it the first failure is thrown.
 */
export interface PlanIsolation {
  onFailure: (pair: { gitRepo: string; bundle: string; cluster: string }, err: FleetError) => void;
  /** Bundles that could not be read, by bundle ref. */
  unread: ReadonlySet<string>;
  /**
   * "warn": a dependsOn naming no bundle that was read (outside the paths read) is a warning on the
   * bundle, not a failure, and the entry is planned without it. Only `render` of a subset sets it, as
   * `fleet test` renders such a bundle; `up` refuses it (Fleet's agent would wait for it forever).
   */
  dependenciesNotRead?: "warn";
}

/** The plan of `bundles` on `clusters`, their targets matched here: for a plan alone (tests, benchmarks); a run decides its targets once (decideTargets) and plans with planTargets. */
export async function buildPlan(
  bundles: Bundle[],
  clusters: ClusterConfig[],
  groups: ClusterGroupConfig[],
  render: Renderer = runRenderer,
  isolation?: PlanIsolation,
): Promise<Plan> {
  return planTargets(bundles, clusters, decideTargets({ clusters, clusterGroups: groups }, bundles).bundles, render, isolation);
}

/**
 * The plan from the matches targeting decided (match.ts `Targeting.bundles`: per bundle, the clusters
 * it goes to and how). `render` templates helm values in fleet-render (the real one unless a test gives a fake).
 */
export async function planTargets(
  bundles: Bundle[],
  clusters: ClusterConfig[],
  matches: ReadonlyMap<Bundle, ClusterMatch[]>,
  render: Renderer = runRenderer,
  isolation?: PlanIsolation,
): Promise<Plan> {
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const skipped: Plan["skipped"] = [];
  // Two passes: match and merge everything, then template every cluster's helm values in one batch.
  // Sized for tens of thousands of (bundle, cluster) pairs: per pair, only lookups and one entry.
  const pending: { bundle: Bundle; combination: Combination; cluster: ClusterConfig }[] = [];
  for (const bundle of bundles) {
    // Merged options depend on the bundle and the matched targets only, not on the cluster: merge once
    // per combination, so a 1,000-cluster fleet does not merge (and clone) the same options 1,000 times.
    const combinations = new Map<string, Combination>();
    for (const match of matches.get(bundle) ?? []) {
      if (match.doNotDeploy) {
        skipped.push({ gitRepo: bundle.gitRepo, bundle: bundle.name, cluster: match.cluster, target: match.target.name });
        continue;
      }
      let key = match.target.name;
      for (const c of match.customizations) key += `\u0000${c.name}`;
      let combination = combinations.get(key);
      if (!combination) {
        const base = mergeOptions(bundle.options, customOptions(bundle, match));
        combination = {
          base,
          target: match.target.name,
          customizations: Object.freeze(match.customizations.map((c) => c.name)) as string[],
          releaseName: base.helm?.releaseName || helmReleaseNameOf(bundle.name),
        };
        combinations.set(key, combination);
      }
      pending.push({ bundle, combination, cluster: byName.get(match.cluster)! });
    }
  }
  const helmJobs: ValuesJob[] = [];
  for (const p of pending) {
    const helm = p.combination.base.helm;
    if (helm) helmJobs.push({ helm, cluster: p.cluster, ctx: { gitRepo: p.bundle.gitRepo, bundle: p.bundle.name } });
  }
  const templated = isolation ? await templateHelmValuesEach(helmJobs, render) : await templateHelmValues(helmJobs, render);
  // Entries with the same base and the same templated helm options share one options object.
  const sharedOptions = new Map<DeploymentOptions, Map<unknown, DeploymentOptions>>();
  const ids = new DeploymentIds();
  let h = 0;
  const failedHere = new Set<string>();
  const entries: PlanEntry[] = pending.flatMap(({ bundle, combination, cluster }) => {
    const base = combination.base;
    let options = base;
    const helm = base.helm ? templated[h++] : undefined;
    if (helm instanceof FleetError) {
      isolation!.onFailure({ gitRepo: bundle.gitRepo, bundle: bundle.name, cluster: cluster.name }, helm);
      failedHere.add(`${cluster.name}\u0000${bundleRef({ gitRepo: bundle.gitRepo, bundle: bundle.name })}`);
      return [];
    }
    if (helm && helm !== base.helm) {
      const byHelm = sharedOptions.get(base) ?? sharedOptions.set(base, new Map()).get(base)!;
      options = byHelm.get(helm) ?? byHelm.set(helm, { ...base, helm }).get(helm)!;
    }
    return [
      {
        gitRepo: bundle.gitRepo,
        bundle: bundle.name,
        cluster: cluster.name,
        target: combination.target,
        customizations: combination.customizations,
        options,
        namespace: options.namespace || options.defaultNamespace || "default",
        releaseName: combination.releaseName,
        manifestId: bundle.manifestId,
        deploymentId: ids.of(bundle.manifestId, base, options.helm),
        paused: bundle.paused,
        dependsOn: NO_DEPENDENCIES,
      },
    ];
  });
  const planned = resolveDependencies(entries, bundles, isolation, failedHere);
  planned.sort(byRepoBundleCluster);
  skipped.sort(byRepoBundleCluster);
  return { entries: planned, skipped };
}

/** The merged options of one (target, customizations) combination of a bundle, shared by its entries. */
interface Combination {
  base: DeploymentOptions;
  target: string;
  customizations: string[];
  releaseName: string;
}

// Shared by entries, so frozen: writing into it would change every entry.
const NO_DEPENDENCIES = Object.freeze([]) as unknown as string[];

/** By GitRepo, then bundle, then cluster: field by field, so sorting 50,000 entries builds no strings. */
function byRepoBundleCluster(a: { gitRepo: string; bundle: string; cluster: string }, b: typeof a): number {
  if (a.gitRepo !== b.gitRepo) return a.gitRepo < b.gitRepo ? -1 : 1;
  if (a.bundle !== b.bundle) return a.bundle < b.bundle ? -1 : 1;
  return a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0;
}

/** FirstMatch: the first customization's options; AllMatches: all of them merged over the target's. */
function customOptions(bundle: Bundle, match: MatchResult): DeploymentOptions {
  let custom = optionsOf(match.target as never);
  if (bundle.targetCustomizationMode === "AllMatches") {
    for (const c of match.customizations) custom = mergeOptions(custom, optionsOf(c as never));
  } else if (match.customizations[0]) {
    custom = optionsOf(match.customizations[0] as never);
  }
  return custom;
}
