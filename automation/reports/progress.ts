/**
 * Progress of a long operation a person can follow: per cluster, how many of its steps (and of those,
 * its bundles) are done. The counting and the formatting are pure (ProgressCounter, progressLines,
 * clusterLine); Progress is the thin shell that draws them, and only once a run is long (longMs): a
 * short run shows nothing. On a terminal it redraws a small block in place under the engine's output;
 * anywhere else (CI logs, files) it prints, at most every few seconds, a line per cluster that caught
 * up ("cluster prod-3: 10/10 bundles applied") and one naming those still in progress, with no control
 * characters. At the end of a long run, every cluster's line. Where the operation ends with its own
 * table of the clusters (up, preview), only the line naming those in progress.
 *
 * A step is one real object (a custom resource) of a cluster: its pre event starts it, its outputs
 * or failure event ends it. Components are not counted, because the engine does not report outputs
 * for components that register none, so they would never look done. The engine announces a step
 * only when its inputs are known, so "done/seen" can grow its right side while an update runs.
 */
import { EngineEvent } from "@pulumi/pulumi/automation";
import { clusterOfUrn, isBundleDeployment } from "../engine/steps";
import { writeRaw } from "./escape/ci-log";

export interface ClusterProgress {
  cluster: string;
  seen: number;
  done: number;
  failed: number;
  /** Of those, the bundle deployments (one per bundle on the cluster). */
  bundles: { seen: number; done: number; failed: number };
}

/** What each operation does to a cluster's bundles, for its progress line. */
const DONE_VERB: Record<string, string> = { up: "applied", destroy: "deleted", refresh: "read", preview: "previewed", status: "checked" };

/** "cluster prod-3: 10/10 bundles applied" (its resources, where it has no bundle step). */
export function clusterLine(op: string, c: ClusterProgress): string {
  const [n, noun] = c.bundles.seen ? [c.bundles, "bundles"] : [c, "resources"];
  return `cluster ${c.cluster}: ${n.done}/${n.seen} ${noun} ${DONE_VERB[op] ?? "done"}${n.failed ? `, ${n.failed} failed` : ""}`;
}

export class ProgressCounter {
  private readonly clusters = new Map<string, { seen: Set<string>; done: Set<string>; failed: Set<string> }>();
  private readonly bundleUrns = new Set<string>();

  /** Feed every engine event; returns whether the counts changed. */
  onEvent(event: EngineEvent): boolean {
    const pre = event.resourcePreEvent?.metadata;
    const end = event.resOutputsEvent?.metadata ?? event.resOpFailedEvent?.metadata;
    const meta = pre ?? end;
    // The stack and its StackReference belong to no cluster (the reference's name has slashes).
    if (!meta || meta.type.startsWith("pulumi:pulumi:")) return false;
    const cluster = clusterOfUrn(meta.urn);
    if (!cluster) return false;
    let c = this.clusters.get(cluster);
    if (pre) {
      if (!(pre.new ?? pre.old)?.custom) return false;
      if (!c) this.clusters.set(cluster, (c = { seen: new Set(), done: new Set(), failed: new Set() }));
      if (c.seen.has(meta.urn)) return false;
      c.seen.add(meta.urn);
      if (isBundleDeployment(meta.type)) this.bundleUrns.add(meta.urn);
      return true;
    }
    if (!c?.seen.has(meta.urn) || c.done.has(meta.urn)) return false;
    c.done.add(meta.urn);
    if (event.resOpFailedEvent) c.failed.add(meta.urn);
    return true;
  }

  snapshot(): ClusterProgress[] {
    return [...this.clusters]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([cluster, c]) => {
        const bundles = (set: Set<string>) => [...set].filter((u) => this.bundleUrns.has(u)).length;
        return {
          cluster,
          seen: c.seen.size,
          done: c.done.size,
          failed: c.failed.size,
          bundles: { seen: bundles(c.seen), done: bundles(c.done), failed: bundles(c.failed) },
        };
      });
  }
}

