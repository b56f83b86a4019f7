/**
 * fleet.yaml dependsOn, resolved to bundle refs (core/model/keys.ts) on each cluster. Fleet's agent
 * lists the BundleDeployments of the dependant's cluster matching `name` (the label
 * fleet.cattle.io/bundle-name, in the bundle's workspace) and `selector` (the bundle's labels, which
 * carry fleet.cattle.io/repo-name), both ANDed, and deploys nothing while none is found or one is not
 * Ready (internal/cmd/agent/deployer/deployer.go, checkDependency).
 *
 * What differs, on purpose: in Fleet a bundle name is the workspace's (a second GitRepo's bundle of
 * that name replaces the first); here it is the GitRepo's own (issue 41), so a dependency crosses
 * GitRepos only when it says so. Otherwise another team adding a bundle, or labels, would change what a
 * team's bundle waits for (issue 53):
 *  - `name` alone: the bundle's own GitRepo's bundle of that name, never another's;
 *  - a `selector` that names the key fleet.cattle.io/repo-name (matchLabels or matchExpressions) means
 *    what Fleet means: the GitRepos it names. `{name: cert-manager, selector: {matchLabels:
 *    {fleet.cattle.io/repo-name: platform}}}` is GitRepo platform's cert-manager, in Fleet as here;
 *  - a `selector` without that key matches the bundle's own GitRepo's bundles only, with a warning on
 *    the bundle naming what Fleet would also wait for, whenever another GitRepo has such a bundle.
 */
import { FleetError } from "../base/errors";
import { bundleRef } from "../model/keys";
import { Bundle, DependsOn } from "../bundles/types";
import { LabelSelector, selectorMatches } from "../model/selector";

export const REPO_NAME_LABEL = "fleet.cattle.io/repo-name";
/** Fleet's HelmOpLabel: a HelmOp's bundle carries it (with its name) instead of repo-name. */
export const HELM_OP_NAME_LABEL = "fleet.cattle.io/fleet-helm-name";
const BUNDLE_NAME_LABEL = "fleet.cattle.io/bundle-name";
/** Other GitRepos' bundles named in one message at most: their count is content's. */
const NAMED_AT_MOST = 3;

/** What a dependant needs of its plan entry. */
export interface Dependant {
  gitRepo: string;
  bundle: string;
  cluster: string;
  dependsOn: string[];
}

export interface DependencyIsolation {
  onFailure: (pair: { gitRepo: string; bundle: string; cluster: string }, err: FleetError) => void;
  /** Bundles that could not be read, by bundle ref. */
  unread: ReadonlySet<string>;
  dependenciesNotRead?: "warn";
}

/** Whether a selector chooses GitRepos (or HelmOps) itself (Fleet's meaning), or is scoped to the dependant's own. */
export function namesGitRepos(selector: LabelSelector | undefined): boolean {
  if (!selector) return false;
  const source = (key: string) => key === REPO_NAME_LABEL || key === HELM_OP_NAME_LABEL;
  return Object.keys(selector.matchLabels ?? {}).some(source) || (selector.matchExpressions ?? []).some((r) => source(r.key));
}

/** The labels Fleet's BundleDeployment of a bundle carries: its own, then the ones content cannot set. */
const labelCache = new WeakMap<Bundle, Record<string, string>>();
const labelsOf = (b: Bundle) =>
  labelCache.get(b) ?? labelCache.set(b, { ...b.labels, [b.helmOp ? HELM_OP_NAME_LABEL : REPO_NAME_LABEL]: b.gitRepo, [BUNDLE_NAME_LABEL]: b.name }).get(b)!;
const refOf = (b: Bundle) => bundleRef({ gitRepo: b.gitRepo, bundle: b.name });

/** One dependsOn entry of a bundle, resolved once for all its clusters. */
interface Resolved {
  /** A ref the dependant needs on each of its clusters, whether read or not (a name). */
  required?: string;
  /** Otherwise: the bundles it matches; on each cluster it waits for those deployed there, and needs one. */
  matching: string[];
  /** Bundles of other GitRepos Fleet would also match (a selector without repo-name), for the warning. */
  fleetAlso: string[];
  /** Other GitRepos that have a bundle of a plain name (the explicit form reaches them). */
  elsewhere: string[];
}

