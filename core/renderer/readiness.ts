/**
 * Whether live objects are ready, as Fleet's agent judges them: fleet.yaml's ignore.conditions removes
 * the matching conditions, then wrangler's summary (the library Fleet's agent uses, run inside
 * fleet-render) decides. One batch per call, however many objects.
 */
import { runRenderer } from "./fleet-render";
import { Readiness } from "../model/renderer-protocol";
import { describeObject } from "../model/k8s-object";

export interface ReadinessQuery {
  id: string;
  object: Record<string, unknown>;
  ignore?: Record<string, string>[];
}

export async function judgeReadiness(queries: ReadinessQuery[]): Promise<Map<string, Readiness>> {
  if (!queries.length) return new Map();
  const results = (await runRenderer({ readiness: queries.map((q) => ({ id: q.id, object: q.object, ignore: q.ignore ?? [] })) })).readiness;
  return new Map(queries.map((q) => [q.id, results[q.id] ?? { ready: false, problem: "no answer" }]));
}

/** Fleet's one-line account of a non-ready object: "<Kind> <namespace>/<name>: <state>: <messages>". */
export function describeNotReady(object: { kind?: unknown; metadata?: { name?: string; namespace?: string } }, r: Readiness): string {
  const detail = [r.state || (r.problem ? "unreadable" : "not ready"), ...(r.message ?? []), ...(r.problem ? [r.problem] : [])].join(": ");
  return `${describeObject(object)}: ${detail}`;
}
