/**
 * What a preview found, as its PR summary (pr-summary.ts) and its page (fleet-matrix.ts) both read
 * it: the engine's steps per pair, the records before, the plan, and each prune with why it left.
 */
import type { DeploymentRecord } from "../../core/desired/records";
import type { FleetState } from "../../core/plan/pipeline";
import type { Departure } from "../../core/desired/departures";
import type { ReportFacts } from "../../core/desired/report-facts";
import { compare } from "./deploy-events";
import { GroupedSteps } from "../engine/steps";

export interface PreviewReport {
  stack: string;
  groups: GroupedSteps;
  /** The stack's `deployments` output before the change. */
  before: Record<string, DeploymentRecord>;
  /** The plan the preview ran (deploymentIds after the change, and what explains a prune). */
  state: FleetState;
  /** Clusters left out because they did not answer (cluster -> reason). */
  unreachable?: Map<string, string>;
  /** What core decided of this plan and `before` (core/desired/report-facts.ts). */
  facts: ReportFacts;
  /** Each deployment's warnings beyond its bundle's own (a hook left out, a CRD not updated...), as core gave them. */
  deploymentWarnings?: { gitRepo: string; bundle: string; cluster: string; warnings: string[] }[];
}

export interface Prune {
  cluster: string;
  gitRepo: string;
  bundle: string;
  objects: number;
  /** Why the pair left, as targeting decided it (absent: no record of it); `reason` is its words. */
  departure?: Departure;
  reason: string;
}

/** Each pair the engine prunes, with why it left (core/desired/departures.ts). */
export function prunesOf(report: PreviewReport): Prune[] {
  return [...report.groups.deployments.values()]
    .filter((d) => d.pruned)
    .sort((a, b) => compare(a.key, b.key))
    .map((d) => {
      // A pair still named by an earlier version's key (its first update by this one) is found by cluster and bundle.
      const key = report.before[d.key]
        ? d.key
        : d.gitRepo
          ? undefined
          : Object.entries(report.before).find(([, x]) => x.cluster === d.cluster && x.bundle === d.bundle)?.[0];
      const r = key === undefined ? undefined : report.before[key];
      const left = key === undefined ? undefined : report.facts.leaving.get(key);
      return {
        cluster: d.cluster,
        gitRepo: r?.gitRepo ?? d.gitRepo,
        bundle: d.bundle,
        objects: d.deleted,
        ...(left ? { departure: left.departure } : {}),
        reason: left?.text ?? report.facts.unrecorded,
      };
    });
}
