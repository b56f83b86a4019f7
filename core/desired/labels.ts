/**
 * Ownership labels on every deployed object, and the label checks the API server would otherwise make
 * halfway through an update. A label value such as `system:kube-controller-manager` is rejected here,
 * before registration, with the object, key and value named (fleet#3483 was such a value).
 */
import { FleetError } from "../base/errors";
import { labelKeyProblem, labelValueProblem } from "../base/k8s-validation";
import { ownerLabels } from "./ownership";
import { DELETE_PROPAGATION } from "./delete-policy";
import { describeObject } from "../model/k8s-object";

export interface Owner {
  gitRepo: string;
  bundle: string;
  cluster: string;
}

interface ObjectLike {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { selector?: { matchLabels?: Record<string, string> }; template?: { metadata?: { labels?: Record<string, string> } } };
}

/** Throws a FleetError naming the object, field, key and value for the first label Kubernetes would reject. */
export function validateObjectLabels(obj: ObjectLike, owner: Owner): void {
  const maps: [string, Record<string, string> | undefined, boolean][] = [
    ["metadata.labels", obj.metadata?.labels, true],
    ["metadata.annotations", obj.metadata?.annotations, false],
    ["spec.selector.matchLabels", obj.spec?.selector?.matchLabels, true],
    ["spec.template.metadata.labels", obj.spec?.template?.metadata?.labels, true],
  ];
  for (const [field, map, isLabel] of maps) {
    if (!map || typeof map !== "object") continue;
    for (const [key, value] of Object.entries(map)) {
      const keyProblem = labelKeyProblem(key);
      if (keyProblem)
        throw new FleetError(`${describeObject(obj)}: invalid ${isLabel ? "label" : "annotation"} key ${JSON.stringify(key)}: ${keyProblem}`, {
          ...owner,
          field,
        });
      if (!isLabel || typeof value !== "string") continue;
      const valueProblem = labelValueProblem(value);
      if (valueProblem)
        throw new FleetError(`${describeObject(obj)}: invalid label value ${JSON.stringify(value)} for key ${JSON.stringify(key)}: ${valueProblem}`, {
          ...owner,
          field,
        });
    }
  }
}

/**
 * Server-side apply with force: the fields a bundle declares belong to the Git state, so a hand edit of
 * one of them (drift) is overwritten by the next `up` instead of failing it with a field-manager
 * conflict. Fields the bundle does not declare stay with whoever set them.
 */
export const PATCH_FORCE_ANNOTATION = "pulumi.com/patchForce";

/**
 * fleet.yaml forceSyncGeneration, mapped onto the engine: Fleet redeploys a bundle when the number
 * changes. Here each object carries the number in this annotation, so a new value is a change of every
 * object of the bundle: each is re-applied in full (server-side apply with force, which also puts back
 * hand-edited fields the bundle declares), and nothing else is touched. Absent while the value is 0 or
 * unset, so bundles that never use it keep their objects exactly as before.
 */
export const FORCE_SYNC_ANNOTATION = "pulumi-fleet/force-sync-generation";

/**
 * The delete policy's propagation (delete-policy.ts) on each object, the Kubernetes provider's
 * annotation from when each object was its own resource; kept so no deployed object changes.
 * `background`, as Helm's uninstall (and so Fleet) and kubectl do: the object is
 * gone from the API at once and the garbage collector removes its dependents (a Deployment's
 * ReplicaSets and pods) afterwards. The provider's default, foreground, keeps each object until the
 * garbage collector has removed its dependents and its finalizer, which capped a prune at about 15
 * objects a second whatever the engine's parallelism (BENCHMARKS.md §3). The provider still waits for
 * each object to be gone, so a pruned object is gone when `up` returns.
 */
export const DELETION_PROPAGATION_ANNOTATION = "pulumi.com/deletionPropagationPolicy";

/** The object with the ownership labels (bundle labels of the same keys are overwritten) and forced apply. */
export function withOwnership<T extends ObjectLike>(obj: T, owner: Owner, forceSyncGeneration?: number): T {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      labels: { ...(obj.metadata?.labels ?? {}), ...ownerLabels(owner) },
      annotations: {
        [DELETION_PROPAGATION_ANNOTATION]: DELETE_PROPAGATION,
        ...(obj.metadata?.annotations ?? {}),
        [PATCH_FORCE_ANNOTATION]: "true",
        ...(forceSyncGeneration ? { [FORCE_SYNC_ANNOTATION]: String(forceSyncGeneration) } : {}),
      },
    },
  };
}