function resolve(bundle: Bundle, d: DependsOn, bundles: Bundle[], byName: Map<string, Bundle[]>): Resolved {
  const scoped = namesGitRepos(d.selector);
  const inScope = (b: Bundle) => scoped || b.gitRepo === bundle.gitRepo;
  if (d.name && !scoped) {
    const required = bundleRef({ gitRepo: bundle.gitRepo, bundle: d.name });
    const named = (byName.get(d.name) ?? []).filter((b) => !d.selector || selectorMatches(d.selector, labelsOf(b)));
    const elsewhere = [...new Set(named.filter((b) => b.gitRepo !== bundle.gitRepo).map((b) => b.gitRepo))].sort();
    // With a selector too (ANDed, as Fleet's agent does): the own bundle read but not matching it matches nothing.
    const ownRead = (byName.get(d.name) ?? []).some((b) => b.gitRepo === bundle.gitRepo);
    if (d.selector && ownRead && !named.some((b) => b.gitRepo === bundle.gitRepo)) return { matching: [], fleetAlso: [], elsewhere };
    return { required, matching: [], fleetAlso: [], elsewhere };
  }
  const candidates = d.name ? (byName.get(d.name) ?? []) : bundles;
  const matching = candidates.filter((b) => b !== bundle && selectorMatches(d.selector!, labelsOf(b)));
  // A name that selects one bundle needs it as a plain name does; one in the GitRepo matchLabels chose that has
  // no such bundle read needs that ref, so one unread is waited for and one missing is named.
  // Only a source of the label's kind (a GitRepo's repo-name, a HelmOp's fleet-helm-name), as Fleet's labels say.
  const ofKind = (name: string | undefined, helmOp: boolean) => name !== undefined && !bundles.some((b) => b.gitRepo === name && !!b.helmOp !== helmOp);
  const byRepo = d.selector!.matchLabels?.[REPO_NAME_LABEL];
  const byHelmOp = d.selector!.matchLabels?.[HELM_OP_NAME_LABEL];
  const repo = ofKind(byRepo, false) ? byRepo : ofKind(byHelmOp, true) ? byHelmOp : undefined;
  const one = matching.length === 1 ? refOf(matching[0]) : matching.length === 0 && repo ? bundleRef({ gitRepo: repo, bundle: d.name ?? "" }) : undefined;
  if (d.name && one) return { required: one, matching: [], fleetAlso: [], elsewhere: [] };
  return { matching: matching.filter(inScope).map(refOf), fleetAlso: matching.filter((b) => !inScope(b)).map(refOf), elsewhere: [] };
}

const shortName = (gitRepo: string, ref: string) => (ref.startsWith(`${gitRepo}/`) ? ref.slice(gitRepo.length + 1) : ref);
const few = (names: string[]) => names.slice(0, NAMED_AT_MOST).join(", ") + (names.length > NAMED_AT_MOST ? ` and ${names.length - NAMED_AT_MOST} more` : "");

function warnOnce(bundle: Bundle, w: string): void {
  const warnings = (bundle.warnings ??= []);
  if (!warnings.includes(w)) warnings.push(w);
}

/**
 * Each entry's dependencies on its own cluster, as bundle refs, into `dependsOn`; the dependency must be
 * deployed to the same cluster (Fleet's agent finds no BundleDeployment otherwise, and the bundle never
 * deploys). Returns the entries whose dependencies can be met; with `isolation` the others go to its
 * onFailure, else the first is thrown. `failed`: "<cluster>\0<ref>" of pairs that failed in planning.
 */
