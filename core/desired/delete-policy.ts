/**
 * The delete policy, decided here once: per object, whether a prune or a deletion leaves it on the
 * cluster and why (a reason code), and per pair, how what goes is deleted (propagation, owner labels).
 * Whatever deletes receives it and obeys: the BundleDeployment and ClusterSetup (tools/fleet-provider,
 * each object's `retain` and the pair's `deletePolicy`) and the crash journal's sweep (core/desired/journal.ts).
 * Reports print the reasons; nothing else decides them.
 */
import { K8sObject } from "../model/k8s-object";
import { DeploymentOptions } from "../bundles/types";
import { DeletePolicy } from "../model/pair";

/** Why a prune leaves an object on the cluster. */
export type RetainCode =
  /** The bundle is paused (GitRepo or fleet.yaml): nothing of it is updated or deleted. */
  | "paused"
  /** fleet.yaml or the GitRepo's keepResources: Fleet leaves every object of the bundle. */
  | "keepResources"
  /** A chart's crds/: Helm installs them only when absent and never deletes them. */
  | "chartCrd"
  /** A CRD: Fleet annotates it with Helm's keep policy unless the bundle sets deleteCRDResources. */
  | "crd"
  /** Annotated `helm.sh/resource-policy: keep`: Helm's uninstall leaves it. */
  | "helmKeep"
  /** A namespace the cluster created for its bundles: kept unless every bundle in it sets deleteNamespace. */
  | "namespace"
  /** The agent's namespace: kept when the agent goes, as uninstalling Fleet's agent keeps it. */
  | "agentNamespace"
  /** An earlier version's per-object resource registered to be left on the cluster (one of the above, not told apart). */
  | "legacy";

/**
 * Each reason as a pair's inputs carry it (`retain`) and reports print it. The provider honours any
 * non-empty reason and tells wording apart from no reason only (decide.go), so a bundle object's words
 * may change without updating its pair; a ClusterSetup's deploymentId hashes its objects with their
 * words (setup.ts), so rewording `namespace` or `agentNamespace` updates each setup once (nothing on
 * the cluster changes). They are the words deployed stacks hold, so none changes today.
 */
export const RETAIN_REASONS: Readonly<Record<RetainCode, string>> = {
  paused: "the bundle is paused",
  keepResources: "keepResources",
  chartCrd: "a chart's crds/ (Helm never deletes them)",
  crd: "a CRD: kept unless the bundle sets deleteCRDResources (Fleet annotates it helm.sh/resource-policy: keep)",
  helmKeep: "helm.sh/resource-policy: keep",
  namespace: "a bundle namespace: kept unless every bundle in it sets deleteNamespace",
  agentNamespace: "the agent's namespace: kept when the agent goes, as uninstalling Fleet's agent keeps it",
  legacy: "retained when it was deployed (keepResources, paused, or Helm's keep policy)",
};

/** The code of a reason a pair's inputs carry (undefined: deleted); words this version does not know are an earlier version's. */
export function retainCodeOf(reason: string | undefined): RetainCode | undefined {
  if (!reason) return undefined;
  return (Object.keys(RETAIN_REASONS) as RetainCode[]).find((c) => RETAIN_REASONS[c] === reason) ?? "legacy";
}

/** How every pair deletes: background propagation, as Helm's uninstall (and so Fleet) and kubectl delete. */
export const DELETE_PROPAGATION: DeletePolicy["propagation"] = "background";

/** A pair's delete policy: only objects still carrying all of its owner labels are deleted. */
export function deletePolicyOf(ownerLabels: Record<string, string>): DeletePolicy {
  return { propagation: DELETE_PROPAGATION, ownerLabels };
}

const RESOURCE_POLICY = "helm.sh/resource-policy";
const CRD_KIND = "CustomResourceDefinition";

/** Helm's test: the annotation's value, trimmed and lower-cased, is "keep". */
export function keptByHelm(obj: K8sObject): boolean {
  const v = (obj.metadata?.annotations as Record<string, unknown> | undefined)?.[RESOURCE_POLICY];
  return typeof v === "string" && v.trim().toLowerCase() === "keep";
}

/** What the rule needs of a pair: whether it is paused, and its options. */
export interface RetainContext {
  paused: boolean;
  options: Pick<DeploymentOptions, "keepResources" | "deleteCRDResources">;
}

/**
 * Why a prune leaves a rendered object on the cluster (Fleet's and Helm's rules), or undefined: it is
 * deleted. `fromChartCrds`: the object came from a chart's crds/ directory.
 */
export function retainCode(pair: RetainContext, obj: K8sObject, fromChartCrds = false): RetainCode | undefined {
  if (pair.paused) return "paused";
  if (pair.options.keepResources) return "keepResources";
  if (fromChartCrds) return "chartCrd";
  // fleet-render annotates each CRD as Fleet's post-render does; the reason says which rule put it there.
  if (obj.kind === CRD_KIND && !pair.options.deleteCRDResources && keptByHelm(obj)) return "crd";
  if (keptByHelm(obj)) return "helmKeep";
  return undefined;
}

/** A cluster's namespace for its bundles: kept unless every bundle in it sets deleteNamespace (Fleet's rule). */
export function namespaceRetain(deleteWithBundles: boolean): RetainCode | undefined {
  return deleteWithBundles ? undefined : "namespace";
}

/**
 * Whether the crash journal's sweep leaves an object recorded by an interrupted update: what a prune
 * retains, and every Namespace (sweeping one would delete whatever else lives in it).
 */
export function sweepKeeps(obj: { kind: string }, retain: string | undefined): boolean {
  return !!retain || obj.kind === "Namespace";
}
