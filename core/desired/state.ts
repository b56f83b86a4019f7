/**
 * From stack configuration to the desired state: everything the program registers, computed and
 * checked before the first registration, as one plain value. Order matters for safety: every source
 * is read and the whole plan built and checked before anything is rendered, and everything that can
 * fail fails here, so a read error or a fleet about to be emptied stops the program while the engine
 * still has nothing to delete. What it needs from outside (rendering, clusters, the last outputs, the
 * crash journal) comes through `facts` (facts.ts). ground.ts builds the plan, state-steps.ts decides
 * in steps (steps.ts), assemble.ts (the clusters) and deployment.ts (each deployment) put the parts together.
 */
import { deployedAgents } from "../agent/effective";
import { StackConfig } from "../config/stack";
import { FleetError } from "../base/errors";
import { FleetState } from "../plan/pipeline";
import { desiredClusters, finalNamespaces } from "./assemble";
import { desiredDeployment } from "./deployment";
import { Facts } from "./facts";
import { describeFailure } from "../plan/failures";
import { gatherKubeconfigs } from "./gather";
import { groundOf } from "./ground";
import { heldDeployments } from "./held";
import { agentsWhilePaused, keptOutsideWindows, keptWhilePaused, pausedMessage } from "./holds";
import { journalObjects } from "./journal-objects";
import { DesiredOptions } from "./options";
import { inDependencyOrder } from "./order";
import { arrivedClusters } from "./previous";
import { summarize } from "./records";
import { setupSecretsNote } from "./render-secrets";
import * as step from "./state-steps";
import { Steps } from "./steps";
import { DesiredState } from "./types";

export async function desiredState(config: StackConfig, given: Facts, options: DesiredOptions = {}): Promise<DesiredState> {
  const g = await groundOf(config, given, options);
  const { fleet, failures, previous, pinned, facts, renderMode, leftOut } = g;
  // Each step fails the deployments it finds wrong, alone, with what waits for them on their cluster (steps.ts).
  const steps = new Steps(fleet.plan.entries, failures);
  await steps.judge("paused clusters", (alive) => step.pausedClusters(g, alive));
  await steps.judge("reach", (alive) => step.reach(g, alive));
  const got = await steps.judge("valuesFrom", (alive) => step.valuesFrom(g, alive));
  const pairInputs = await steps.judge("stalled", (alive) => step.stalled(g, alive));
  await steps.judge("maintenance windows", (alive) => step.maintenanceWindows(g, alive));
  const r = await steps.judge("render", (alive) => step.render(g, got, alive));
  await steps.judge("rendered objects", (alive) => step.renderedObjects(g, got, r, alive));
  await steps.judge("takeOwnership", (alive) => step.takeOwnership(g, got, r, alive));
  await steps.judge("dependency order", (alive) => step.dependencyOrder(alive));
  await steps.judge("namespaces", (alive) => step.namespaces(g, r, alive));
  let holds = await steps.judge("holds and rollout gates", (alive) => step.holdsAndRolloutGates(g, r, alive), true);
  const entries = steps.entries;
  // A pair leaving a cluster outside its windows is kept, decided after the rollouts: it is in no partition, and nothing alive waits on it.
  const leaving = keptOutsideWindows(fleet.plan.entries, g.outside, previous, g.readNow);
  const leavingPaused = keptWhilePaused(fleet.plan.entries, g.paused, previous);
  failures.record({
    failed: [
      ...leavingPaused.map(([pair, error]) => ({ pair, error, held: "paused" as const })),
      ...leaving.map(([pair, error]) => ({ pair, error, held: "schedule" as const })),
    ],
  });
  if (leaving.length || leavingPaused.length) holds = { ...holds, held: heldDeployments(failures, fleet, g.readNow, previous, facts.deployed) };
  const { held, rollouts } = holds;
  const namespaces = finalNamespaces(g, r, entries, held);
  // Into got.known, which desiredClusters reads (each held user's account provider): before it.
  await gatherKubeconfigs(
    held.accounts(),
    pinned.clusters,
    facts,
    got.known,
    (w, error) => new FleetError(`cannot act as ${w.user}, which a failed bundle deployment's objects were applied as: ${error}`, { cluster: w.cluster }),
  );
  const arrived = arrivedClusters(
    pinned.clusters.map((c) => c.name),
    previous,
  );
  const clusters = desiredClusters(g, got, namespaces, arrived);
  const deployments = [
    ...inDependencyOrder(entries, undefined, rollouts.gates).map((e) => desiredDeployment(g, { got, r, holds }, e, { namespaces, arrived })),
    ...held.deployments((cluster) => new Set(namespaces.get(cluster)?.map((ns) => ns.metadata.name)), arrived),
  ];
  // The plan as it deploys: what failed left out, each bundle's rollout; the planned value stays as handed to onPlanned.
  const final: FleetState = { ...fleet, plan: { ...fleet.plan, entries }, rollouts: rollouts.byBundle, pairInputs };
  const summarized = summarize(final, deployedAgents(g.agents), held.records(), previous?.gitRepos);
  const summary = { ...summarized, agents: agentsWhilePaused(summarized.agents, g.paused, previous) };
  const state: DesiredState = {
    fleet: final,
    clusters,
    deployments,
    summary,
    gitRepos: Object.entries(summary.gitRepos).map(([name, x]) => ({ name, ...x })),
    records: Object.fromEntries(deployments.map((d) => [d.key, d.record])),
    journal: journalObjects(deployments, leftOut),
    failures: failures.list(),
    warnings: [
      ...[...fleet.sources.values()].flatMap((s) => s.warnings.map((w) => `gitRepo ${s.gitRepo}: ${w}`)),
      ...(!facts.deployed && r.unchanged.size
        ? [
            `${r.unchanged.size} unchanged bundle deployment(s) were rendered again: this program was not given the state (a plain \`pulumi up\`), ` +
              "so a chart with random values, timestamps or lookup changes on every such up; `npm run up` and the operations deploy them exactly as last deployed, as Fleet does",
          ]
        : []),
      // A held deployment says so on its own component; one that keeps nothing is said here.
      ...failures
        .list()
        .filter((f) => !f.kept)
        .map((f) => (f.held ? describeFailure(f) : `failed: ${describeFailure(f)}`)),
      ...[...rollouts.byBundle.values()].flatMap((x) => x.warnings.map((w) => `bundle ${x.bundle}: ${w}`)),
      ...[...g.paused].map(([c, p]) => `${pausedMessage(c, p)}: its bundle deployments, agent and namespaces are registered as they are, paused`),
      ...(renderMode ? clusters.flatMap((c) => setupSecretsNote(pinned.renderDir!, c.name, Object.values(c.setup?.secretObjects ?? {}))) : []),
    ],
  };
  return state;
}
