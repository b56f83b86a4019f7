/** This update's crash journal entry (core/desired/journal.ts), computed with the rest of the desired state. */
import { JournalObject } from "./journal";
import { sweepKeeps } from "./delete-policy";
import { DesiredDeployment } from "./types";

/**
 * The objects this update may create: every object of the desired deployments on the clusters it
 * applies to (left-out clusters get nothing applied). Unchanged deployments too: the engine also
 * re-creates an object of theirs that a refresh found deleted. What a prune retains is never swept,
 * nor is a Namespace: sweeping one would delete whatever else lives in it.
 */
export function journalObjects(deployments: DesiredDeployment[], leftOut?: ReadonlySet<string>): JournalObject[] {
  const out: JournalObject[] = [];
  for (const d of deployments) {
    if (leftOut?.has(d.cluster)) continue;
    for (const { manifest: o, retain: reason } of d.objects) {
      const retain = sweepKeeps(o, reason);
      out.push({
        cluster: d.cluster,
        gitRepo: d.gitRepo,
        bundle: d.record.bundle,
        apiVersion: o.apiVersion,
        kind: o.kind,
        namespace: o.metadata.namespace ?? "",
        name: o.metadata.name,
        ...(retain ? { retain: true as const } : {}),
      });
    }
  }
  return out;
}
