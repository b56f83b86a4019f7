/**
 * Which objects of each bundle deployment are not ready, as the refresh of a `status` read them live:
 * judged by fleet-render as Fleet's agent judges them (core/renderer/readiness.ts). The status report
 * (automation/reports/status.ts) receives the result.
 */
import { deploymentKey } from "../../core/model/keys";
import { PlanEntry } from "../../core/targeting/plan";
import { describeNotReady, judgeReadiness, ReadinessQuery } from "../../core/renderer/readiness";
import { GroupedSteps } from "./steps";

/**
 * Per deployment, its objects that are not ready, judged as Fleet's agent judges them (core/renderer/readiness.ts:
 * wrangler's summary after the bundle's ignore.conditions), from the live objects a refresh read.
 */
export async function nonReadyByDeployment(groups: GroupedSteps, entries: PlanEntry[]): Promise<Map<string, string[]>> {
  const ignoreOf = new Map(entries.map((e) => [deploymentKey(e), e.options.ignore?.conditions]));
  const queries: (ReadinessQuery & { key: string })[] = [];
  for (const [key, d] of groups.deployments) {
    const seen = new Set<string>();
    for (const s of d.steps) {
      if (seen.has(s.urn)) continue;
      seen.add(s.urn);
      // An object its kind's health check judged (healthChecked): the provider's verdict is the pair's state, not judged again here.
      if (s.custom && s.outputs?.kind && s.outputs.metadata && !s.outputs.healthChecked)
        queries.push({ id: String(queries.length), key, object: s.outputs, ignore: ignoreOf.get(key) });
    }
  }
  const judged = await judgeReadiness(queries);
  const out = new Map<string, string[]>();
  for (const q of queries) {
    const r = judged.get(q.id)!;
    if (!r.ready) (out.get(q.key) ?? out.set(q.key, []).get(q.key)!).push(describeNotReady(q.object, r));
  }
  for (const list of out.values()) list.sort();
  return out;
}
