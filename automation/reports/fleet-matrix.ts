/**
 * The picture of a fleet as a matrix: clusters (rows, grouped by cluster group or by a label) by
 * bundles (columns, grouped by GitRepo), one cell per pair. Built from a StatusReport (Fleet's states)
 * or from a preview (what the update would do to each pair); the HTML page (status-page.ts) and the
 * PR summary's compact grid (pr-summary.ts) both draw this one model, so they cannot disagree.
 * Pure: data in, data out.
 */
import { rolloutLines } from "./rollout-report";
import { compare } from "./deploy-events";
import type { PreviewReport, Prune } from "./preview-report";
import { hasChanges } from "../engine/steps";
import { clusterNote, DeploymentState, STATE_RANK, StatusReport, stateWords } from "./status";
import { markdownCell } from "./escape/markdown";

/** Fleet's states, plus what a preview does to a pair, plus a pair no target selects. */
export type CellKind = DeploymentState | "create" | "update" | "replace" | "prune" | "unchanged" | "unreachable" | "NotTargeted";

/** Legend order: the worst first, as a person scans for trouble. */
export const STATUS_KINDS: CellKind[] = [...(Object.keys(STATE_RANK) as DeploymentState[]), "NotTargeted"];
export const PREVIEW_KINDS: CellKind[] = ["ErrApplied", "prune", "replace", "update", "create", "unreachable", "unchanged", "NotTargeted"];

export const KIND_LABEL: Record<CellKind, string> = {
  ErrApplied: "ErrApplied",
  WaitApplied: "WaitApplied",
  Modified: "Modified",
  OutOfSync: "OutOfSync",
  Pending: "Pending",
  NotReady: "NotReady",
  Ready: "Ready",
  NotTargeted: "not targeted",
  create: "create",
  update: "update",
  replace: "replace",
  prune: "prune",
  unchanged: "no change",
  unreachable: "Offline (not read, left out)",
};

/** A letter or sign in the cell, so the state reads without telling colours apart. */
export const KIND_MARK: Record<CellKind, string> = {
  ErrApplied: "E",
  WaitApplied: "W",
  Modified: "M",
  OutOfSync: "O",
  Pending: "P",
  NotReady: "N",
  Ready: "",
  NotTargeted: "",
  create: "+",
  update: "~",
  replace: "±",
  prune: "−",
  unchanged: "",
  unreachable: "?",
};

export interface Cell {
  kind: CellKind;
  /** Lines shown on hover and on click: the pair, the state, the deploymentId(s), the message. */
  detail: string[];
}

export interface Column {
  gitRepo: string;
  bundle: string;
}

export interface ColumnGroup {
  gitRepo: string;
  commit: string;
  /** readyClusters x/y (status only). */
  ready?: string;
  kind?: CellKind;
  bundles: string[];
}

export interface Row {
  cluster: string;
  /** Values of the page's per-cluster columns (Matrix.rowInfo names them); `kind` colours the first. */
  info: string[];
  kind?: CellKind;
  /** Long values shown whole on hover (the agent image, the config hash). */
  infoTitles?: string[];
  /** One per column, in Matrix.columns order. */
  cells: Cell[];
}

export interface Matrix {
  title: string;
  /** Lines under the title (the time it was taken, warnings). */
  notes: string[];
  kinds: CellKind[];
  counts: Partial<Record<CellKind, number>>;
  rowInfo: string[];
  /** How many of rowInfo are drawn before the cells (the rest after them, so the grid sits next to the names). */
  leadInfo: number;
  columnGroups: ColumnGroup[];
  columns: Column[];
  rowGroups: { name: string; rows: Row[] }[];
}

/** How rows are grouped: by cluster group (a cluster in several groups is listed under the first) or by a label's value. */
export type GroupBy = { clusterGroup: true } | { label: string };

interface ClusterFacts {
  cluster: string;
  labels: Record<string, string>;
  groups: string[];
}

function groupRows(rows: Row[], facts: Map<string, ClusterFacts>, by: GroupBy): { name: string; rows: Row[] }[] {
  const nameOf = (r: Row) => {
    const f = facts.get(r.cluster);
    if ("label" in by) return f?.labels[by.label] !== undefined ? `${by.label}=${f.labels[by.label]}` : `no label ${by.label}`;
    return f?.groups.length ? `group ${f.groups[0]}` : "no cluster group";
  };
  const groups = new Map<string, Row[]>();
  for (const r of rows) groups.set(nameOf(r), [...(groups.get(nameOf(r)) ?? []), r]);
  // Named groups in order, the clusters that fall in none last.
  return [...groups].sort(([a], [b]) => Number(a.startsWith("no ")) - Number(b.startsWith("no ")) || compare(a, b)).map(([name, rs]) => ({ name, rows: rs }));
}

