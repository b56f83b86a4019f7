/**
 * The crash journal: what makes writing the state once per update (PULUMI_SKIP_CHECKPOINTS, the
 * default of `npm run up`) safe against a `kill -9`.
 *
 * With the state written only when the engine finishes, an update that dies leaves every object it
 * created on the clusters but not in the state. The next `up` re-applies what its plan still holds
 * (server-side apply adopts the object), but an object the plan no longer holds (the git commit or the
 * stack file changed in between) would be owned by nothing: an orphan. So before registering anything,
 * each update records here every object it may create (the objects of its new and changed bundle
 * deployments), and each update first sweeps what earlier updates recorded: an object that is neither
 * in the state nor in the current plan, still exists, and still carries its bundle's ownership labels
 * was created by an update that died and is deleted, unless Fleet would keep it (keepResources, paused,
 * a kept CRD). Both happen inside the program, while the engine holds the stack's lock.
 */
import { FleetError } from "../base/errors";
import { ClusterConfig } from "../config/stack";
import { objectKey, objectName } from "../model/k8s-object";
import { ownerLabels } from "./ownership";
import { OwnersJob, OwnersResult } from "../model/renderer-protocol";
import { DELETE_PROPAGATION } from "./delete-policy";
import { accessOf } from "../config/cluster-access";

/** One object an update may create, with what identifies and owns it. */
export interface JournalObject {
  cluster: string;
  gitRepo: string;
  bundle: string;
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** Fleet keeps it when its deployment goes (keepResources, paused, a kept CRD): never swept. */
  retain?: true;
}

/** What one update recorded before registering anything. */
export interface JournalEntry {
  /** Who wrote it, for messages: "<user>@<host> pid <pid> at <ISO time>". */
  writer: string;
  objects: JournalObject[];
}

/** An object's identity on its cluster, whatever its version: "<cluster>/<group>:<kind>:<ns>:<name>". */
export function identityOf(o: { cluster: string; apiVersion: string; kind: string; namespace?: string; name: string }): string {
  return `${o.cluster}/${objectKey({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.name, namespace: o.namespace || undefined } })}`;
}

export interface SweepPlan {
  /** Per cluster, recorded objects that are neither in the state nor planned: each is deleted if it still exists with its owner's labels. */
  candidates: Map<string, JournalObject[]>;
  /** Recorded objects whose cluster this update cannot read (left out or no longer configured): kept for a later sweep. */
  deferred: JournalObject[];
}

/**
 * Which recorded objects to look for, given what the state and the current plan hold (identities,
 * identityOf). An object is also matched without its namespace: the renderer gives a namespace to a
 * cluster-scoped kind it does not know, while the state holds the object as the API server returned it.
 */
export function sweepPlan(
  recorded: JournalEntry[],
  inState: ReadonlySet<string>,
  planned: ReadonlySet<string>,
  readable: (cluster: string) => boolean,
): SweepPlan {
  const candidates = new Map<string, JournalObject[]>();
  const deferred: JournalObject[] = [];
  const seen = new Set<string>();
  const held = (ids: ReadonlySet<string>, id: string, clusterScoped: string) => ids.has(id) || ids.has(clusterScoped);
  for (const o of recorded.flatMap((j) => j.objects)) {
    const id = identityOf(o);
    const clusterScoped = identityOf({ ...o, namespace: "" });
    if (o.retain || seen.has(id) || held(inState, id, clusterScoped)) continue;
    seen.add(id);
    // Unreadable first: a planned object on a left-out cluster is not applied by this update either.
    if (!readable(o.cluster)) deferred.push(o);
    else if (!held(planned, id, clusterScoped)) (candidates.get(o.cluster) ?? candidates.set(o.cluster, []).get(o.cluster)!).push(o);
  }
  return { candidates, deferred };
}

export interface SweepResult {
  /** "<cluster>: <Kind> <ns/name> (bundle <b>)" of each object deleted. */
  deleted: string[];
}

/**
 * Deletes the candidates that still exist and carry their bundle's ownership labels (an object someone
 * re-created by hand, or another owner's, is left alone). A cluster that cannot be read is an error
 * naming it: the update stops before registering anything, and the journal keeps the record.
 */
export async function sweep(
  plan: SweepPlan,
  clusters: ClusterConfig[],
  run: (jobs: OwnersJob[]) => Promise<Record<string, OwnersResult>>,
): Promise<SweepResult> {
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const jobs: OwnersJob[] = [...plan.candidates].map(([cluster, objects]) => ({
    id: cluster,
    ...accessOf(byName.get(cluster)),
    delete: true,
    propagation: DELETE_PROPAGATION,
    objects: objects.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.namespace, name: o.name, labels: ownerLabels(o) })),
  }));
  if (!jobs.length) return { deleted: [] };
  const results = await run(jobs);
  const deleted: string[] = [];
  for (const job of jobs) {
    const r = results[job.id];
    if (!r || r.error) {
      throw new FleetError(`cannot remove the objects an interrupted update created and nothing owns any more (crash journal): ${r?.error ?? "no answer"}`, {
        cluster: job.id,
      });
    }
    plan.candidates.get(job.id)!.forEach((o, i) => {
      if (r.objects?.[i]?.deleted) deleted.push(`${o.cluster}: ${objectName(o)} (bundle ${o.bundle})`);
    });
  }
  return { deleted };
}

/** Where settleEarlier keeps what it could not sweep, and forgets what it handled. */
export interface JournalWriter {
  add(entry: JournalEntry): Promise<unknown>;
  remove(keys: string[]): Promise<void>;
}

/**
 * The whole sweep of earlier entries, as `up` (in the program) and `destroy` (after the engine) run it:
 * delete what nothing owns, report each deletion and each object kept for later through `warn`, keep
 * the deferred objects as an entry of their own, and remove the swept entries.
 */
export async function settleEarlier(
  earlier: { key: string; entry: JournalEntry }[],
  { journal, writer, warn }: { journal: JournalWriter; writer: string; warn: (message: string) => void },
  where: { inState: ReadonlySet<string>; planned: ReadonlySet<string>; readable: (cluster: string) => boolean; clusters: ClusterConfig[] },
  run: (jobs: OwnersJob[]) => Promise<Record<string, OwnersResult>>,
): Promise<void> {
  const plan = sweepPlan(
    earlier.map((x) => x.entry),
    where.inState,
    where.planned,
    where.readable,
  );
  const { deleted } = await sweep(plan, where.clusters, run);
  for (const d of deleted) warn(`crash journal: deleted ${d}: an interrupted update created it and nothing owns it now`);
  for (const o of plan.deferred) {
    warn(
      `crash journal: ${objectName(o)} (bundle ${o.bundle}) may have been left on cluster ${o.cluster} by an interrupted update; ` +
        "the cluster is not reachable or not configured now, so it is kept in the journal for a later up",
    );
  }
  // Kept apart from the running update's own entry, which goes once that update's state is written.
  if (plan.deferred.length) await journal.add({ writer: `deferred by ${writer}`, objects: plan.deferred });
  await journal.remove(earlier.map((x) => x.key));
}
