/**
 * What a pull request's summary says about held pairs and about approving a rollout partition by
 * partition: the held pairs (a maintenance window, `up --partition`; not failures), and which rollout
 * partitions the change touches, in order, with the command that deploys each (core/desired/holds.ts).
 */
import { deploymentKey } from "../../core/desired/keys";
import { DeploymentFailure } from "../../core/desired/failures";
import { DeploymentRecord } from "../../core/desired/records";
import { FleetState } from "../../core/pipeline";
import { knownPartitions } from "../../core/desired/holds";

/** The partitions, in rollout order, holding a cluster whose pair of a staged bundle changes (or is held). */
export function touchedPartitions(state: FleetState, before: Record<string, DeploymentRecord>): string[] {
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

/** One line: the partitions the change touches, and the commands of a pipeline that approves between them. */
export function partitionsMarkdown(stack: string, state: FleetState, before: Record<string, DeploymentRecord>): string[] {
  const touched = touchedPartitions(state, before);
  if (!touched.length) return [];
  const commands = touched.map((p) => `\`npm run up -- --stack ${stack} --partition ${quoted(p)}\``);
  return [`**Partitions** this change touches, in rollout order: ${touched.map((p) => `\`${p}\``).join(" → ")}. ` +
    `To approve between them, run ${commands.join(", then ")} (each deploys its partitions up to that one and holds the later ones).`, ""];
}

/** Bundle deployments the update holds, not fails: each keeps what it has. */
export function heldMarkdown(held: DeploymentFailure[]): string[] {
  if (!held.length) return [];
  const cell = (t: string) => t.replace(/\|/g, "\\|").replace(/\n/g, " ");
  return [
    "### Held bundle deployments", "", "Not failures: each keeps what it has until its window opens or its partition is deployed.", "",
    "| cluster | bundle | GitRepo | keeps | why |", "|---|---|---|---|---|",
    ...held.map((f) => `| ${f.cluster} | ${f.bundle} | ${f.gitRepo} | ${f.kept ? `${f.kept.objects} object(s)` : "nothing deployed yet"} | ${cell(f.reason)} |`),
    "",
  ];
}

/** A partition name as one shell word. */
function quoted(p: string): string {
  return /^[\w.:@%+=,/-]+$/.test(p) ? p : `'${p.replace(/'/g, "'\\''")}'`;
}
