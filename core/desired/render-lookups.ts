/**
 * Rendering with what it sees of each cluster gathered: its capabilities (discovery, into ClusterFacts),
 * and Helm's `lookup` answered from the clusters, the one loop where gathering and rendering must
 * alternate, since a render's answers decide what it asks next.
 */
import { ClusterReadBounds, clusterReadBounds, readEachGitRepo, readError, readId } from "./cluster-reads";
import { accessOf } from "../config/cluster-access";
import { FleetError } from "../base/errors";
import { stableJson } from "../base/hash";
import { StackConfig } from "../config/stack";
import { FleetState } from "../plan/pipeline";
import { RenderedDeployment, renderDeployments, unanswered } from "../render/deployments";
import { LookupAnswer, LookupJob } from "../model/renderer-protocol";
import { lookupScopeError } from "../render/lookup-scope";
import { lookedUpSecrets, redactionOrder, redactSecrets } from "../render/lookup-secrets";
import { ResolvedValuesFrom } from "../render/values-from";
import { AccountUsers } from "./service-accounts";
import { PlanEntry } from "../targeting/plan";
import { factsOf, kubeconfigAs, KnownClusters } from "./cluster-facts";
import { Facts } from "./facts";
import { Failed, Verdicts } from "../plan/failures";
import { foreignOwners } from "./owners";

/**
 * What charts see of each cluster, as Fleet's agent renders on it: a live cluster's version and served
 * API versions, read once per operation (discovery; a cluster that cannot be read is an error naming
 * it, unless the operation leaves it out); in render mode the cluster's kubeVersion and apiVersions.
 */
async function gatherCapabilities(config: StackConfig, entries: PlanEntry[], facts: Facts, known: KnownClusters, leftOut?: ReadonlySet<string>): Promise<void> {
  if (config.renderDir) {
    for (const c of config.clusters) factsOf(known, c.name).capabilities = { kubeVersion: c.kubeVersion, apiVersions: c.apiVersions };
    return;
  }
  const deployed = new Set(entries.map((e) => e.cluster));
  const jobs = config.clusters.filter((c) => deployed.has(c.name) && !leftOut?.has(c.name)).map((c) => ({ id: c.name, ...accessOf(c) }));
  if (!jobs.length) return;
  const results = await facts.discovery(jobs);
  for (const job of jobs) {
    const r = results[job.id];
    if (!r?.capabilities) {
      throw new FleetError(
        `cannot read the cluster's version and served API versions, which its charts see as .Capabilities (discovery): ${r?.error ?? "no answer"}`,
        { file: config.file, cluster: job.id },
      );
    }
    factsOf(known, job.id).capabilities = { live: r.capabilities };
  }
}

/** Rounds of lookups a render may add before it must have settled (each may depend on the last's answers). */
const LOOKUP_ROUNDS = 4;

/** Distinct lookups one deployment's templates may make: content must not make the runner read a cluster without bound. */
const MAX_LOOKUPS = 100;

/** What the whole run gives every render: the plan, the facts, who owned which namespace, the clusters left out. */
export interface RenderRun {
  fleet: FleetState;
  facts: Facts;
  namespacesBefore: ReadonlyMap<string, ReadonlySet<string>>;
  leftOut?: ReadonlySet<string>;
}

/** What the steps before gathered for it: the clusters' facts, the identities that deploy, valuesFrom, last Helm revisions. */
export interface RenderReads {
  known: KnownClusters;
  users: AccountUsers;
  valuesFrom: ReadonlyMap<PlanEntry, ResolvedValuesFrom>;
  lastRevisions: ReadonlyMap<PlanEntry, number>;
}

/**
 * Renders, and answers Helm's `lookup` as Fleet's agent does: from the deployment's cluster, read with
 * the identity that deploys it (its serviceAccount's impersonating kubeconfig, else the cluster's). A
 * render runs in the sandbox without a network, so what its templates looked up is read after it (one
 * read per cluster and identity per round, read-only) and it renders again with the answers, until it
 * asks nothing new. What fails (its render, its lookups) is left out of `rendered` and returned as
 * verdicts, with the values each deployment looked up in Secrets, which no failure's words may show.
 */
export async function renderWithLookups(
  entries: PlanEntry[],
  run: RenderRun,
  read: RenderReads,
): Promise<{ rendered: Map<PlanEntry, RenderedDeployment>; verdicts: Verdicts }> {
  const { fleet, facts, leftOut } = run;
  const { known, valuesFrom, lastRevisions } = read;
  await gatherCapabilities(fleet.config, entries, facts, known, leftOut);
  // Render mode and clusters left out get no lookups, as in `helm template`.
  const noLookups = fleet.config.renderDir ? new Set(fleet.config.clusters.map((c) => c.name)) : leftOut;
  const r: Rounds = {
    run,
    read,
    tables: new Map(entries.filter((e) => !noLookups?.has(e.cluster)).map((e) => [e, []])),
    rendered: new Map(),
    failures: [],
    secrets: new Map(),
    failed: (e, error) => {
      r.failures.push({ pair: e, error });
      r.rendered.delete(e);
    },
  };
  const renderSome = (some: PlanEntry[]) =>
    renderDeployments(some, fleet.bundles, (g) => fleet.sources.get(g)!.commit, facts.render, {
      capabilitiesOf: (c) => known.get(c)?.capabilities ?? {},
      lookupsOf: (e) => r.tables.get(e),
      valuesFromOf: (e) => valuesFrom.get(e)?.inputs,
      revisionOf: (e) => (noLookups?.has(e.cluster) ? undefined : lastRevisions.get(e)),
      onFailure: (e, err) => r.failed(e, err),
    });
  r.rendered = await renderSome(entries);
  const bounds = clusterReadBounds();
  for (let round = 1; ; round++) {
    const asking = entries.filter((e) => r.rendered.has(e) && unanswered(r.rendered.get(e)!.lookups, r.tables.get(e)).length);
    if (!asking.length) break;
    const jobs = lookupJobs(r, asking, round, bounds);
    if (!jobs.size) break;
    const results = await readEachGitRepo(
      [...jobs.values()].map(({ entries: _e, ...job }) => job),
      facts.lookup,
      (error) => ({ error }),
    );
    for (const [e, x] of await renderSome(answered(r, jobs, results, bounds))) r.rendered.set(e, x);
  }
  settleRendered(r);
  return { rendered: r.rendered, verdicts: { failed: r.failures, secrets: r.secrets } };
}