function countKinds(rows: Row[]): Partial<Record<CellKind, number>> {
  const counts: Partial<Record<CellKind, number>> = {};
  for (const r of rows) for (const c of r.cells) counts[c.kind] = (counts[c.kind] ?? 0) + 1;
  return counts;
}

const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

export function statusMatrix(report: StatusReport, by: GroupBy = { clusterGroup: true }): Matrix {
  const columns = report.bundles
    .map((b) => ({ gitRepo: b.gitRepo, bundle: b.bundle }))
    .sort((a, b) => compare(a.gitRepo, b.gitRepo) || compare(a.bundle, b.bundle));
  const byPair = new Map(report.deployments.map((d) => [`${d.cluster}/${d.gitRepo}/${d.bundle}`, d]));
  const rows = report.clusters.map((c): Row => {
    const reach = c.reachable === undefined ? "not probed" : c.reachable ? "reachable" : `unreachable: ${c.unreachableReason ?? ""}`;
    return {
      cluster: c.cluster,
      kind: c.state === "Offline" ? "unreachable" : c.state,
      info: [c.state, `${c.readyBundles}/${c.desiredReadyBundles}`, c.agent?.image ?? "—", c.agent ? c.agent.configHash.slice(0, 12) : "—", reach],
      infoTitles: [
        "",
        "bundles ready",
        c.agent ? `${c.agent.image}${c.agent.pinned ? " (pinned tag)" : ""}` : "no agent deployed (switched off, or not deployed yet)",
        c.agent?.configHash ?? "",
        reach,
      ],
      cells: columns.map((col): Cell => {
        const d = byPair.get(`${c.cluster}/${col.gitRepo}/${col.bundle}`);
        const pair = `${col.bundle} on ${c.cluster}`;
        if (!d) return { kind: "NotTargeted", detail: [`${pair}: not targeted`] };
        return {
          kind: d.state,
          detail: [
            `${pair}: ${stateWords(d)}`,
            ...(d.stalled ? [stalledLine(d.stalled)] : []),
            `deploymentId ${d.deploymentId}`,
            ...(d.appliedDeploymentId && d.appliedDeploymentId !== d.deploymentId ? [`applied ${d.appliedDeploymentId}`] : []),
            ...(d.message ? [d.message] : []),
          ],
        };
      }),
    };
  });
  const facts = new Map(report.clusters.map((c) => [c.cluster, { cluster: c.cluster, labels: c.labels ?? {}, groups: c.groups ?? [] }]));
  const repos = new Map(report.gitRepos.map((g) => [g.gitRepo, g]));
  return {
    title: `Status of stack ${report.stack}`,
    notes: [
      report.takenAt ? `taken ${report.takenAt}` : "time not recorded",
      ...report.gitRepos
        .filter((g) => !columns.some((c) => c.gitRepo === g.gitRepo))
        .map((g) => `GitRepo ${g.gitRepo} (commit ${short(g.commit, 12)}) deploys to no cluster`),
      ...report.deployments.filter((d) => !d.cluster).map((d) => `bundle ${d.bundle} (GitRepo ${d.gitRepo}) failed: ${d.message}`),
      ...report.clusters.flatMap((c) => (c.offline || c.paused ? [`cluster ${c.cluster}: ${clusterNote(c)}`] : [])),
      ...(report.lastRun ? [`last run ${report.lastRun.id} (${report.lastRun.kind}${report.lastRun.ok ? "" : ", some pairs failed"})`] : []),
      ...(report.pinned ? [`pinned: ${report.pinned.message}`] : []),
    ],
    kinds: STATUS_KINDS,
    counts: countKinds(rows),
    rowInfo: ["state", "bundles ready", "agent image", "agent config", "reachability"],
    leadInfo: 2,
    columnGroups: [...new Set(columns.map((c) => c.gitRepo))].map((name) => {
      const g = repos.get(name);
      return {
        gitRepo: name,
        kind: g?.state,
        commit: g?.commit ?? "",
        ...(g ? { ready: `${g.readyClusters}/${g.desiredReadyClusters}` } : {}),
        bundles: columns.filter((c) => c.gitRepo === name).map((c) => c.bundle),
      };
    }),
    columns,
    rowGroups: groupRows(rows, facts, by),
  };
}

/** What a preview page needs: the report and its prunes (a PreviewResult of automation/operation/preview.ts is one). */
export type PreviewInput = PreviewReport & { prunes: Prune[]; takenAt?: string };

/** A Stalled pair's line in its cell (core/plan/stalled.ts): why nothing is tried, and how to try again. */
function stalledLine(s: { failures: number; since: string }): string {
  return `stalled: ${s.failures} failures with the same inputs since ${s.since}; not applied, --retry to try again`;
}

