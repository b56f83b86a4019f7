/**
 * The pull-request summary of a preview, as Markdown: per cluster and bundle what the update would
 * create, update, replace and delete with the deploymentId before and after, the agents (a replace is
 * a warning: it restarts the agent), and every prune with its reason. Everything is sorted, so the
 * same change always gives the same text. Every name and word that comes from the fleet goes through
 * escape/markdown.ts: a name as code, a sentence as text, a table's cell as a cell.
 */
import type { FleetState } from "../../core/plan/pipeline";
import type { DeploymentFailure } from "../../core/plan/failures";
import { heldMarkdown, partitionsMarkdown } from "./partition-summary";
import { compare } from "./deploy-events";
import { blastRadiusMarkdown, previewMatrix } from "./fleet-matrix";
import { PreviewReport, prunesOf } from "./preview-report";
import { ChangeCounts, hasChanges } from "../engine/steps";
import { markdownCell, markdownCode, markdownText } from "./escape/markdown";
import { describeRollout } from "./rollout-report";

/** "s-1234567890ab…:89abcdef": enough to tell two deploymentIds apart in a table. */
export function shortId(id: string | undefined): string {
  if (!id) return "—";
  const [manifest, options] = id.split(":");
  return `\`${manifest.slice(0, 14)}…${options ? `:${options.slice(0, 8)}` : ""}\``;
}

/** "GitRepo `g` bundle `b`: <warning>" for every bundle's reading warnings, sorted, as Markdown. */
export function bundleWarnings(state: FleetState): string[] {
  const lines = state.bundles.flatMap((b) =>
    (b.warnings ?? []).map((w) => `GitRepo ${markdownCode(b.gitRepo)} bundle ${markdownCode(b.name)}: ${markdownText(w)}`),
  );
  return [...new Set(lines)].sort(compare);
}

/** Clusters named per warning at most; the rest are counted. */
const MAX_WARNING_CLUSTERS = 10;
/** Deployment warnings listed at most (content decides how many there are); the rest are counted. */
export const MAX_DEPLOYMENT_WARNINGS = 50;

/**
 * "GitRepo `g` bundle `b` on cluster(s) `c1`, `c2`: <warning>" for each warning a deployment has beyond
 * its bundle's own (those are bundleWarnings'), one line per distinct warning with its clusters, sorted.
 */
export function deploymentWarningLines(report: PreviewReport): string[] {
  const own = new Map(report.state.bundles.map((b) => [`${b.gitRepo}\u0000${b.name}`, new Set(b.warnings ?? [])]));
  const clusters = new Map<string, { gitRepo: string; bundle: string; text: string; clusters: string[] }>();
  for (const d of report.deploymentWarnings ?? []) {
    const prefix = `bundle ${d.bundle} on cluster ${d.cluster}: `;
    for (const w of d.warnings) {
      if (!w.startsWith(prefix)) continue;
      const text = w.slice(prefix.length);
      if (own.get(`${d.gitRepo}\u0000${d.bundle}`)?.has(text)) continue;
      const key = `${d.gitRepo}\u0000${d.bundle}\u0000${text}`;
      (clusters.get(key) ?? clusters.set(key, { gitRepo: d.gitRepo, bundle: d.bundle, text, clusters: [] }).get(key)!).clusters.push(d.cluster);
    }
  }
  const lines = [...clusters.values()].map((w) => {
    const names = [...w.clusters].sort(compare);
    const shown = names
      .slice(0, MAX_WARNING_CLUSTERS)
      .map((c) => markdownCode(c))
      .join(", ");
    const more = names.length > MAX_WARNING_CLUSTERS ? ` and ${names.length - MAX_WARNING_CLUSTERS} more` : "";
    return `GitRepo ${markdownCode(w.gitRepo)} bundle ${markdownCode(w.bundle)} on cluster(s) ${shown}${more}: ${markdownText(w.text)}`;
  });
  const sorted = lines.sort(compare);
  if (sorted.length <= MAX_DEPLOYMENT_WARNINGS) return sorted;
  return [
    ...sorted.slice(0, MAX_DEPLOYMENT_WARNINGS),
    `… and ${sorted.length - MAX_DEPLOYMENT_WARNINGS} more deployment warning(s): the preview's output lists them all`,
  ];
}

