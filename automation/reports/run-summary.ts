/**
 * What an `up` or a `preview` says at its end, as a person reads it: "nothing to do", or one line per
 * cluster that has something to say (what changed, what failed, what is not ready, that it could not
 * be read), so a run over hundreds of clusters prints a table of the clusters that matter, not the
 * engine's thousands of lines. Pure: the operation hands in its facts (automation/run-operation.ts prints).
 */
import { compare } from "./deploy-events";

/** One bundle deployment as the run ended. */
export interface PairOutcome {
  cluster: string;
  /** up: whether its provider reported it Ready; preview: undefined (nothing was applied). */
  ready?: boolean;
  /** Its objects changed (up) or would change (preview), a prune included. */
  changed: boolean;
  failed: boolean;
  /** Pruned: a change on its cluster, no longer one of its bundles. */
  pruned?: boolean;
}

export interface ClusterRow {
  cluster: string;
  bundles: number;
  /** up only: of `bundles`, how many are Ready. */
  ready?: number;
  changed: number;
  failed: number;
  /** Why the cluster could not be read (it was left out of the run). */
  unreachable?: string;
}

/** One row per cluster of the pairs or the unreachable clusters, sorted by cluster. */
export function clusterRows(pairs: PairOutcome[], unreachable: ReadonlyMap<string, string> = new Map()): ClusterRow[] {
  const rows = new Map<string, ClusterRow>();
  const counted = pairs.some((p) => p.ready !== undefined); // an up's: every row has a ready count
  const row = (cluster: string) => {
    let r = rows.get(cluster);
    if (!r) rows.set(cluster, (r = { cluster, bundles: 0, ...(counted ? { ready: 0 } : {}), changed: 0, failed: 0 }));
    return r;
  };
  for (const p of pairs) {
    const r = row(p.cluster);
    if (!p.pruned) r.bundles++;
    if (p.ready && !p.pruned) r.ready = (r.ready ?? 0) + 1;
    if (p.changed) r.changed++;
    if (p.failed) r.failed++;
  }
  for (const [cluster, why] of unreachable) row(cluster).unreachable = why;
  return [...rows.values()].sort((a, b) => compare(a.cluster, b.cluster));
}

/** A cluster with nothing to say: every bundle as it was, none failed, all ready (up). */
function quiet(r: ClusterRow): boolean {
  return !r.changed && !r.failed && !r.unreachable && (r.ready === undefined || r.ready === r.bundles);
}

/**
 * The table of the clusters with something to say, then one line for the rest; empty when no cluster
 * has anything to say (the caller says "nothing to do"). `op` words the columns: up "changed", preview "to change".
 */
export function clusterTable(op: "up" | "preview", rows: ClusterRow[]): string[] {
  const shown = rows.filter((r) => !quiet(r));
  if (!shown.length) return [];
  const changed = op === "up" ? "changed" : "to change";
  const failed = op === "up" ? "failed" : "failing";
  const cells = [
    ["cluster", op === "up" ? "ready/bundles" : "bundles", changed, failed, ""],
    ...shown.map((r) => [
      r.cluster,
      r.ready === undefined ? String(r.bundles) : `${r.ready}/${r.bundles}`,
      // A cluster not read: what the engine planned for it is not known to be so.
      r.unreachable === undefined ? String(r.changed) : "?",
      r.unreachable === undefined ? String(r.failed) : "?",
      r.unreachable === undefined ? "" : `not read: ${r.unreachable}`,
    ]),
  ];
  const widths = cells[0].map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  const lines = cells.map((c) =>
    c
      .map((x, i) => x.padEnd(widths[i]))
      .join("  ")
      .trimEnd(),
  );
  const rest = rows.length - shown.length;
  if (rest) lines.push(`(${rest} other cluster(s): ${op === "up" ? "every bundle ready, nothing changed" : "nothing to change"})`);
  return lines;
}

/** The engine's steps that change something ("1 delete, 1 update"), "" when it only read and compared. */
export function engineChanges(changes: Record<string, number>): string {
  return Object.entries(changes)
    .filter(([op, n]) => n > 0 && op !== "same" && op !== "read" && op !== "refresh")
    .sort(([a], [b]) => compare(a, b))
    .map(([op, n]) => `${n} ${op}`)
    .join(", ");
}

/**
 * "5 of 600 bundle deployment(s) changed on 5 of 200 cluster(s)", "nothing to do (600 bundle deployment(s)
 * on 200 cluster(s) unchanged)"; the engine's own counts after it when it changes anything (a provider's
 * configuration, an agent: resources that are no bundle deployment).
 */
export function runHeadline(op: "up" | "preview", all: ClusterRow[], changes: Record<string, number> = {}): string {
  const rows = all.filter((r) => r.unreachable === undefined);
  const pairs = rows.reduce((n, r) => n + r.bundles, 0);
  const changed = rows.reduce((n, r) => n + r.changed, 0);
  const on = rows.filter((r) => r.changed).length;
  const read = rows.length;
  const engine = engineChanges(changes);
  if (!changed && !engine) return `nothing to ${op === "up" ? "do" : "change"} (${pairs} bundle deployment(s) on ${read} cluster(s) unchanged)`;
  const verb = op === "up" ? "changed" : "would change";
  const head = changed
    ? `${changed} of ${pairs} bundle deployment(s) ${verb} on ${on} of ${read} cluster(s)`
    : `no bundle deployment ${verb} (${pairs} on ${read} cluster(s))`;
  return `${head}${engine ? `; engine steps: ${engine}` : ""}`;
}

/**
 * At most `max` lines of a list (deploy events, prunes), then one saying how many more and where they
 * all are: a run over many clusters does not print thousands of them.
 */
export function bounded(lines: string[], max: number, rest: (n: number) => string): string[] {
  return lines.length <= max ? lines : [...lines.slice(0, max), rest(lines.length - max)];
}
