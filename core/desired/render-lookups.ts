/**
 * Rendering with what it sees of each cluster gathered: its capabilities (discovery, into ClusterFacts),
 * and Helm's `lookup` answered from the clusters, the one loop where gathering and rendering must
 * alternate, since a render's answers decide what it asks next.
 */
import { clusterReadBounds, readEachGitRepo, readError, readId } from "./cluster-reads";
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
  fleet: FleetState,
  known: KnownClusters,
  users: AccountUsers,
  facts: Facts,
  lastRevisions: ReadonlyMap<PlanEntry, number>,
  namespacesBefore: ReadonlyMap<string, ReadonlySet<string>>,
  valuesFrom: ReadonlyMap<PlanEntry, ResolvedValuesFrom>,
  leftOut?: ReadonlySet<string>,
): Promise<{ rendered: Map<PlanEntry, RenderedDeployment>; verdicts: Verdicts }> {
  await gatherCapabilities(fleet.config, entries, facts, known, leftOut);
  // Render mode and clusters left out get no lookups, as in `helm template`.
  const noLookups = fleet.config.renderDir ? new Set(fleet.config.clusters.map((c) => c.name)) : leftOut;
  const tables = new Map<PlanEntry, LookupAnswer[]>(entries.filter((e) => !noLookups?.has(e.cluster)).map((e) => [e, []]));
  // A deployment that fails (its render, its lookups) is left out here and fails alone (failures.ts).
  let rendered = new Map<PlanEntry, RenderedDeployment>();
  const failures: Failed[] = [];
  const secrets = new Map<PlanEntry, readonly string[]>();
  const failed = (e: PlanEntry, error: unknown) => {
    failures.push({ pair: e, error });
    rendered.delete(e);
  };
  const renderSome = (some: PlanEntry[]) =>
    renderDeployments(some, fleet.bundles, (g) => fleet.sources.get(g)!.commit, facts.render, {
      capabilitiesOf: (c) => known.get(c)?.capabilities ?? {},
      lookupsOf: (e) => tables.get(e),
      valuesFromOf: (e) => valuesFrom.get(e)?.inputs,
      revisionOf: (e) => (noLookups?.has(e.cluster) ? undefined : lastRevisions.get(e)),
      onFailure: (e, err) => failed(e, err),
    });
  rendered = await renderSome(entries);
  const clusters = new Map(fleet.config.clusters.map((c) => [c.name, c]));
  const bounds = clusterReadBounds();
  for (let round = 1; ; round++) {
    const asking = entries.filter((e) => rendered.has(e) && unanswered(rendered.get(e)!.lookups, tables.get(e)).length);
    if (!asking.length) break;
    // One read job per cluster, identity and GitRepo, every missing key of its deployments: a GitRepo's slow
    // lookups fail its own deployments there, with the operator's deadline (cluster-reads.ts), no other GitRepo's.
    const jobs = new Map<string, LookupJob & { entries: PlanEntry[] }>();
    for (const e of asking) {
      const ctx = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster };
      if (round > LOOKUP_ROUNDS) {
        failed(e, new FleetError(`its templates kept asking lookup for new objects after ${LOOKUP_ROUNDS} rounds`, ctx));
        continue;
      }
      if (rendered.get(e)!.lookups!.length > MAX_LOOKUPS) {
        failed(
          e,
          new FleetError(
            `its templates make ${rendered.get(e)!.lookups!.length} different lookups, over the limit of ${MAX_LOOKUPS} per bundle deployment`,
            ctx,
          ),
        );
        continue;
      }
      const scope = {
        namespace: e.namespace,
        allowed: fleet.config.gitRepos.find((g) => g.name === e.gitRepo)?.allowedTargetNamespaces,
        foreign: (namespace: string) => foreignOwners(namespacesBefore, { cluster: e.cluster, gitRepo: e.gitRepo, namespace }),
      };
      const outOfScope = unanswered(rendered.get(e)!.lookups, tables.get(e))
        .map((k) => lookupScopeError(k, scope, ctx))
        .find((err) => err);
      if (outOfScope) {
        failed(e, outOfScope);
        continue;
      }
      const user = users.userOf.get(e);
      const id = readId(`${e.cluster} ${user ?? ""}`, e.gitRepo);
      const c = clusters.get(e.cluster)!;
      const job =
        jobs.get(id) ??
        jobs
          .set(id, {
            id,
            keys: [],
            entries: [],
            timeoutSeconds: bounds.seconds,
            ...accessOf(c, kubeconfigAs(known, e.cluster, user)),
          })
          .get(id)!;
      job.entries.push(e);
      for (const k of unanswered(rendered.get(e)!.lookups, tables.get(e))) if (!job.keys.some((x) => stableJson(x) === stableJson(k))) job.keys.push(k);
    }
    if (!jobs.size) break;
    const results = await readEachGitRepo(
      [...jobs.values()].map(({ entries: _e, ...job }) => job),
      facts.lookup,
      (error) => ({ error }),
    );
    const again: PlanEntry[] = [];
    for (const job of jobs.values()) {
      const r = results[job.id];
      for (const e of job.entries) {
        if (!r?.answers) {
          failed(
            e,
            new FleetError(`cannot read what its templates look up (lookup) on the cluster: ${readError(r?.error ?? "no answer", bounds)}`, {
              gitRepo: e.gitRepo,
              bundle: e.bundle,
              cluster: e.cluster,
            }),
          );
          continue;
        }
        tables.get(e)!.push(...r.answers.filter((a) => unanswered([a.key], tables.get(e)).length));
        secrets.set(e, lookedUpSecrets(tables.get(e)!).values);
        again.push(e);
      }
    }
    for (const [e, r] of await renderSome(again)) rendered.set(e, r);
  }
  for (const [e, r] of rendered) {
    const secrets = lookedUpSecrets(tables.get(e) ?? []);
    const fromValues = valuesFrom.get(e);
    if (secrets.any || fromValues?.secret) {
      const values = redactionOrder([...secrets.values, ...(fromValues?.redact ?? [])]);
      rendered.set(e, { ...r, secret: true, warnings: r.warnings.map((w) => redactSecrets(w, values)) });
    }
    if (r.pendingError)
      failed(
        e,
        new FleetError(r.pendingError, {
          gitRepo: e.gitRepo,
          bundle: e.bundle,
          cluster: e.cluster,
          file: fleet.bundles.find((b) => b.gitRepo === e.gitRepo && b.name === e.bundle)?.fleetYaml,
        }),
      );
  }
  return { rendered, verdicts: { failed: failures, secrets } };
}
