/** Dependency order: the order the engine registers deployments in (fleet.yaml dependsOn, rollout gates). */
import { FleetError } from "../base/errors";
import { PlanEntry } from "../targeting/plan";
import { deploymentKey, parseBundleRef } from "../model/keys";

/**
 * The plan's entries with each one's dependsOn (same cluster) before it, in plan order otherwise: the
 * order the engine registers them in. A cycle is an error naming the deployments in it; with `onCycle`,
 * the deployment that closes it goes there (in one pass) and is left out, and the caller settles what
 * waits for it.
 */
export function inDependencyOrder(
  entries: PlanEntry[],
  onCycle?: (entry: PlanEntry, err: FleetError) => void,
  gates?: ReadonlyMap<PlanEntry, PlanEntry[]>,
): PlanEntry[] {
  const byKey = new Map(entries.map((e) => [deploymentKey(e), e]));
  const done = new Set<string>();
  const inProgress = new Set<string>();
  const out: PlanEntry[] = [];
  const visit = (entry: PlanEntry): void => {
    const key = deploymentKey(entry);
    if (done.has(key)) return;
    if (inProgress.has(key)) {
      const err = new FleetError(`dependsOn forms a cycle through ${[...inProgress].join(" -> ")}`, {
        gitRepo: entry.gitRepo,
        bundle: entry.bundle,
        cluster: entry.cluster,
        field: "dependsOn",
      });
      if (!onCycle) throw err;
      onCycle(entry, err);
      return;
    }
    inProgress.add(key);
    for (const ref of entry.dependsOn) {
      const dep = byKey.get(deploymentKey({ ...parseBundleRef(ref), cluster: entry.cluster }));
      if (dep) visit(dep);
    }
    for (const gate of gates?.get(entry) ?? []) visit(gate);
    inProgress.delete(key);
    done.add(key);
    out.push(entry);
  };
  for (const e of entries) visit(e);
  return out;
}