export interface ProgressView {
  /** "up", "preview", ... */
  op: string;
  elapsedMs: number;
  clusters: ClusterProgress[];
  /** Terminal width (lines are cut to it: a wrapped line would break the redraw). */
  width: number;
  /** How many clusters in progress to list one per line (terminal) or inline (plain). */
  maxListed: number;
}

const bar = (done: number, seen: number, width: number) => {
  const full = seen ? Math.round((done / seen) * width) : 0;
  return "#".repeat(full) + ".".repeat(width - full);
};

/**
 * The lines to show. `tty`: a header and one line per cluster still in progress (busiest first);
 * plain: one line that names the clusters in progress inline. Both name every count as done/seen.
 */
export function progressLines(v: ProgressView, tty: boolean): string[] {
  const seen = v.clusters.reduce((n, c) => n + c.seen, 0);
  const done = v.clusters.reduce((n, c) => n + c.done, 0);
  const failed = v.clusters.reduce((n, c) => n + c.failed, 0);
  const finished = v.clusters.filter((c) => c.done === c.seen).length;
  const open = v.clusters.filter((c) => c.done < c.seen).sort((a, b) => b.seen - b.done - (a.seen - a.done) || (a.cluster < b.cluster ? -1 : 1));
  // "caught up": every step seen so far is done (more may still come, see above).
  const head =
    `${v.op} ${(v.elapsedMs / 1000).toFixed(0)}s: ${done}/${seen} steps done, ${finished}/${v.clusters.length} clusters caught up` +
    `${failed ? `, ${failed} failed` : ""}`;
  const cut = (l: string) => (l.length > v.width - 1 ? l.slice(0, Math.max(0, v.width - 2)) + "…" : l);
  const more = open.length > v.maxListed ? open.length - v.maxListed : 0;
  if (tty) {
    const nameWidth = Math.max(0, ...open.slice(0, v.maxListed).map((c) => c.cluster.length));
    return [
      head,
      ...open
        .slice(0, v.maxListed)
        .map((c) => `  ${c.cluster.padEnd(nameWidth)} ${bar(c.done, c.seen, 20)} ${c.done}/${c.seen}${c.failed ? ` (${c.failed} failed)` : ""}`),
      ...(more ? [`  … and ${more} more cluster(s) in progress`] : []),
    ].map(cut);
  }
  const listed = open
    .slice(0, v.maxListed)
    .map((c) => `${c.cluster} ${c.done}/${c.seen}`)
    .join(", ");
  return [`progress: ${head}${listed ? `; in progress: ${listed}${more ? ` and ${more} more` : ""}` : ""}`];
}

/** What Progress writes to: process.stderr, or a fake in tests. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

export interface ProgressOptions {
  /** Where the engine's own output goes (default process.stdout); written through output() so it never tears the block. */
  output?: ProgressStream;
  /** Nothing is shown until the run is this long (default 5 s): a short run needs no progress. */
  longMs?: number;
  /** Plain mode: lines at most once per interval (default 5 s). */
  intervalMs?: number;
  /** Terminal mode: at most one redraw per interval (default 100 ms). */
  redrawMs?: number;
  now?: () => number;
  /**
   * Plain mode: a line per cluster as it catches up, and each cluster's at the end (default true).
   * false where the operation ends with its own table of the clusters (up, preview: run-summary.ts):
   * at 200 clusters those lines would be hundreds more.
   */
  perCluster?: boolean;
}

export class Progress {
  private readonly counter = new ProgressCounter();
  private readonly tty: boolean;
  private readonly started: number;
  private drawn = 0; // lines of the block on screen (terminal mode)
  private lastDraw = -Infinity;
  private dirty = false;
  private partial = ""; // engine output after its last newline
  private lastLine = ""; // plain mode: the same line is not printed twice
  private readonly printed = new Map<string, string>(); // cluster -> its last line printed
  private timer?: NodeJS.Timeout;
  private unreachable: ReadonlyMap<string, string> = new Map();

