/**
 * One owner per object and cluster, decided over every rendered deployment of the run: the rule, and
 * the contested objects whose live owners the desired state reads before applying it.
 */
import { FleetError } from "../base/errors";
import { describeObject, K8sObject, objectKey } from "../model/k8s-object";
import { PlanEntry } from "../targeting/plan";

/** What the rule reads of a rendered deployment (render/deployments.ts RenderedDeployment). */
type Rendered = { objects: K8sObject[] };

/**
 * One owner per object and cluster. Two bundles rendering the same object for one cluster fail in
 * Fleet (Helm refuses to install an object another release owns); here both would be resources of
 * their own, applying over each other, and a prune of either would delete the object under the other.
 * The deployment that deployed it before (`owners`, by claim key: core/desired/owners.ts) keeps it, so a squatter
 * of another GitRepo never holds its owner back; when none did, the first in plan order does. With
 * `onConflict`, every other deployment declaring it goes there and its objects claim nothing (what
 * only it contested goes to the next); without it the first conflict is thrown.
 */
export function checkSingleOwner(
  rendered: ReadonlyMap<PlanEntry, Rendered>,
  onConflict?: (entry: PlanEntry, err: FleetError) => void,
  owners: ReadonlyMap<string, { gitRepo: string; bundle: string }> = new Map(),
): void {
  let alive = [...rendered.keys()];
  for (;;) {
    const contested = claimsOf(alive, rendered);
    if (!contested.length) return;
    const lost = new Map<PlanEntry, { winner: PlanEntry; err: FleetError }[]>();
    for (const [key, { object: o, by }] of contested) {
      const owner = owners.get(key);
      const known = owner && by.find((e) => e.gitRepo === owner.gitRepo && e.bundle === owner.bundle);
      const winner = known ?? by[0];
      for (const e of by) {
        if (e === winner) continue;
        (lost.get(e) ?? lost.set(e, []).get(e)!).push({
          winner,
          err: new FleetError(
            `${describeObject(o)} is also deployed by bundle ${winner.bundle} (GitRepo ${winner.gitRepo}) on this cluster${known ? ", which deployed it before and keeps it" : ""}; ` +
              "an object has one owner (Fleet's Helm refuses an object another release owns): change its namespace or name in one of the bundles",
            { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster },
          ),
        });
      }
    }
    // Losing to a deployment that itself loses is no loss yet: its objects may claim nothing (next round).
    let losers = new Map(
      [...lost].flatMap(([e, l]) =>
        l
          .filter((x) => !lost.has(x.winner))
          .slice(0, 1)
          .map((x): [PlanEntry, FleetError] => [e, x.err]),
      ),
    );
    if (!losers.size) losers = new Map([...lost].map(([e, l]) => [e, l[0].err]));
    if (!onConflict) throw [...losers.values()][0];
    for (const [e, err] of losers) onConflict(e, err);
    alive = alive.filter((e) => !losers.has(e));
  }
}

/** The objects more than one of `alive` declares on a cluster, by claim key ("<cluster>\0<object key>"), with who declares them. */
function claimsOf(alive: PlanEntry[], rendered: ReadonlyMap<PlanEntry, Rendered>): [string, { object: K8sObject; by: PlanEntry[] }][] {
  const claims = new Map<string, { object: K8sObject; by: PlanEntry[] }>();
  for (const e of alive) {
    for (const o of rendered.get(e)!.objects) {
      const key = `${e.cluster}\u0000${objectKey(o)}`;
      const claim = claims.get(key) ?? claims.set(key, { object: o, by: [] }).get(key)!;
      if (!claim.by.includes(e)) claim.by.push(e);
    }
  }
  return [...claims].filter(([, c]) => c.by.length > 1);
}

/** The objects checkSingleOwner must know the owners of: those more than one deployment declares on a cluster, with the GitRepos declaring them. */
export function contestedObjects(rendered: ReadonlyMap<PlanEntry, Rendered>): { cluster: string; object: K8sObject; gitRepos: string[] }[] {
  return claimsOf([...rendered.keys()], rendered).map(([, c]) => ({
    cluster: c.by[0].cluster,
    object: c.object,
    gitRepos: [...new Set(c.by.map((e) => e.gitRepo))].sort(),
  }));
}
