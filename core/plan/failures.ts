/**
 * A broken bundle fails alone, as in Fleet, Argo CD and Flux: a (bundle, cluster) pair whose
 * fleet.yaml, values, chart, templates, kustomize build or dependencies fail is recorded here instead
 * of stopping the whole update. Every other pair deploys; the failed one keeps exactly what it last
 * deployed (state.ts registers the state's objects unchanged), and the operations exit non-zero naming
 * it. What depends on a failed pair on the same cluster waits, as Fleet's agent makes it wait.
 */
import { FleetError, withContext } from "../base/errors";
import { redactionOrder, redactSecrets } from "../render/lookup-secrets";
import { BundleId, bundleRef, deploymentKey, parseBundleRef } from "../model/keys";

/** What holds a pair back without failing it: a maintenance window, `up --partition`, or its cluster paused (core/desired/holds.ts). */
export type HoldKind = "schedule" | "partition" | "paused";

export interface DeploymentFailure {
  gitRepo: string;
  bundle: string;
  /** "" for a bundle that failed before its clusters were known and that no cluster has deployed. */
  cluster: string;
  /** Why, with the file and field where known (the error's whole message). */
  message: string;
  /** The failure's own reason, without the location prefix. */
  reason: string;
  /** The file, its line where the error knows it (a YAML syntax error, a template's), and the field it names, if any. */
  file?: string;
  line?: number;
  field?: string;
  /** Where the deployment stands now: its objects kept as last deployed, or nothing deployed yet. */
  kept?: { deploymentId: string; objects: number };
  /** Not a failure: held by a maintenance window (stack `schedules`), by `up --partition` or by its paused cluster; it keeps what it has, and the update succeeds. */
  held?: HoldKind;
  /** Stalled (core/plan/stalled.ts): a failure not tried again, kept as the state holds it; the update still fails naming it. */
  stalled?: StallFacts;
}

/** What a Stalled pair reports beside its state (ErrApplied): how many failures, since when, and the last one's reason (stalled.ts). */
export interface StallFacts {
  failures: number;
  since: string;
  reason: string;
}

type Pair = { gitRepo: string; bundle: string; cluster: string };

/** A decision's word on one pair: it fails, or (`held`) it is held, kept like a failure and no failure of the update. */
export interface Failed {
  pair: Pair;
  error: unknown;
  held?: HoldKind;
  stalled?: StallFacts;
}

/** What one decision says: the pairs it fails or holds, in the order it found them, and what pairs read from Secrets. */
export interface Verdicts {
  failed: Failed[];
  /** Per pair, values it read from Secrets (lookups, valuesFrom): kept out of the words of its failures, this decision's and later ones'. */
  secrets?: ReadonlyMap<Pair, readonly string[]>;
}

/** A decision written with a callback for each pair it fails (inDependencyOrder's onCycle, say), as a value. */
export function failuresOf(decide: (fail: (pair: Pair, err: unknown) => void) => void): Failed[] {
  const failed: Failed[] = [];
  decide((pair, error) => failed.push({ pair, error }));
  return failed;
}

/** The failures of one update, by deployment key; the first reason for a pair wins. */
export class FailedDeployments {
  private readonly byKey = new Map<string, DeploymentFailure>();
  private readonly secrets = new Map<string, readonly string[]>();

  /**
   * Records `err` (a FleetError's reason and location, or any error's message) for the pair, with what
   * its lookups read from Secrets replaced (`redact`): every report of a failure is built from here.
   */
  fail(pair: Pair, err: unknown): void {
    const key = pairKey(pair);
    if (this.byKey.has(key)) return;
    const e = withContext(err, { gitRepo: pair.gitRepo, bundle: pair.bundle, ...(pair.cluster ? { cluster: pair.cluster } : {}) });
    const secrets = this.secrets.get(key) ?? [];
    this.byKey.set(key, {
      gitRepo: pair.gitRepo,
      bundle: pair.bundle,
      cluster: pair.cluster,
      message: redactSecrets(e.message, secrets),
      reason: redactSecrets(e.reason, secrets),
      ...(e.context.file ? { file: e.context.file } : {}),
      ...(e.context.line ? { line: e.context.line } : {}),
      ...(e.context.field ? { field: e.context.field } : {}),
    });
  }

  /** Values the pair read from Secrets (its lookups, its valuesFrom): never in its failure's words. Added to those given before. */
  redact(pair: BundleId & { cluster: string }, values: readonly string[]): void {
    const key = pairKey(pair);
    this.secrets.set(key, redactionOrder([...(this.secrets.get(key) ?? []), ...values]));
  }

  has(pair: BundleId & { cluster: string }): boolean {
    return this.byKey.has(pairKey(pair));
  }

  get(pair: BundleId & { cluster: string }): DeploymentFailure | undefined {
    return this.byKey.get(pairKey(pair));
  }

  /** Marks the pair's objects as kept at the deploymentId it last deployed. */
  kept(pair: BundleId & { cluster: string }, kept: DeploymentFailure["kept"]): void {
    const f = this.byKey.get(pairKey(pair));
    if (f) f.kept = kept;
  }

  /** Records a hold (core/desired/holds.ts): kept like a failure, reported as held, and no failure of the update. */
  hold(pair: Pair, err: unknown, by: HoldKind): void {
    if (this.has(pair)) return;
    this.fail(pair, err);
    this.byKey.get(pairKey(pair))!.held = by;
  }

