/** A plan entry (core/targeting/plan.ts) as unit tests need one: GitRepo "repo", its bundle and cluster given, the rest fixed. */
import { PlanEntry } from "../../core/targeting/plan";

export function planEntry(bundle: string, cluster: string, over: Partial<PlanEntry> = {}): PlanEntry {
  return {
    gitRepo: "repo",
    bundle,
    cluster,
    target: "all",
    customizations: [],
    options: {},
    namespace: "apps",
    releaseName: bundle,
    manifestId: "s-1",
    deploymentId: `s-1:${bundle}-${cluster}`.padEnd(40, "0"),
    paused: false,
    dependsOn: [],
    ...over,
  };
}