export function renderSummaryMarkdown(report: PreviewReport): string {
  const after = new Map(report.state.plan.entries.map((e) => [report.facts.keyOf(e), e.deploymentId]));
  const deployments = [...report.groups.deployments.values()].filter((d) => hasChanges(d) || d.pruned || d.hooks?.length).sort((a, b) => compare(a.key, b.key));
  const agents = [...report.groups.agents.values()].filter(hasChanges).sort((a, b) => compare(a.cluster, b.cluster));
  const prunes = prunesOf(report);
  const total = [...deployments, ...agents].reduce(
    (t, c) => ({
      created: t.created + c.created,
      updated: t.updated + c.updated,
      replaced: t.replaced + c.replaced,
      deleted: t.deleted + c.deleted,
    }),
    { created: 0, updated: 0, replaced: 0, deleted: 0 } as ChangeCounts,
  );
  const clusters = new Set([...deployments.map((d) => d.cluster), ...agents.map((a) => a.cluster)]);

  const out: string[] = [`## pulumi-fleet preview of stack ${markdownCode(report.stack)}`, ""];
  for (const [c, why] of [...(report.unreachable ?? [])].sort()) {
    out.push(`> **Warning:** cluster ${markdownCode(c)} is unreachable (${markdownText(why)}): it was left out of this preview.`, "");
  }
  // Settings the fleet gives that are not honoured (or credentials withheld): said on every preview.
  for (const w of bundleWarnings(report.state)) out.push(`> **Warning:** ${w}`, "");
  for (const w of deploymentWarningLines(report)) out.push(`> **Warning:** ${w}`, "");
  out.push(...failuresMarkdown(report.state.failures?.list().filter((f) => !f.held && !f.stalled) ?? []));
  out.push(...stalledMarkdown(report.state.failures?.list().filter((f) => f.stalled) ?? []));
  out.push(...heldMarkdown(report.state.failures?.list().filter((f) => f.held) ?? []));
  // The order a change reaches the clusters in, before anyone merges it.
  const rollouts = [...(report.state.rollouts ?? [])].sort(([a], [b]) => compare(a, b)).map(([, r]) => r);
  if (rollouts.length)
    out.push(
      "### Rollout",
      "",
      ...rollouts.map((r) => `- bundle ${markdownCode(r.bundle)} (GitRepo ${markdownCode(r.gitRepo)}) rolls out: ${markdownText(describeRollout(r))}`),
      "",
      ...partitionsMarkdown(report.stack, report.facts.touchedPartitions),
    );
  // Where this rollout differs from what Fleet's code would do: said on every preview, as other settings are.
  for (const [, r] of [...(report.state.rollouts ?? [])].sort(([a], [b]) => compare(a, b))) {
    for (const w of r.warnings) out.push(`> **Warning:** GitRepo ${markdownCode(r.gitRepo)} bundle ${markdownCode(r.bundle)}: ${markdownText(w)}`, "");
  }
  if (!clusters.size) {
    out.push("No changes: every bundle deployment and agent is up to date.");
    return out.join("\n") + "\n";
  }
  out.push(
    `Changes on ${clusters.size} cluster(s): ${total.created} to create, ${total.updated} to update, ${total.replaced} to replace, ${total.deleted} to delete.`,
    "",
  );

  const warnings = agents.filter((a) => a.replaced > 0);
  for (const a of warnings) {
    out.push(`> **Warning:** the agent on ${markdownCode(a.cluster)} would be replaced (${markdownText(a.replacements.join(", "))}), which restarts it.`, "");
  }
  // The compact picture first: which clusters and bundles the change touches, at a glance.
  out.push(...blastRadiusMarkdown(previewMatrix({ ...report, prunes })));

  if (deployments.length) {
    out.push(
      "### Bundle deployments",
      "",
      "| cluster | bundle | create | update | replace | delete | deploymentId before | after |",
      "|---|---|---:|---:|---:|---:|---|---|",
    );
    for (const d of deployments) {
      out.push(
        `| ${markdownCell(d.cluster)} | ${markdownCell(d.bundle)} | ${d.created} | ${d.updated} | ${d.replaced} | ${d.deleted} | ${shortId(report.before[d.key]?.deploymentId)} | ${d.pruned ? "pruned" : shortId(after.get(d.key))} |`,
      );
    }
    out.push("");
  }
  // Hooks run as Helm runs them around the release, apart from the objects the set keeps.
  const hooked = deployments.filter((d) => d.hooks?.length);
  if (hooked.length) {
    out.push("### Helm hooks that run", "", "| cluster | bundle | hooks, in order |", "|---|---|---|");
    for (const d of hooked) out.push(`| ${markdownCell(d.cluster)} | ${markdownCell(d.bundle)} | ${d.hooks!.map((h) => markdownCell(h)).join("<br>")} |`);
    out.push("");
  }
  if (agents.length) {
    out.push("### Agents", "", "| cluster | create | update | replace | delete |", "|---|---:|---:|---:|---:|");
    for (const a of agents) out.push(`| ${markdownCell(a.cluster)} | ${a.created} | ${a.updated} | ${a.replaced ? `**${a.replaced}** ⚠` : 0} | ${a.deleted} |`);
    out.push("");
  }
  if (prunes.length) {
    out.push("### Prunes", "", "| cluster | bundle | objects removed | why |", "|---|---|---:|---|");
    for (const p of prunes) out.push(`| ${markdownCell(p.cluster)} | ${markdownCell(p.bundle)} | ${p.objects} | ${markdownText(p.reason)} |`);
    out.push("");
  }
  return out.join("\n");
}

