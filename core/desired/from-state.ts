/**
 * Deployments decided from what the stack's state holds (Facts.deployed): those deployed exactly as
 * before, taken from the state instead of rendered again, and an earlier version's that now retire.
 */
import { K8sObject } from "../model/k8s-object";
import { determineStyle } from "../bundles/read";
import { Bundle } from "../bundles/types";
import { comparePatchPointers } from "../render/compare-patches";
import { ClusterConfig } from "../config/stack";
import { ownerLabels } from "./ownership";
import { RenderedDeployment } from "../render/deployments";
import { PlanEntry } from "../targeting/plan";
import { deletePolicyOf } from "./delete-policy";
import { DeployedBundle } from "./facts";
import { heldObjects } from "./held";
import { bundleRef, deploymentKey, parseDeploymentKey } from "../model/keys";
import { pairObjects } from "../model/pair";
import { PreviousDeployment } from "./previous";
import { RetiringDeployment } from "./types";

/**
 * Fleet renders a BundleDeployment again only when its deploymentID changes. So does this: a deployment
 * whose deploymentID and pause are what the last update deployed, whose objects in the state were all
 * applied at that deploymentID (and that asks for no drift correction) gets the objects the state holds, as they were registered, instead of a new render: a
 * chart with random values, timestamps or `lookup` then changes nothing, and the no-op path renders
 * nothing. Render warnings are not repeated for such a deployment (they were shown when it rendered).
 */
export function deployedAsBefore(
  entries: PlanEntry[],
  unchanged: ReadonlySet<PlanEntry>,
  previous: PreviousDeployment | undefined,
  bundles: Bundle[],
  deployed: ReadonlyMap<string, DeployedBundle> | undefined,
): Map<PlanEntry, RenderedDeployment> {
  const out = new Map<PlanEntry, RenderedDeployment>();
  if (!deployed) return out;
  const byRef = new Map(bundles.map((b) => [bundleRef({ gitRepo: b.gitRepo, bundle: b.name }), b]));
  for (const e of entries) {
    const key = deploymentKey(e);
    const held = deployed.get(key);
    const objects = held?.objects;
    // The state's objects must be the ones applied at this deploymentID: a failed apply, or an update
    // that ran after the state was read, leaves them at another one, and then this renders again.
    if (
      !unchanged.has(e) ||
      !objects?.length ||
      held!.appliedDeploymentId !== e.deploymentId ||
      previous?.paused?.[key] !== e.paused ||
      e.options.correctDrift?.enabled
    )
      continue;
    const bundle = byRef.get(bundleRef(e))!;
    const manifests = objects.map((o) => o.manifest);
    out.set(e, {
      objects: manifests,
      style: determineStyle(bundle.files, e.options).kind,
      warnings: [...(bundle.warnings ?? [])],
      chartCrds: new Set(),
      retainReasons: new Map(objects.filter((o) => o.retain).map((o) => [o.manifest, o.retain!])),
      ignoredFields: new Map(
        manifests.map((o): [K8sObject, string[]] => [o, comparePatchPointers(o, e.options.diff?.comparePatches)]).filter(([, p]) => p.length),
      ),
      ...(held!.secret ? { secret: true as const } : {}),
    });
  }
  return out;
}

/**
 * Deployments an earlier version deployed as one resource per object that this update no longer
 * deploys: the first `up` of this version marks those resources retained in the state (so the engine
 * drops them without deleting), so each gets a BundleDeployment that adopts its objects and prunes
 * them all, under their retain rules, in the same update (as the cluster's own identity); the next
 * update deletes the empty pair.
 * A cluster no longer configured is not among them (its objects go with its old provider, as before).
 */
export function retiringDeployments(
  deployed: ReadonlyMap<string, DeployedBundle> | undefined,
  registered: ReadonlySet<string>,
  clusters: ClusterConfig[],
  previous: PreviousDeployment | undefined,
  leftOut?: ReadonlySet<string>,
): RetiringDeployment[] {
  const configured = new Set(clusters.map((c) => c.name));
  return [...(deployed ?? [])]
    .filter(([key, d]) => d.legacy && !registered.has(key) && configured.has(parseDeploymentKey(key).cluster) && !leftOut?.has(parseDeploymentKey(key).cluster))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, d]) => {
      const owner = parseDeploymentKey(key);
      const cluster = owner.cluster;
      const objects = heldObjects(d);
      return {
        key,
        cluster,
        spec: { deploymentId: "", objects: {}, deletePolicy: deletePolicyOf(ownerLabels(owner)), adopt: pairObjects(objects) },
      };
    });
}
