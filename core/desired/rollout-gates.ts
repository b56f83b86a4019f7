/** Which deployments a bundle's rolloutStrategy makes wait for others, and which it holds back: a pure decision of the plan and the failures. */
import { Bundle } from "../bundles/types";
import { FleetError } from "../base/errors";
import { BundleRollout } from "../plan/pipeline";
import { PlanEntry } from "../targeting/plan";
import { partitionsOf, rolloutWarnings } from "../targeting/rollout";
import { holdMessage, rolloutHold } from "../targeting/rollout-hold";
import { FailedDeployments } from "../plan/failures";
import { bundleRef } from "../model/keys";

export interface RolloutGates {
  /** Per deployment, the deployments of its bundle on other clusters it waits for (earlier waves). */
  gates: Map<PlanEntry, PlanEntry[]>;
  /** Deployments a failed one of an earlier wave holds back, with why: they keep what they have, as in a paused rollout. */
  waiting: [PlanEntry, FleetError][];
  /** The same, where what stops the rollout is only clusters outside their maintenance windows: held, not failed (holds.ts). */
  heldBack: [PlanEntry, FleetError][];
  byBundle: Map<string, BundleRollout>;
}

/**
 * fleet.yaml rolloutStrategy (core/targeting/rollout.ts) as dependencies: each deployment of a wave that
 * waits depends on the bundle's deployments of the waves since the last such wave, so the engine applies
 * it only once those are applied and ready, and skips it when one fails. A cluster of an earlier wave
 * whose deployment failed alone (its objects as they were: not ready with this commit) holds the later
 * ones back, as Fleet's rollout pauses on an unavailable partition. The deploymentIDs do not change.
 */
export function rolloutGates(
  entries: PlanEntry[],
  bundles: Bundle[],
  partitions: ReadonlyMap<Bundle, readonly ReadonlySet<string>[]>,
  failures: FailedDeployments,
): RolloutGates {
  const out: RolloutGates = { gates: new Map(), waiting: [], heldBack: [], byBundle: new Map() };
  const staged = new Set(bundles.filter((b) => b.rolloutStrategy).map((b) => bundleRef({ gitRepo: b.gitRepo, bundle: b.name })));
  if (!staged.size) return out;
  // Grouped once: a fleet of thousands of bundles must not filter every entry per bundle.
  const entriesOf = new Map<string, PlanEntry[]>();
  for (const e of entries) if (staged.has(bundleRef(e))) (entriesOf.get(bundleRef(e)) ?? entriesOf.set(bundleRef(e), []).get(bundleRef(e))!).push(e);
  const failedOf = new Map<string, string[]>();
  for (const f of failures.list())
    if (f.cluster && staged.has(bundleRef(f))) (failedOf.get(bundleRef(f)) ?? failedOf.set(bundleRef(f), []).get(bundleRef(f))!).push(f.cluster);
  for (const bundle of bundles) {
    if (!bundle.rolloutStrategy) continue;
    const ref = bundleRef({ gitRepo: bundle.gitRepo, bundle: bundle.name });
    const own = entriesOf.get(ref) ?? [];
    const failedHere = (failedOf.get(ref) ?? []).map((cluster) => ({ cluster }));
    // Partitions are of every cluster the bundle targets, deploying or failed (as Fleet's targets are).
    const clusters = [...new Set([...own.map((e) => e.cluster), ...failedHere.map((f) => f.cluster)])].sort();
    const rollout = partitionsOf(bundle.rolloutStrategy, clusters, partitions.get(bundle) ?? []);
    out.byBundle.set(ref, { gitRepo: bundle.gitRepo, bundle: bundle.name, ...rollout, warnings: rolloutWarnings(bundle.rolloutStrategy, rollout) });
    const byCluster = new Map(own.map((e) => [e.cluster, e]));
    // A failed cluster holds back every wave from the next one that waits on (rollout-hold.ts).
    // A cluster held by `--partition` stops nothing (the waves after it are held by it too); one outside its
    // window or paused does, as a failed one, and holds the later waves back without failing them.
    const failureOn = (c: string) => failures.get({ gitRepo: bundle.gitRepo, bundle: bundle.name, cluster: c });
    const hold = rolloutHold({ ...rollout, bundle: bundle.name }, (c) => !!failureOn(c) && failureOn(c)!.held !== "partition");
    const held = new Set(hold?.held ?? []);
    const behindWindows = !!hold && hold.notReady.every((c) => failureOn(c)?.held === "schedule" || failureOn(c)?.held === "paused");
    let before: string[] = [];
    let since: string[] = [];
    for (const wave of rollout.waves) {
      if (wave.afterPrevious) {
        before = since;
        since = [];
      }
      since.push(...wave.clusters);
      for (const c of wave.clusters) {
        const e = byCluster.get(c);
        if (!e) continue;
        if (held.has(c)) {
          (behindWindows ? out.heldBack : out.waiting).push([
            e,
            new FleetError(holdMessage(hold!), { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: bundle.fleetYaml, field: "rolloutStrategy" }),
          ]);
          continue;
        }
        const gates = before.map((b) => byCluster.get(b)!).filter((g) => g);
        if (gates.length) out.gates.set(e, gates);
      }
    }
  }
  return out;
}