  constructor(
    private readonly op: string,
    private readonly stream: ProgressStream,
    private readonly options: ProgressOptions = {},
  ) {
    this.tty = stream.isTTY === true;
    this.started = this.now();
    // Plain mode also reports while the engine is quiet (a long wait on one resource).
    this.timer = setInterval(() => this.tick(), this.tty ? (options.redrawMs ?? 100) : (options.intervalMs ?? 5_000));
    this.timer.unref();
  }

  readonly onEvent = (event: EngineEvent): void => {
    if (this.counter.onEvent(event)) {
      this.dirty = true;
      if (this.tty && this.long() && this.now() - this.lastDraw >= (this.options.redrawMs ?? 100)) this.redraw();
    }
  };

  /** The engine's output: on a terminal the block is lifted, complete lines written, the block put back. */
  readonly output = (text: string): void => {
    const out = this.options.output ?? process.stdout;
    if (!this.tty) {
      out.write(text);
      return;
    }
    const all = this.partial + text;
    const cut = all.lastIndexOf("\n") + 1;
    this.partial = all.slice(cut);
    if (!cut) return;
    this.erase();
    out.write(all.slice(0, cut));
    this.redraw();
  };

  /** Clusters the operation could not read (cluster -> why): their lines say so, never that their bundles were done. */
  readonly leftOut = (clusters: ReadonlyMap<string, string>): void => {
    this.unreachable = new Map(clusters);
  };

  /**
   * The block gone and, after a long run, each cluster's final line (not again where it was the last
   * one printed), unless the operation prints its own table (options.perCluster false).
   */
  finish(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.partial) (this.options.output ?? process.stdout).write(this.partial);
    this.partial = "";
    this.erase();
    if (this.options.perCluster !== false && this.long()) this.clusterLines(() => true);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private long(): boolean {
    return this.now() - this.started >= (this.options.longMs ?? 5_000);
  }

  private tick(): void {
    if (!this.dirty || !this.long()) return;
    if (this.tty) this.redraw();
    else this.plain(8);
  }

  /** A line per cluster that caught up since the last one, then one naming those still in progress. */
  private plain(maxListed: number): void {
    if (this.options.perCluster !== false) this.clusterLines((c) => c.done === c.seen);
    if (this.counter.snapshot().some((c) => c.done < c.seen)) {
      const line = this.lines(false, maxListed).join("\n");
      // Elapsed time alone does not make a new line.
      const key = line.replace(/^progress: \S+ \d+s/, "");
      if (key !== this.lastLine) this.stream.write(line + "\n");
      this.lastLine = key;
    }
    this.dirty = false;
  }

  private clusterLines(which: (c: ClusterProgress) => boolean): void {
    for (const c of this.counter.snapshot().filter(which)) {
      const why = this.unreachable.get(c.cluster);
      const line = why === undefined ? clusterLine(this.op, c) : `cluster ${c.cluster}: not read (${why})`;
      if (this.printed.get(c.cluster) !== line) this.stream.write(line + "\n");
      this.printed.set(c.cluster, line);
    }
  }

  private lines(tty: boolean, maxListed: number): string[] {
    return progressLines(
      {
        op: this.op,
        elapsedMs: this.now() - this.started,
        clusters: this.counter.snapshot(),
        width: tty ? this.stream.columns || 80 : Number.MAX_SAFE_INTEGER,
        maxListed,
      },
      tty,
    );
  }

  private erase(): void {
    // Cursor to the start of the block's first line, then clear to the end of the screen.
    // The display's own escape sequence, past the CI log's guard (which removes content's).
    if (this.drawn) writeRaw(this.stream, `\x1b[${this.drawn}F\x1b[J`);
    this.drawn = 0;
  }

  private redraw(): void {
    const lines = this.long() && this.counter.snapshot().length ? this.lines(true, Math.max(1, Math.min(8, (this.stream.rows || 24) - 6))) : [];
    this.erase();
    if (!lines.length) return;
    this.stream.write(lines.join("\n") + "\n");
    this.drawn = lines.length;
    this.lastDraw = this.now();
    this.dirty = false;
  }
}
