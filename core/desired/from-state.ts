/**
 * Deployments decided from what the stack's state holds (Facts.deployed): those deployed exactly as
 * before, taken from the state instead of rendered again.
 */
import { K8sObject } from "../model/k8s-object";
import { determineStyle } from "../bundles/read";
import { Bundle } from "../bundles/types";
import { comparePatchPointers } from "../render/compare-patches";
import { HookRun, RenderedDeployment } from "../render/deployments";
import { PlanEntry } from "../targeting/plan";
import { DeployedBundle } from "./facts";
import { bundleRef, deploymentKey } from "../model/keys";
import { PreviousDeployment } from "./previous";
import { RETAIN_REASONS } from "./delete-policy";

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
    // Its hooks as its inputs hold them (manifests as JSON text, ownership labels applied, as rendered).
    const heldHooks = held!.spec?.hooks ?? [];
    // A hook whose manifest the state does not hold (its content gone) cannot be taken from it: rendered again.
    if (heldHooks.some((h) => h.manifest === undefined)) continue;
    const hooks = new Map(
      heldHooks.map(({ manifest, digest: _d, object: _o, apiVersion: _a, ...run }): [K8sObject, HookRun] => [JSON.parse(manifest!) as K8sObject, run]),
    );
    out.set(e, {
      objects: [...manifests, ...hooks.keys()],
      ...(hooks.size ? { hooks } : {}),
      style: determineStyle(bundle.files, e.options).kind,
      warnings: [...(bundle.warnings ?? [])],
      // A chart's crds/ objects, as the state tells them: only created (chartCrds: Create), or retained for
      // being one (CreateReplace, or an earlier version): which they are now is the GitRepo's setting's.
      chartCrds: new Set(objects.filter((o) => o.createOnly || o.retain === RETAIN_REASONS.chartCrd).map((o) => o.manifest)),
      retainReasons: new Map(objects.filter((o) => o.retain).map((o) => [o.manifest, o.retain!])),
      ignoredFields: new Map(
        manifests.map((o): [K8sObject, string[]] => [o, comparePatchPointers(o, e.options.diff?.comparePatches)]).filter(([, p]) => p.length),
      ),
      ...(held!.secret ? { secret: true as const } : {}),
    });
  }
  return out;
}
