/**
 * "Deployed" and "Pruned" events: exactly one per BundleDeployment whose objects the update actually
 * created, updated, replaced or deleted, and none for a no-op (Fleet logged "Deployed bundle" on every
 * reconcile: fleet#2856). Built from the engine's steps, not from the plan, so a new commit that
 * renders the same objects is not a deploy.
 */
import type { DeploymentRecord } from "../../core/desired/records";
import type { RunRef } from "../runs/runs";
import { GroupedSteps, hasChanges } from "../engine/steps";

export interface DeployEvent {
  event: "deployed" | "pruned";
  bundle: string;
  cluster: string;
  gitRepo: string;
  deploymentId: string;
  commit: string;
  created: number;
  updated: number;
  replaced: number;
  deleted: number;
  /** The run that deployed it (automation/runs/runs.ts): a rollback's and a redeploy's deploys are told apart from an ordinary up's. */
  run?: string;
  runKind?: RunRef["kind"];
}

/** The events stamped with the run they belong to. */
export function ofRun(events: DeployEvent[], run: RunRef): DeployEvent[] {
  return events.map((e) => ({ ...e, run: run.id, runKind: run.kind }));
}

/**
 * @param before the `deployments` output of the stack before the update (for pruned bundles)
 * @param after the `deployments` output after it
 */
export function deployEvents(groups: GroupedSteps, before: Record<string, DeploymentRecord>, after: Record<string, DeploymentRecord>): DeployEvent[] {
  const events: DeployEvent[] = [];
  for (const d of [...groups.deployments.values()].sort((a, b) => compare(a.key, b.key))) {
    if (!hasChanges(d) && !d.pruned) continue;
    // A pair whose apply was refused or is not ready did not deploy: it is a failure of the update (pairFailures).
    if (!d.pruned && d.report && !d.report.applied) continue;
    const record = d.pruned ? before[d.key] : (after[d.key] ?? before[d.key]);
    events.push({
      event: d.pruned ? "pruned" : "deployed",
      bundle: d.bundle,
      cluster: d.cluster,
      gitRepo: record?.gitRepo ?? "",
      deploymentId: record?.deploymentId ?? "",
      commit: record?.commit ?? "",
      created: d.created,
      updated: d.updated,
      replaced: d.replaced,
      deleted: d.deleted,
    });
  }
  return events;
}

export function formatDeployEvent(e: DeployEvent): string {
  const counts = `${e.created} created, ${e.updated} updated${e.replaced ? `, ${e.replaced} replaced` : ""}, ${e.deleted} deleted`;
  const verb = e.event === "deployed" ? `Deployed bundle ${e.bundle} to ${e.cluster}` : `Pruned bundle ${e.bundle} from ${e.cluster}`;
  // An ordinary up's line is as it always was; a rollback's or redeploy's says so.
  const run = e.runKind && e.runKind !== "up" ? ` by ${e.runKind} run=${e.run}` : "";
  return `${verb} deploymentID=${e.deploymentId} commit=${e.commit} (${counts})${run}`;
}

export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
