/**
 * What the reports (automation/reports/: the PR summary, the pages, `status`) print that core decides,
 * decided once per operation from the plan and the records before it: why each pair left, each
 * cluster's groups, the partitions a change touches and where a rollout is held. The reports receive
 * this value and import only types from core, so none of these rules is applied a second time there
 * (the deployment key's format included).
 */
import type { FleetState } from "../plan/pipeline";
import type { DeploymentRecord } from "./records";
import { deploymentKey } from "../model/keys";
import { knownPartitions } from "./holds";
import { Departure, departures, departureText, UNRECORDED_DEPARTURE } from "./departures";
import { clusterViews } from "../targeting/match";
import { holdMessage, rolloutHold } from "../targeting/rollout-hold";

/** A pair the records hold that this plan no longer deploys, with its one phrasing (Markdown code spans). */
export interface Leaving {
  departure: Departure;
  text: string;
}

/** Where a rollout is held, and the one sentence that says so (core/targeting/rollout-hold.ts). */
export interface HeldRollout {
  gitRepo: string;
  bundle: string;
  /** The clusters held behind the partition that stopped. */
  held: string[];
  message: string;
}

export interface ReportFacts {
  /** A pair's deployment key (keys.ts), by which records, steps and these facts name it. */
  keyOf: (pair: { gitRepo: string; bundle: string; cluster: string }) => string;
  /** By deployment key, in key order (core/desired/departures.ts). */
  leaving: Map<string, Leaving>;
  /** What a pruned pair that no record explains is said to be. */
  unrecorded: string;
  /** Each configured cluster's groups (those whose selector matches it), sorted. */
  groups: Map<string, string[]>;
  /** The rollout partitions, in rollout order, holding a cluster whose pair of a staged bundle changes (or is held). */
  touchedPartitions: string[];
  /** Each rollout stopped on the clusters `stopping` names (failed, not ready), as the reports see them. */
  heldRollouts: (stopping: (pair: { gitRepo: string; bundle: string; cluster: string }) => boolean) => HeldRollout[];
}

export function reportFacts(state: FleetState, before: Record<string, DeploymentRecord>): ReportFacts {
  const rollouts = [...(state.rollouts?.values() ?? [])];
  const leaving = new Map([...departures(before, state)].map(([key, d]) => [key, { departure: d, text: departureText(d) }]));
  const groups = new Map(clusterViews(state.config.clusters, state.config.clusterGroups ?? []).map((v) => [v.name, [...v.groups.keys()].sort()]));
  return {
    keyOf: deploymentKey,
    leaving,
    unrecorded: UNRECORDED_DEPARTURE,
    groups,
    touchedPartitions: touchedPartitions(state, before),
    heldRollouts: (stopping) =>
      rollouts.flatMap((r) => {
        const hold = rolloutHold(r, (cluster) => stopping({ gitRepo: r.gitRepo, bundle: r.bundle, cluster }));
        return hold ? [{ gitRepo: r.gitRepo, bundle: r.bundle, held: hold.held, message: holdMessage(hold) }] : [];
      }),
  };
}

function touchedPartitions(state: FleetState, before: Record<string, DeploymentRecord>): string[] {
  const rollouts = [...(state.rollouts?.values() ?? [])];
  const changed = [
    ...state.plan.entries.filter((e) => before[deploymentKey(e)]?.deploymentId !== e.deploymentId),
    ...(state.failures?.list() ?? []).filter((f) => f.held && f.cluster),
  ];
  const touched = new Set<string>();
  for (const r of rollouts) {
    for (const c of changed.filter((x) => x.gitRepo === r.gitRepo && x.bundle === r.bundle)) {
      const wave = r.waves.find((w) => w.clusters.includes(c.cluster));
      if (wave?.partition) touched.add(wave.partition);
    }
  }
  return knownPartitions(rollouts).filter((p) => touched.has(p));
}