/** Stalled bundle deployments (core/plan/stalled.ts): failures not tried again; the preview fails with them. */
export function stalledMarkdown(stalled: DeploymentFailure[]): string[] {
  if (!stalled.length) return [];
  return [
    "### Stalled bundle deployments",
    "",
    "Each failed the same way with the same inputs until `stalledAfter`: stalled: not applied, `--retry` to try again (a new commit, options or cluster credentials end it too).",
    "",
    "| cluster | bundle | GitRepo | failures | since | last failure |",
    "|---|---|---|---:|---|---|",
    ...stalled.map(
      (f) =>
        `| ${markdownCell(f.cluster)} | ${markdownCell(f.bundle)} | ${markdownCell(f.gitRepo)} | ${f.stalled!.failures} | ${markdownCell(f.stalled!.since)} | ${markdownText(f.stalled!.reason)} |`,
    ),
    "",
  ];
}

/** Bundle deployments that fail: each fails alone and keeps what it last deployed; the preview fails with them. */
export function failuresMarkdown(failed: DeploymentFailure[]): string[] {
  if (!failed.length) return [];
  return [
    `> **Failed:** ${failed.length} bundle deployment(s) cannot be deployed from this commit. Each fails alone: everything else deploys, and these keep exactly what they last deployed (nothing is pruned or changed).`,
    "",
    "### Failed bundle deployments",
    "",
    "| cluster | bundle | GitRepo | keeps | why |",
    "|---|---|---|---|---|",
    ...failed.map(
      (f) =>
        `| ${f.cluster ? markdownCell(f.cluster) : "—"} | ${markdownCell(f.bundle)} | ${markdownCell(f.gitRepo)} | ${f.kept ? `${f.kept.objects} object(s) at ${shortId(f.kept.deploymentId)}` : "nothing deployed"} | ` +
        `${markdownText(`${f.file ? `${f.file}${f.field ? ` ${f.field}` : ""}: ` : f.field ? `${f.field}: ` : ""}${f.reason}`)} |`,
    ),
    "",
  ];
}