/** A preview as a matrix: what the update would do to every (cluster, bundle) pair, prunes with their reason. */
export function previewMatrix(report: PreviewInput, by: GroupBy = { clusterGroup: true }): Matrix {
  const { state, before, groups } = report;
  const deploymentKey = report.facts.keyOf;
  const after = new Map(state.plan.entries.map((e) => [deploymentKey(e), e]));
  const reasons = new Map(report.prunes.map((p) => [deploymentKey(p), p.reason.replaceAll("`", "")]));
  const unreachable = report.unreachable ?? new Map<string, string>();
  const failures = state.failures?.list() ?? [];
  const failed = new Map(failures.filter((f) => f.cluster).map((f) => [deploymentKey(f), f]));
  // Columns: every bundle that is planned now, failed, or was deployed before (a pruned bundle may be gone from Git).
  const pairs = [...state.plan.entries.map((e) => ({ gitRepo: e.gitRepo, bundle: e.bundle })), ...failed.values(), ...Object.values(before)];
  const columns = [...new Map(pairs.map((p) => [`${p.gitRepo}/${p.bundle}`, { gitRepo: p.gitRepo, bundle: p.bundle }])).values()].sort(
    (a, b) => compare(a.gitRepo, b.gitRepo) || compare(a.bundle, b.bundle),
  );
  const names = [...new Set([...state.config.clusters.map((c) => c.name), ...Object.values(before).map((r) => r.cluster)])].sort(compare);
  const rows = names.map((cluster): Row => {
    const agent = groups.agents.get(cluster);
    const agentNote =
      !agent || !hasChanges(agent)
        ? "no change"
        : agent.replaced
          ? `replaced: restarts the agent (${agent.replacements.join(", ")})`
          : `${agent.created} create, ${agent.updated} update, ${agent.deleted} delete`;
    const inStack = state.config.clusters.some((c) => c.name === cluster);
    const cells = columns.map((col): Cell => {
      const key = deploymentKey({ cluster, ...col });
      const pair = `${col.bundle} on ${cluster}`;
      const was = before[key];
      const will = after.get(key);
      const d = groups.deployments.get(key);
      const f = failed.get(key);
      if (f?.held)
        return {
          kind: "unchanged",
          detail: [`${pair}: held, ${f.kept ? "keeps what it has" : "not deployed yet"}`, f.reason, ...(was ? [`deploymentId ${was.deploymentId}`] : [])],
        };
      if (f)
        return {
          kind: "ErrApplied",
          detail: [
            f.stalled ? `${pair}: ${stalledLine(f.stalled)}` : `${pair}: fails, ${f.kept ? "keeps what it last deployed" : "nothing deployed"}`,
            f.reason,
            ...(was ? [`deploymentId ${was.deploymentId}`] : []),
          ],
        };
      if (!was && !will) return { kind: "NotTargeted", detail: [`${pair}: not targeted`] };
      if (unreachable.has(cluster)) return { kind: "unreachable", detail: [`${pair}: left out, cluster Offline: unreachable (${unreachable.get(cluster)})`] };
      const counts = d ? `${d.created} created, ${d.updated} updated, ${d.replaced} replaced, ${d.deleted} deleted` : "";
      if (d?.pruned || (was && !will)) {
        return {
          kind: "prune",
          detail: [`${pair}: prune`, reasons.get(key) ?? report.facts.unrecorded, `deploymentId ${was?.deploymentId ?? "—"}`, ...(counts ? [counts] : [])],
        };
      }
      const ids =
        was && was.deploymentId !== will!.deploymentId
          ? [`deploymentId ${was.deploymentId}`, `becomes ${will!.deploymentId}`]
          : [`deploymentId ${will!.deploymentId}`];
      if (!was) return { kind: "create", detail: [`${pair}: create`, ...ids, ...(counts ? [counts] : [])] };
      if (d?.replaced) return { kind: "replace", detail: [`${pair}: replace`, ...ids, counts] };
      if (d && hasChanges(d)) return { kind: "update", detail: [`${pair}: update`, ...ids, counts] };
      return { kind: "unchanged", detail: [`${pair}: no change`, ...ids] };
    });
    // The row shows its worst change (PREVIEW_KINDS order) and how many bundles get each.
    const changes = PREVIEW_KINDS.slice(0, 5)
      .map((k) => [k, cells.filter((c) => c.kind === k).length] as const)
      .filter(([, n]) => n);
    const worst = [changes[0]?.[0], agent?.replaced ? "replace" : agent && hasChanges(agent) ? "update" : undefined]
      .filter((k): k is CellKind => !!k)
      .sort((a, b) => PREVIEW_KINDS.indexOf(a) - PREVIEW_KINDS.indexOf(b))[0];
    const kind: CellKind = unreachable.has(cluster) ? "unreachable" : !inStack ? "prune" : (worst ?? "unchanged");
    const summary = changes.map(([k, n]) => `${n} ${KIND_LABEL[k]}`).join(", ") || "no bundle changes";
    return {
      cluster,
      kind,
      cells,
      info: [!inStack ? `removed from the stack: ${summary}` : unreachable.has(cluster) ? "Offline" : summary, agentNote],
      infoTitles: [unreachable.get(cluster) ?? "", agentNote],
    };
  });
  const facts = new Map(
    names.map((n) => [
      n,
      {
        cluster: n,
        labels: state.config.clusters.find((c) => c.name === n)?.labels ?? {},
        groups: report.facts.groups.get(n) ?? [],
      },
    ]),
  );
  const repos = [...new Set(columns.map((c) => c.gitRepo))];
  const all = [...groups.deployments.values(), ...groups.agents.values()];
  const sum = (k: "created" | "updated" | "replaced" | "deleted") => all.reduce((n, c) => n + c[k], 0);
  return {
    title: `Preview of stack ${report.stack}`,
    notes: [
      report.takenAt ? `taken ${report.takenAt}` : "time not recorded",
      `objects: ${sum("created")} to create, ${sum("updated")} to update, ${sum("replaced")} to replace, ${sum("deleted")} to delete`,
      ...[...unreachable].sort().map(([c, why]) => `cluster ${c} is unreachable (${why}): it was left out of this preview`),
      ...failures.filter((f) => !f.cluster).map((f) => `bundle ${f.bundle} (GitRepo ${f.gitRepo}) fails on every cluster it would target: ${f.reason}`),
      ...rolloutLines(state),
    ],
    kinds: PREVIEW_KINDS,
    counts: countKinds(rows),
    rowInfo: ["change", "agent"],
    leadInfo: 1,
    columnGroups: repos.map((g) => ({
      gitRepo: g,
      commit: state.sources.get(g)?.commit ?? "(removed from the stack)",
      bundles: columns.filter((c) => c.gitRepo === g).map((c) => c.bundle),
    })),
    columns,
    rowGroups: groupRows(rows, facts, by),
  };
}

