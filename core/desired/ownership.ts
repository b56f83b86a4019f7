/**
 * helm.takeOwnership, as Fleet's Helm applies it: an install or upgrade fails when an object it would
 * create already exists on the cluster and is not the release's own, unless takeOwnership is true.
 * The Kubernetes provider at the pinned version creates with server-side apply, which adopts any
 * existing object silently; a later prune would then delete an object this fleet never owned. So
 * before anything is registered, the objects of every bundle deployment that is new or changed since
 * the last update are looked up on their cluster (gathered per GitRepo by core/desired/gather-objects.ts), and one that exists without
 * this bundle's ownership labels fails that deployment, naming it and its owner.
 *
 * Left out, as Helm leaves them out: a chart's crds/ (Helm installs them only when absent and never
 * checks their owner). Unchanged deployments (same deploymentId as the last update) are not read:
 * their objects are already this stack's.
 */
import { FleetError } from "../base/errors";
import { Bundle } from "../bundles/types";
import { describeObject, K8sObject } from "../model/k8s-object";
import { PlanEntry } from "../targeting/plan";
import { REPO_NAME_LABEL } from "../targeting/depends-on";
import { RenderedDeployment } from "../render/deployments";
import { LiveObject, OwnersResult } from "../model/renderer-protocol";
import { byGitRepo } from "./cluster-reads";

export const BUNDLE_NAME_LABEL = "fleet.cattle.io/bundle-name";
export const CLUSTER_LABEL = "fleet.cattle.io/cluster";
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY = "pulumi-fleet";

/** The labels everything this project creates on a cluster carries. */
export function clusterLabels(cluster: string): Record<string, string> {
  return { [CLUSTER_LABEL]: cluster, [MANAGED_BY_LABEL]: MANAGED_BY };
}

/** The labels of every object a bundle deployment applies (core/desired/labels.ts withOwnership). */
export function ownerLabels(owner: { gitRepo: string; bundle: string; cluster: string }): Record<string, string> {
  return { [REPO_NAME_LABEL]: owner.gitRepo, [BUNDLE_NAME_LABEL]: owner.bundle, ...clusterLabels(owner.cluster) };
}

const HELM_RELEASE_ANNOTATION = "meta.helm.sh/release-name";
const HELM_NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace";

export interface OwnershipInput {
  entries: PlanEntry[];
  rendered: Map<PlanEntry, RenderedDeployment>;
  bundles: Bundle[];
  /** The deployments with the deploymentId the last update deployed (unchangedDeployments). */
  unchanged?: ReadonlySet<PlanEntry>;
  /** Clusters this operation leaves out (unreachable): nothing of theirs is applied, so nothing is read. */
  skip?: ReadonlySet<string>;
  /**
   * GitRepos whose stack entry sets takeOwnership: the operator adopts what exists (a move from Fleet),
   * whatever the content says; never what another GitRepo owns (its labels say so), as helm.takeOwnership.
   */
  adopting?: ReadonlySet<string>;
}

/** Whether the deployment may adopt what exists: its GitRepo's stack entry or its content (checked by core/desired/reach.ts) says so. */
const adopts = (entry: PlanEntry, input: OwnershipInput) => !!entry.options.helm?.takeOwnership || !!input.adopting?.has(entry.gitRepo);

/** The GitRepo of this project that owns a live object, when it is not the deployment's own. */
function otherGitRepo(live: LiveObject, entry: PlanEntry): string | undefined {
  const l = live.labels ?? {};
  return l[MANAGED_BY_LABEL] === MANAGED_BY && l[REPO_NAME_LABEL] && l[REPO_NAME_LABEL] !== entry.gitRepo ? l[REPO_NAME_LABEL] : undefined;
}

/**
 * The stack's own objects on a cluster carry its labels but no GitRepo's: the agent's (its namespace
 * included) are never a bundle's to adopt, and so to delete. The namespaces the cluster creates for
 * bundles are not counted here: owners.ts decides between the GitRepos that use them.
 */
function agentOwned(live: LiveObject, object: K8sObject): boolean {
  const l = live.labels ?? {};
  return l[MANAGED_BY_LABEL] === MANAGED_BY && !l[REPO_NAME_LABEL] && (object.kind !== "Namespace" || l.app === AGENT_APP_LABEL);
}

/** The agent's `app` label (core/desired/agent.ts). */
const AGENT_APP_LABEL = "fleet-agent";

/** The objects to look up: per cluster, each (deployment, object) whose owner decides. */
export function ownershipQueries(input: OwnershipInput): Map<string, { entry: PlanEntry; object: K8sObject }[]> {
  const queries = new Map<string, { entry: PlanEntry; object: K8sObject }[]>();
  for (const entry of input.entries) {
    if (input.skip?.has(entry.cluster) || input.unchanged?.has(entry)) continue;
    const r = input.rendered.get(entry)!;
    const list = queries.get(entry.cluster) ?? queries.set(entry.cluster, []).get(entry.cluster)!;
    for (const object of r.objects) if (!r.chartCrds.has(object)) list.push({ entry, object });
  }
  return queries;
}