  /** Records a Stalled pair (core/plan/stalled.ts): a failure of the update, kept like one, not applied. */
  stall(pair: Pair, err: unknown, facts: StallFacts): void {
    if (this.has(pair)) return;
    this.fail(pair, err);
    this.byKey.get(pairKey(pair))!.stalled = facts;
  }

  /** Drops the pair's failure (a bundle's cluster-less one, once its clusters have theirs). */
  forget(pair: BundleId & { cluster: string }): void {
    this.byKey.delete(pairKey(pair));
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Sorted by GitRepo, bundle and cluster. */
  list(): DeploymentFailure[] {
    const order = (f: DeploymentFailure) => [f.gitRepo, f.bundle, f.cluster];
    return [...this.byKey.values()].sort((a, b) => {
      const [x, y] = [order(a), order(b)];
      const i = x.findIndex((v, j) => v !== y[j]);
      return i < 0 ? 0 : x[i] < y[i] ? -1 : 1;
    });
  }

  /** Records a decision's verdicts: first the values its pairs read from Secrets, then its failures and holds in order (the first reason for a pair wins). */
  record(verdicts: Verdicts): void {
    for (const [pair, values] of verdicts.secrets ?? []) this.redact(pair, values);
    for (const f of verdicts.failed) {
      if (f.held) this.hold(f.pair, f.error, f.held);
      else if (f.stalled) this.stall(f.pair, f.error, f.stalled);
      else this.fail(f.pair, f.error);
    }
  }

  /**
   * The entries that still deploy once `verdicts` are recorded: without the failed ones and without every
   * entry that depends on a failed one on its cluster, directly or through others. Those fail with Fleet's
   * dependency check's words: its agent deploys nothing while a dependency is not Ready. `dependsOn` holds bundle refs.
   */
  settle<E extends Pair & { dependsOn: string[] }>(entries: E[], verdicts: Verdicts = { failed: [] }): E[] {
    this.record(verdicts);
    let remaining = entries.filter((e) => !this.has(e));
    const failedDependency = (e: E, ref: string) => this.has({ ...parseBundleRef(ref), cluster: e.cluster });
    for (;;) {
      const waiting = remaining.filter((e) => e.dependsOn.some((ref) => failedDependency(e, ref)));
      if (!waiting.length) return remaining;
      for (const e of waiting) {
        const failed = e.dependsOn.filter((ref) => failedDependency(e, ref)).map((ref) => dependencyName(e, ref));
        this.fail(e, new FleetError(`dependent bundle(s) are not ready: [${failed.join(" ")}] (failed on this cluster)`, { field: "dependsOn" }));
      }
      remaining = remaining.filter((e) => !this.has(e));
    }
  }
}

function pairKey(p: BundleId & { cluster: string }): string {
  return p.cluster ? deploymentKey(p) : `\u0000${bundleRef(p)}`;
}

/** A dependency as Fleet names it: the bundle's name, qualified by its GitRepo when that is another one. */
export function dependencyName(e: { gitRepo: string }, ref: string): string {
  const d = parseBundleRef(ref);
  return d.gitRepo === e.gitRepo ? d.bundle : ref;
}

/** One line per failure, for the operations' error and the preview: where, why, and what it keeps. */
export function describeFailure(f: DeploymentFailure): string {
  if (f.held) return `${f.message} (${f.kept ? `keeps ${f.kept.objects} object(s), deploymentID …${f.kept.deploymentId.slice(-12)}` : "not deployed yet"})`;
  const kept = f.kept ? `kept as last deployed: ${f.kept.objects} object(s), deploymentID …${f.kept.deploymentId.slice(-12)}` : "nothing deployed";
  return `${f.message} (${kept})`;
}

/**
 * One line per cause: pairs of one GitRepo that failed (or are held) for the same reason, such as a
 * GitRepo that could not be read, are one line naming their bundles and clusters, not one line per pair.
 */
export function describeFailures(failures: DeploymentFailure[]): string[] {
  const groups = new Map<string, DeploymentFailure[]>();
  for (const f of failures) {
    const key = JSON.stringify([f.gitRepo, f.held ?? "", f.file ?? "", f.line ?? 0, f.field ?? "", f.reason]);
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  return [...groups.values()].map((g) => (g.length === 1 ? describeFailure(g[0]) : describeGroup(g)));
}

function describeGroup(g: DeploymentFailure[]): string {
  const list = (xs: string[]) => [...new Set(xs)].sort().join(", ");
  const bundles = list(g.map((f) => f.bundle));
  const clusters = list(g.map((f) => f.cluster).filter((c) => c));
  const { gitRepo, file, line, field, reason } = g[0];
  const one = new Set(g.map((f) => f.bundle)).size === 1;
  const kept = g.filter((f) => f.kept).length;
  const keeps =
    kept === g.length
      ? g[0].held
        ? "each keeps what it last deployed"
        : "each kept as last deployed"
      : kept === 0
        ? g[0].held
          ? "none deployed yet"
          : "nothing deployed"
        : `${kept} kept as last deployed, ${g.length - kept} with nothing deployed`;
  // Worded as the error of one pair is (core/base/errors.ts), without the cluster (and the bundle where several).
  const what = new FleetError(reason, {
    gitRepo,
    ...(one ? { bundle: bundles } : {}),
    ...(file ? { file } : {}),
    ...(line ? { line } : {}),
    ...(field ? { field } : {}),
  });
  return `${what.message} (${g.length} bundle deployment(s): bundle(s) ${bundles}${clusters ? ` on cluster(s) ${clusters}` : ""}; ${keeps})`;
}