/** A render's rounds of lookups: what was asked and answered per deployment, and what failed. */
interface Rounds {
  run: RenderRun;
  read: RenderReads;
  tables: Map<PlanEntry, LookupAnswer[]>;
  /** A deployment that fails (its render, its lookups) is left out here and fails alone (failures.ts). */
  rendered: Map<PlanEntry, RenderedDeployment>;
  failures: Failed[];
  /** The values each deployment looked up in Secrets, which no failure's words may show. */
  secrets: Map<PlanEntry, readonly string[]>;
  failed: (e: PlanEntry, error: unknown) => void;
}

/**
 * One read job per cluster, identity and GitRepo, every missing key of its deployments: a GitRepo's slow
 * lookups fail its own deployments there, with the operator's deadline (cluster-reads.ts), no other
 * GitRepo's. A deployment over the rounds or the lookups it may make, or asking outside its scope, fails.
 */
function lookupJobs(r: Rounds, asking: PlanEntry[], round: number, bounds: ClusterReadBounds): Map<string, LookupJob & { entries: PlanEntry[] }> {
  const { fleet, namespacesBefore } = r.run;
  const clusters = new Map(fleet.config.clusters.map((c) => [c.name, c]));
  const jobs = new Map<string, LookupJob & { entries: PlanEntry[] }>();
  for (const e of asking) {
    const ctx = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster };
    const lookups = r.rendered.get(e)!.lookups!;
    if (round > LOOKUP_ROUNDS) {
      r.failed(e, new FleetError(`its templates kept asking lookup for new objects after ${LOOKUP_ROUNDS} rounds`, ctx));
      continue;
    }
    if (lookups.length > MAX_LOOKUPS) {
      r.failed(e, new FleetError(`its templates make ${lookups.length} different lookups, over the limit of ${MAX_LOOKUPS} per bundle deployment`, ctx));
      continue;
    }
    const scope = {
      namespace: e.namespace,
      allowed: fleet.config.gitRepos.find((g) => g.name === e.gitRepo)?.allowedTargetNamespaces,
      foreign: (namespace: string) => foreignOwners(namespacesBefore, { cluster: e.cluster, gitRepo: e.gitRepo, namespace }),
    };
    const missing = unanswered(lookups, r.tables.get(e));
    const outOfScope = missing.map((k) => lookupScopeError(k, scope, ctx)).find((err) => err);
    if (outOfScope) {
      r.failed(e, outOfScope);
      continue;
    }
    const user = r.read.users.userOf.get(e);
    const id = readId(`${e.cluster} ${user ?? ""}`, e.gitRepo);
    const access = accessOf(clusters.get(e.cluster)!, kubeconfigAs(r.read.known, e.cluster, user));
    const job = jobs.get(id) ?? jobs.set(id, { id, keys: [], entries: [], timeoutSeconds: bounds.seconds, ...access }).get(id)!;
    job.entries.push(e);
    for (const k of missing) if (!job.keys.some((x) => stableJson(x) === stableJson(k))) job.keys.push(k);
  }
  return jobs;
}

/** The answers read, added to each deployment's table; the deployments to render again (a failed read fails its own). */
function answered(
  r: Rounds,
  jobs: Map<string, LookupJob & { entries: PlanEntry[] }>,
  results: Record<string, { answers?: LookupAnswer[]; error?: string } | undefined>,
  bounds: ClusterReadBounds,
): PlanEntry[] {
  const again: PlanEntry[] = [];
  for (const job of jobs.values()) {
    const x = results[job.id];
    for (const e of job.entries) {
      if (!x?.answers) {
        const why = readError(x?.error ?? "no answer", bounds);
        r.failed(
          e,
          new FleetError(`cannot read what its templates look up (lookup) on the cluster: ${why}`, {
            gitRepo: e.gitRepo,
            bundle: e.bundle,
            cluster: e.cluster,
          }),
        );
        continue;
      }
      r.tables.get(e)!.push(...x.answers.filter((a) => unanswered([a.key], r.tables.get(e)).length));
      r.secrets.set(e, lookedUpSecrets(r.tables.get(e)!).values);
      again.push(e);
    }
  }
  return again;
}

/** Each deployment that read Secrets (lookup, valuesFrom) is secret, its warnings redacted; a render's pending error fails it now. */
function settleRendered(r: Rounds): void {
  for (const [e, x] of r.rendered) {
    const secrets = lookedUpSecrets(r.tables.get(e) ?? []);
    const fromValues = r.read.valuesFrom.get(e);
    if (secrets.any || fromValues?.secret) {
      const values = redactionOrder([...secrets.values, ...(fromValues?.redact ?? [])]);
      r.rendered.set(e, { ...x, secret: true, warnings: x.warnings.map((w) => redactSecrets(w, values)) });
    }
    if (x.pendingError) {
      const file = r.run.fleet.bundles.find((b) => b.gitRepo === e.gitRepo && b.name === e.bundle)?.fleetYaml;
      r.failed(e, new FleetError(x.pendingError, { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file }));
    }
  }
}