export function resolveDependencies<E extends Dependant>(
  entries: E[],
  bundles: Bundle[],
  isolation?: DependencyIsolation,
  failed: ReadonlySet<string> = new Set(),
): E[] {
  if (!bundles.some((b) => b.dependsOn.length > 0)) return entries;
  const onCluster = new Map<string, Set<string>>();
  for (const e of entries) {
    if (!onCluster.has(e.cluster)) onCluster.set(e.cluster, new Set());
    onCluster.get(e.cluster)!.add(bundleRef(e));
  }
  const bundleByRef = new Map(bundles.map((b) => [refOf(b), b]));
  const byName = new Map<string, Bundle[]>();
  for (const b of bundles) byName.set(b.name, [...(byName.get(b.name) ?? []), b]);
  // Per bundle, not per pair: a bundle on 1,000 clusters matches its selectors once.
  const resolved = new Map<Bundle, Resolved[]>();
  const resolvedOf = (b: Bundle) =>
    resolved.get(b) ??
    resolved
      .set(
        b,
        b.dependsOn.map((d) => resolve(b, d, bundles, byName)),
      )
      .get(b)!;
  const failedHere = (cluster: string, ref: string) => failed.has(`${cluster}\u0000${ref}`);
  return entries.filter((e) => {
    const bundle = bundleByRef.get(bundleRef(e))!;
    const deps = new Set<string>();
    const ctx = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: bundle.fleetYaml, field: "dependsOn" };
    const file = bundle.fleetYaml ?? bundle.path;
    const fail = (err: FleetError) => {
      if (!isolation) throw err;
      isolation.onFailure(e, err);
      return false;
    };
    for (const [i, r] of resolvedOf(bundle).entries()) {
      const d = bundle.dependsOn[i];
      const here = onCluster.get(e.cluster);
      if (r.fleetAlso.length) {
        const also = r.fleetAlso.filter((ref) => here?.has(ref) || failedHere(e.cluster, ref));
        if (also.length)
          warnOnce(
            bundle,
            `${file}: dependsOn[${i}].selector waits only for GitRepo ${bundle.gitRepo}'s bundles; Fleet would also wait for ${few(also)}: ` +
              `to wait for another GitRepo's bundles, add matchLabels ${REPO_NAME_LABEL}: <GitRepo> (docs/fleet-compatibility.md)`,
          );
      }
      const wanted = r.required ? [r.required] : r.matching.filter((ref) => here?.has(ref) || failedHere(e.cluster, ref));
      if (wanted.length === 0) {
        // Fleet's agent: "no bundles matching labels ...", and it waits forever.
        if (isolation?.dependenciesNotRead === "warn") continue;
        const what = [...(d.name ? [`${BUNDLE_NAME_LABEL}=${d.name}`] : []), JSON.stringify(d.selector)].join(" ");
        return fail(
          new FleetError(
            `dependsOn[${i}] matches no bundle deployed to this cluster: Fleet's agent finds no bundle deployment (no bundles matching labels ${what}) and never deploys this one`,
            ctx,
          ),
        );
      }
      for (const ref of wanted) {
        const n = shortName(e.gitRepo, ref);
        if (isolation?.dependenciesNotRead === "warn" && !bundleByRef.has(ref) && !isolation.unread.has(ref)) {
          warnOnce(
            bundle,
            `${file}: dependsOn ${n}, which is not among the bundles read: rendered without it (up refuses the bundle unless ${n} is deployed to the same cluster)`,
          );
          continue;
        }
        if (here?.has(ref)) {
          deps.add(ref);
          continue;
        }
        const unread = isolation?.unread.has(ref);
        if (unread || failedHere(e.cluster, ref))
          return fail(new FleetError(`dependent bundle(s) are not ready: [${n}] (${unread ? "it could not be read" : "failed on this cluster"})`, ctx));
        const elsewhere = ref === r.required && r.elsewhere.length ? elsewhereHint(d.name!, r.elsewhere) : "";
        return fail(
          new FleetError(
            `dependsOn ${n}, which is not deployed to this cluster: Fleet's agent finds no bundle deployment of it (no bundles matching labels ` +
              `${BUNDLE_NAME_LABEL}=${n.slice(n.indexOf("/") + 1)}) and never deploys this one${elsewhere}`,
            ctx,
          ),
        );
      }
    }
    e.dependsOn = [...deps].sort();
    return true;
  });
}

/** A plain name another GitRepo has: how to reach it, written so Fleet reads the same. */
function elsewhereHint(name: string, gitRepos: string[]): string {
  return (
    `. A name alone is this GitRepo's bundle; GitRepo ${few(gitRepos)} has a bundle ${name}: to wait for it write ` +
    `{name: ${name}, selector: {matchLabels: {${REPO_NAME_LABEL}: ${gitRepos[0]}}}} (Fleet reads the same)`
  );
}