/** Only the rows and columns with a change: a PR's blast radius, small enough to embed in a comment. */
export function blastRadius(m: Matrix): { clusters: string[]; columns: Column[]; cells: Cell[][] } {
  const quiet = (k: CellKind) => k === "unchanged" || k === "NotTargeted" || k === "Ready";
  const rows = m.rowGroups.flatMap((g) => g.rows).filter((r) => r.cells.some((c) => !quiet(c.kind)));
  const keep = m.columns.map((_, i) => rows.some((r) => !quiet(r.cells[i].kind)));
  return {
    clusters: rows.map((r) => r.cluster),
    columns: m.columns.filter((_, i) => keep[i]),
    cells: rows.map((r) => r.cells.filter((_, i) => keep[i])),
  };
}

const MD_MARK: Partial<Record<CellKind, string>> = { create: "+", update: "~", replace: "±", prune: "−", unreachable: "?", unchanged: "·" };
const MAX_MD_ROWS = 200;

/**
 * The blast radius as a Markdown grid for the PR summary (GitHub, GitLab and Gitea render tables and
 * <details>): the changed clusters by the changed bundles, one sign per cell. A large one is folded.
 */
export function blastRadiusMarkdown(m: Matrix): string[] {
  const b = blastRadius(m);
  if (!b.clusters.length) return [];
  const head = `| cluster | ${b.columns.map((c) => markdownCell(c.bundle)).join(" | ")} |`;
  const rows = b.clusters.slice(0, MAX_MD_ROWS).map((c, i) => `| ${markdownCell(c)} | ${b.cells[i].map((x) => MD_MARK[x.kind] ?? "").join(" | ")} |`);
  const more = b.clusters.length > MAX_MD_ROWS ? [``, `… and ${b.clusters.length - MAX_MD_ROWS} more cluster(s): see the HTML page (\`preview --html\`).`] : [];
  const big = b.clusters.length > 20 || b.columns.length > 12;
  return [
    "### Blast radius",
    "",
    ...(big ? [`<details><summary>${b.clusters.length} cluster(s) x ${b.columns.length} bundle(s)</summary>`, ""] : []),
    "`+` create · `~` update · `±` replace · `−` prune · `?` Offline (not read) · `·` no change · blank: not targeted",
    "",
    head,
    `|---|${b.columns.map(() => ":-:|").join("")}`,
    ...rows,
    ...more,
    ...(big ? ["", "</details>"] : []),
    "",
  ];
}