/** Whether a live object carries this deployment's ownership labels. */
export function ownedBy(live: LiveObject, entry: PlanEntry): boolean {
  const l = live.labels ?? {};
  return Object.entries(ownerLabels(entry)).every(([k, v]) => l[k] === v);
}

/** Who a foreign object belongs to, as far as its metadata tells. */
export function describeOwner(live: LiveObject): string {
  const l = live.labels ?? {};
  const a = live.annotations ?? {};
  if (l[MANAGED_BY_LABEL] === MANAGED_BY) {
    if (!l[REPO_NAME_LABEL]) return "it is the stack's own: its cluster's agent or a namespace the cluster creates";
    return `it belongs to bundle ${l[BUNDLE_NAME_LABEL] ?? "?"} of GitRepo ${l[REPO_NAME_LABEL] ?? "?"}`;
  }
  if (a[HELM_RELEASE_ANNOTATION]) return `it belongs to Helm release ${a[HELM_NAMESPACE_ANNOTATION] ?? "?"}/${a[HELM_RELEASE_ANNOTATION]}`;
  const managers = [...new Set(live.managers ?? [])];
  return managers.length ? `it was written by ${managers.join(", ")}` : "it has no owner metadata";
}

/**
 * Throws a FleetError for the first deployment (in plan order) that would take over an object it does
 * not own, listing all of that deployment's such objects and how many other deployments have some; the
 * live objects are those gathered for ownershipQueries (ClusterFacts.existing, core/desired/gather-objects.ts).
 * A GitRepo's read of a cluster that failed or timed out is an error too (unchecked is not safe), for
 * that GitRepo's deployments on that cluster only: each fails alone with `onConflict`; the others go on.
 */
export function checkTakeOwnership(
  input: OwnershipInput,
  known: ReadonlyMap<string, { existing: ReadonlyMap<string, OwnersResult> }>,
  onConflict?: (entry: PlanEntry, err: FleetError) => void,
): void {
  const conflicts = new Map<PlanEntry, string[]>();
  // Objects another GitRepo owns: never adopted, whatever takeOwnership says.
  const foreign = new Set<PlanEntry>();
  const unread = new Map<PlanEntry, FleetError>();
  for (const [cluster, queries] of ownershipQueries(input)) {
    for (const [gitRepo, own] of byGitRepo(queries)) {
      const result = known.get(cluster)?.existing.get(gitRepo);
      if (!result || result.error) {
        const why = `cannot tell who owns the objects this update would create: ${result?.error ?? "no answer"}`;
        for (const { entry } of own) unread.set(entry, new FleetError(why, { gitRepo, bundle: entry.bundle, cluster }));
        continue;
      }
      own.forEach(({ entry, object }, i) => {
        const live = result.objects?.[i];
        if (!live || ownedBy(live, entry)) return;
        const other = otherGitRepo(live, entry) ?? (agentOwned(live, object) ? "the cluster's agent" : undefined);
        if (adopts(entry, input) && !other) return;
        if (other) foreign.add(entry);
        const list = conflicts.get(entry) ?? conflicts.set(entry, []).get(entry)!;
        list.push(`${describeObject(object)} (${describeOwner(live)})`);
      });
    }
  }
  const firstUnread = input.entries.find((e) => unread.has(e));
  if (firstUnread && !onConflict) throw unread.get(firstUnread)!;
  for (const e of input.entries) if (unread.has(e)) onConflict!(e, unread.get(e)!);
  const conflicting = input.entries.filter((e) => conflicts.has(e));
  const errorFor = (e: PlanEntry, others: number) =>
    new FleetError(
      `objects this bundle would create already exist on the cluster and are not its own: ${conflicts.get(e)!.join("; ")}. ` +
        (foreign.has(e)
          ? "An object another GitRepo or the cluster's agent owns is never adopted, whatever takeOwnership says (the GitRepo's stack entry or fleet.yaml): remove it from this bundle, or rename it"
          : "Fleet's Helm refuses to install over an object it does not own, and so does this update: delete or rename the object, or set helm.takeOwnership: true in fleet.yaml " +
            `(allowed by gitRepos[${e.gitRepo}].allowTakeOwnership in the stack file) to adopt it (a later prune of the bundle then deletes it)`) +
        `${others ? `. ${others} other bundle deployment${others > 1 ? "s have" : " has"} such objects too` : ""}`,
      {
        gitRepo: e.gitRepo,
        bundle: e.bundle,
        cluster: e.cluster,
        file: input.bundles.find((b) => b.gitRepo === e.gitRepo && b.name === e.bundle)?.fleetYaml,
        field: "helm.takeOwnership",
      },
    );
  // Each conflicting deployment fails alone when the caller isolates failures; else the first stops everything.
  if (onConflict) {
    for (const e of conflicting) onConflict(e, errorFor(e, 0));
  } else if (conflicting.length) {
    throw errorFor(conflicting[0], conflicting.length - 1);
  }
}
