/**
 * What a pull request's summary says about held pairs and about approving a rollout partition by
 * partition: the held pairs (a maintenance window, `up --partition`; not failures), and the rollout
 * partitions the change touches (core/desired/report-facts.ts), in order, with the command that deploys each.
 */
import type { DeploymentFailure } from "../../core/plan/failures";
import { markdownCell, markdownCode, markdownText } from "./escape/markdown";

/** One line: the partitions the change touches, and the commands of a pipeline that approves between them. */
export function partitionsMarkdown(stack: string, touched: string[]): string[] {
  if (!touched.length) return [];
  const commands = touched.map((p) => markdownCode(`npm run up -- --stack ${quoted(stack)} --partition ${quoted(p)}`, 600));
  return [
    `**Partitions** this change touches, in rollout order: ${touched.map((p) => markdownCode(p)).join(" → ")}. ` +
      `To approve between them, run ${commands.join(", then ")} (each deploys its partitions up to that one and holds the later ones).`,
    "",
  ];
}

/** Bundle deployments the update holds, not fails: each keeps what it has. */
export function heldMarkdown(held: DeploymentFailure[]): string[] {
  if (!held.length) return [];
  return [
    "### Held bundle deployments",
    "",
    "Not failures: each keeps what it has until its window opens, its partition is deployed or its cluster is resumed.",
    "",
    "| cluster | bundle | GitRepo | keeps | why |",
    "|---|---|---|---|---|",
    ...held.map(
      (f) =>
        `| ${markdownCell(f.cluster)} | ${markdownCell(f.bundle)} | ${markdownCell(f.gitRepo)} | ${f.kept ? `${f.kept.objects} object(s)` : "nothing deployed yet"} | ${markdownText(f.reason)} |`,
    ),
    "",
  ];
}

/** A partition name as one shell word. */
function quoted(p: string): string {
  return /^[\w.:@%+=,/-]+$/.test(p) ? p : `'${p.replace(/'/g, "'\\''")}'`;
}
