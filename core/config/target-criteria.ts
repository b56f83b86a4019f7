/**
 * A target's criteria as Fleet's GitTarget and BundleTarget spell them (name, clusterName,
 * clusterSelector, clusterGroup, clusterGroupSelector): read from the stack file (GitRepo targets,
 * schedules) and from fleet.yaml alike.
 */
import { Field } from "./reader";
import { readSelector } from "./selector";
import { LabelSelector } from "../model/selector";
import { keysOf } from "./field-table";
import { TARGET_CRITERIA_FIELDS } from "./common-fields";

/** A GitRepo target (Fleet's GitTarget): all given criteria must hold; none given matches nothing. */
export interface TargetCriteria {
  name?: string;
  clusterName?: string;
  clusterSelector?: LabelSelector;
  clusterGroup?: string;
  clusterGroupSelector?: LabelSelector;
}

export function readTargetCriteria(f: Field, extra: readonly string[] = []): TargetCriteria {
  f.object([...keysOf(TARGET_CRITERIA_FIELDS), ...extra]);
  const t: TargetCriteria = {};
  const name = f.child("name").optString();
  if (name) t.name = name;
  const clusterName = f.child("clusterName").optString();
  if (clusterName) t.clusterName = clusterName;
  const clusterGroup = f.child("clusterGroup").optString();
  if (clusterGroup) t.clusterGroup = clusterGroup;
  const clusterSelector = readSelector(f.child("clusterSelector"));
  if (clusterSelector) t.clusterSelector = clusterSelector;
  const clusterGroupSelector = readSelector(f.child("clusterGroupSelector"));
  if (clusterGroupSelector) t.clusterGroupSelector = clusterGroupSelector;
  return t;
}

/** Fleet's default when a GitRepo has no targets: cluster group `default`. */
export const DEFAULT_TARGET: TargetCriteria = { name: "default", clusterGroup: "default" };
