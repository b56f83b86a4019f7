/**
 * The crash journal's sweep (core/desired/journal.ts), run by the operation under the stack's lock
 * (automation/operation/desired.ts) once the desired state is computed and before the program registers
 * anything: it acts on clusters, so it is no part of computing the desired state.
 */
import { identityOf, settleEarlier } from "./journal";
import { Facts } from "./facts";
import { DesiredState } from "./types";

/**
 * Earlier updates' journal entries are swept (objects an update that died created and nothing owns now
 * are deleted), then this update records what it may create. Nothing without a journal or in render mode.
 */
export async function sweepAndRecord(facts: Pick<Facts, "journal" | "objects">, state: DesiredState, leftOut?: ReadonlySet<string>): Promise<void> {
  const journal = facts.journal;
  if (!journal || state.fleet.config.renderDir) return;
  const earlier = await journal.list();
  if (earlier.length) {
    const planned = new Set<string>();
    for (const d of state.deployments) {
      for (const { manifest: o } of d.objects)
        planned.add(identityOf({ cluster: d.cluster, apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }));
    }
    // The namespaces the clusters create are planned too (journalObjects never sweeps a Namespace anyway).
    for (const c of state.clusters) {
      for (const ns of c.namespaces) planned.add(identityOf({ cluster: c.name, apiVersion: "v1", kind: "Namespace", name: ns.metadata.name }));
    }
    const configured = new Set(state.fleet.config.clusters.map((c) => c.name));
    await settleEarlier(
      earlier,
      { journal, writer: journal.writer, warn: journal.warn },
      {
        inState: await journal.stateIdentities(),
        planned,
        readable: (c) => configured.has(c) && !leftOut?.has(c),
        clusters: state.fleet.config.clusters,
      },
      facts.objects,
    );
  }
  if (state.journal.length) journal.onRecorded(await journal.add({ writer: journal.writer, objects: state.journal }));
}
