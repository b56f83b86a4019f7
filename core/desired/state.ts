/**
 * From stack configuration to the desired state: everything the program registers, computed and
 * checked before the first registration, as one plain value. Order matters for safety: every source
 * is read and the whole plan built and checked before anything is rendered, and everything that can
 * fail fails here, so a read error or a fleet about to be emptied stops the program while the engine
 * still has nothing to delete. What it needs from outside (rendering, clusters, the last outputs, the
 * crash journal) comes through `facts` (facts.ts).
 */
import * as path from "node:path";
import { deployedAgents, resolveClusterAgents } from "../agent/effective";
import { ClusterConfig, StackConfig } from "../config/stack";
import { shardStackName } from "../config/shards";
import { FleetError } from "../errors";
import { journalObjects } from "../journal";
import { checkTakeOwnership, clusterLabels, ownerLabels } from "../ownership";
import { FleetState, planFleet } from "../pipeline";
import { checkReach, checkReachObjects } from "../reach";
import { checkSingleOwner, ClusterCapabilities, RenderedDeployment, renderDeployments, unanswered } from "../render/deployments";
import { LookupAnswer, LookupJob } from "../render/fleet-render";
import { lookupScopeError } from "../render/lookup-scope";
import { lookedUpSecrets, redactionOrder, redactSecrets } from "../render/lookup-secrets";
import { ResolvedValuesFrom, withValuesDigest } from "../render/values-from";
import { stableJson } from "../hash";
import { AccountProviders } from "../service-accounts";
import { Bundle } from "../bundles/types";
import { K8sObject, objectKey } from "../bundles/manifests";
import { determineStyle } from "../bundles/read";
import { comparePatchPointers } from "../compare-patches";
import { accountProviders } from "../service-accounts";
import { buildPlan, PlanEntry, REPO_NAME_LABEL, unchangedDeployments } from "../targeting/plan";
import { agentObjects } from "./agent";
import { readValuesFrom } from "./read-values-from";
import { clusterNamespaceName } from "./namespaces";
import { DeployedBundle, DeployedObject, Facts, JournalHooks } from "./facts";
import { describeFailure, FailedDeployments } from "./failures";
import { heldNamespaces, heldObjects, heldRecords, heldSpec } from "./held";
import { checkNamespaceMetadata, checkNamespaceSquats, foreignOwners, knownOwners, namespaceOwners } from "./owners";
import { ClusterView, clusterViews } from "../targeting/match";
import { partitionsOf, rolloutWarnings } from "../targeting/rollout";
import { BundleRollout } from "../pipeline";
import { bundleRef, deploymentKey, parseBundleRef, parseDeploymentKey } from "./keys";
import { pairObjects } from "./pair";
import { deletePolicyOf, namespaceRetain } from "./delete-policy";
import { validateObjectLabels } from "./labels";
import { namespacesForCluster } from "./namespaces";
import { clusterSetup } from "./setup";
import { renderedSecretsNotes, setupSecretsNote } from "./render-secrets";
import { checkSecretClaims, gitReposWithSecrets, OperatorSecret, operatorSecrets, withSecretNamespaces } from "./operator-secrets";
import { clusterNamespacesOf, desiredObjects, pairSpecOf } from "./objects";
import { arrivedClusters, checkNothingEmptied, pinCommits, PreviousDeployment, withoutClusters } from "./previous";
import { DeploymentRecord, deploymentRecord, entriesByCluster, summarize } from "./records";
import { ClusterAccess, DesiredCluster, DesiredDeployment, DesiredNamespace, DesiredState, ProviderSettings, RetiringDeployment } from "./types";
import { clusterCredentials } from "../cluster-credentials";

export interface DesiredOptions {
  /** Git cache directory (default ~/.cache/pulumi-fleet). */
  cacheRoot?: string;
  /** Called with the checked plan before anything is rendered: the operations read it to explain a preview. */
  onPlanned?: (state: FleetState) => void;
  /** Called with the desired state once it is computed whole: the operations read its final plan, failures and rollouts. */
  onDesired?: (state: DesiredState) => void;
  /** Set by automation/operations.ts, whose `up` refreshes correctDrift bundles first; a plain `pulumi up` warns instead. */
  correctsDrift?: boolean;
  /** Clusters the operation leaves out (unreachable, excluded from the engine): their objects' owners are not read. */
  leftOut?: () => ReadonlySet<string>;
  /** The commit to deploy per GitRepo, as the shard runner resolved it for every shard (a paused GitRepo keeps its own). */
  commits?: Record<string, string>;
}

export async function desiredState(config: StackConfig, facts: Facts, options: DesiredOptions = {}): Promise<DesiredState> {
  checkNotSplit(config);
  const previous = withoutClusters(await facts.previous(), config.shard?.elsewhere);
  if (previous?.objectLayout && !facts.deployed) {
    throw new FleetError("this stack was deployed by an earlier version, one engine resource per Kubernetes object; `npm run up` moves it to one BundleDeployment " +
      "per bundle and cluster without touching the clusters (a plain `pulumi up` cannot: it would delete and recreate every object). Run it once, then `pulumi up` works as before",
    { file: config.file });
  }
  const pinned: StackConfig = { ...config, gitRepos: pinCommits(config.gitRepos, options.commits, previous) };
  const fleet = await planFleet(pinned, options.cacheRoot, facts.render);
  const { failures } = fleet;
  const readNow = new Set(fleet.bundles.map((b) => bundleRef({ gitRepo: b.gitRepo, bundle: b.name })));
  const shard = config.shard;
  // A GitRepo whose failed deployments keep what they deployed is not emptied, whatever else it matches.
  const holding = new Set([...heldRecords(failures, fleet.unread, readNow, previous, fleet.unreadGitRepos).values()].map((r) => r.gitRepo));
  for (const gitRepo of fleet.unreadGitRepos.keys()) holding.add(gitRepo);
  await checkNothingEmptied(pinned.gitRepos.filter((r) => !holding.has(r.name)), fleet.plan, previous,
    shard && (() => buildPlan(fleet.bundles, [...fleet.config.clusters, ...shard.otherClusters], fleet.config.clusterGroups, facts.render)));
  options.onPlanned?.(fleet);
  const leftOut = options.leftOut?.();
  const renderMode = !!pinned.renderDir;
  const commitOf = (gitRepo: string) => fleet.sources.get(gitRepo)!.commit;
  const fail = (e: PlanEntry, err: unknown) => failures.fail(e, err);

  const agents = resolveClusterAgents(fleet.config);
  const agentNamespace = (cluster: string) => agents.get(cluster)!.namespace;
  /** The namespace a cluster's deployed agent creates; with the agent switched off the cluster creates it for bundles that need it. */
  const agentOwned = (cluster: string) => (agents.get(cluster)!.agent ? agentNamespace(cluster) : undefined);
  // The operator's Secrets per cluster (gitRepos[].downstreamResources): from the stack alone, whatever content says.
  const views = clusterViews(pinned.clusters, pinned.clusterGroups);
  const secrets = operatorSecrets(pinned, views, agentOwned);
  // What content asks beyond its GitRepo's stack entry fails before anything renders as it asked (core/reach.ts).
  checkReach(fleet.plan.entries, pinned, fleet.bundles, fail);
  const reached = failures.settle(fleet.plan.entries);
  const accounts = await accountProviders(reached, pinned.clusters, agentNamespace, renderMode, { skip: leftOut, read: facts.objects, impersonate: facts.impersonate });
  const namespacesBefore = namespaceOwners({ records: previous?.records });
  // helm.valuesFrom, read from each cluster as the deploying identity: a changed value is a new deploymentID.
  const valuesFrom = await readValuesFrom(reached, {
    gitRepos: pinned.gitRepos, clusters: pinned.clusters, accounts, lookup: facts.lookup, namespacesBefore, renderMode, leftOut,
    fileOf: (e) => fleet.bundles.find((b) => b.gitRepo === e.gitRepo && b.name === e.bundle)?.fleetYaml, fail,
  });
  for (const [e, read] of valuesFrom.read) {
    e.deploymentId = withValuesDigest(e.deploymentId, read.digest);
    failures.redact(e, read.redact);
  }
  const planned = failures.settle(reached);
  const unchanged = unchangedDeployments(planned, previous?.deploymentIds);
  const fromState = deployedAsBefore(planned, unchanged, previous, fleet.bundles, facts.deployed);
  const toRender = planned.filter((e) => !fromState.has(e));
  const capabilities = await clusterCapabilities(pinned, toRender, facts, leftOut);
  // Helm revisions, as the agent's releases count them: a pair deployed before renders as an upgrade.
  const lastRevisions = new Map(planned.flatMap((e): [PlanEntry, number][] => {
    const key = deploymentKey(e);
    return previous?.deploymentIds?.[key] !== undefined ? [[e, previous.revisions?.[key] ?? 1]] : [];
  }));
  const rendered = await renderWithLookups(toRender, fleet, capabilities, accounts, facts, lastRevisions, namespacesBefore, valuesFrom.read,
    renderMode ? new Set(pinned.clusters.map((c) => c.name)) : leftOut);
  for (const [e, r] of fromState) rendered.set(e, r);
  // Each check fails the deployments it finds wrong, alone, with what waits for them on their cluster.
  let entries = failures.settle(planned.filter((e) => rendered.has(e)));
  const prior = { deployed: facts.deployed, records: previous?.records };
  await checkSingleOwner(new Map(entries.map((e) => [e, rendered.get(e)!])), fail,
    (contested) => knownOwners(contested, prior, renderMode ? undefined : { read: facts.objects, clusters: pinned.clusters, skip: leftOut }));
  checkNamespaceSquats(entries, rendered, prior, fail);
  checkNamespaceMetadata(entries, namespacesBefore, fail);
  checkReachObjects(entries, rendered, pinned, fleet.bundles, fail);
  checkSecretClaims(entries, (e) => rendered.get(e)!.objects, secrets, fail);
  entries = failures.settle(entries);
  for (const e of entries) {
    try {
      for (const obj of rendered.get(e)!.objects) validateObjectLabels(obj, { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster });
    } catch (err) {
      fail(e, err);
    }
  }
  entries = failures.settle(entries);
  if (!renderMode) {
    await checkTakeOwnership({ entries, rendered, bundles: fleet.bundles, clusters: pinned.clusters, unchanged, skip: leftOut, adopting: new Set(pinned.gitRepos.filter((r) => r.takeOwnership).map((r) => r.name)) }, facts.objects, fail);
    entries = failures.settle(entries);
  }
  inDependencyOrder(entries, fail);
  entries = failures.settle(entries);
  const namespacesOf = (es: PlanEntry[], onConflict: (e: PlanEntry, err: FleetError) => void) => {
    const byCluster = entriesByCluster(es);
    return new Map(pinned.clusters.map((c) => [c.name, clusterNamespaces(c.name, byCluster.get(c.name) ?? [], rendered, agentNamespace(c.name), !!agents.get(c.name)!.agent, onConflict)]));
  };
  namespacesOf(entries, fail);
  entries = failures.settle(entries);
  // What the failed deployments keep, and what must not take it from them; which clusters a rollout holds back.
  let held = heldDeployments(failures, fleet, readNow, previous, facts);
  let rollouts: RolloutGates;
  for (;;) {
    rollouts = rolloutGates(entries, fleet.bundles, views, failures);
    const taken = entries.filter((e) => held.taken(e, rendered.get(e)!));
    if (!taken.length && !rollouts.waiting.length) break;
    for (const e of taken) fail(e, held.takenError(e, rendered.get(e)!));
    for (const [e, err] of rollouts.waiting) fail(e, err);
    entries = failures.settle(entries);
    held = heldDeployments(failures, fleet, readNow, previous, facts);
  }
  // Removing deployments cannot make two bundles' namespace labels conflict: no conflict is left here.
  const namespaces = namespacesOf(entries, (_e, err) => { throw err; });
  for (const [cluster, list] of namespaces) {
    const owned = agentOwned(cluster);
    const names = new Set([...list.map((ns) => ns.metadata.name), ...(owned ? [owned] : [])]);
    list.push(...heldNamespaces(held.deployedOn(cluster), names));
    list.sort(byName);
    namespaces.set(cluster, withSecretNamespaces(cluster, list, secrets.get(cluster) ?? [], owned));
  }
  for (const e of entries) {
    const unread = e.options.serviceAccount ? undefined : accounts.unread.get(e.cluster);
    if (unread) rendered.get(e)!.warnings.push(`serviceAccount: ${unread}`);
    const valuesNotRead = valuesFrom.notRead.get(e);
    if (valuesNotRead) rendered.get(e)!.warnings.push(valuesNotRead);
    const r = rendered.get(e)!;
    if (renderMode) r.warnings.push(...renderedSecretsNotes(pinned.renderDir!, e.cluster, r.objects, r.decrypted));
    if (e.options.correctDrift?.enabled && !options.correctsDrift) {
      rendered.get(e)!.warnings.push("correctDrift.enabled is honoured by `npm run up` and the operations' Automation API (it refreshes this bundle's objects first); a plain `pulumi up` corrects drift only with --refresh");
    }
  }
  await withHeldAccounts(accounts, held.accounts(), pinned.clusters, facts);
  const arrived = arrivedClusters(pinned.clusters.map((c) => c.name), previous);
  const ambient = renderMode ? new Map<string, string>() : await ambientKubeconfigs(pinned, facts);

  const clusters = [...pinned.clusters].sort(byName).map((c): DesiredCluster => withSetup({
    name: c.name,
    provider: providerSettings(c.name, ambient.has(c.name) ? { ...c, kubeconfig: ambient.get(c.name), context: undefined } : c, pinned.renderDir),
    accountProviders: [...(accounts.kubeconfigs.get(c.name) ?? [])].sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([user, kubeconfig]) => ({ user, provider: providerSettings(`${c.name}/as/${user}`, { ...c, kubeconfig, context: undefined }) })),
    namespaces: namespaces.get(c.name)!,
    ...(agents.get(c.name)!.agent ? { agent: agentObjects(c.name, agents.get(c.name)!.agent!) } : {}),
    arrived: arrived.has(c.name),
  }, facts.legacySetups?.get(c.name), secrets.get(c.name)));
  const deployments = [...inDependencyOrder(entries, undefined, rollouts.gates).map((e): DesiredDeployment => {
    const key = deploymentKey(e);
    const r = rendered.get(e)!;
    const nsNames = new Set(namespaces.get(e.cluster)!.map((ns) => ns.metadata.name));
    const objects = desiredObjects(e, r);
    const account = accounts.userOf.get(e);
    const legacy = facts.deployed?.get(key);
    return {
      key, ...formerName(previous, key), entry: e, gitRepo: e.gitRepo, cluster: e.cluster, commit: commitOf(e.gitRepo),
      dependsOn: [...e.dependsOn.map((ref) => deploymentKey({ ...parseBundleRef(ref), cluster: e.cluster })), ...(rollouts.gates.get(e) ?? []).map(deploymentKey)],
      ...(account ? { account } : {}), clusterNamespaces: clusterNamespacesOf(objects, nsNames),
      ...(gitReposWithSecrets(secrets, e.cluster).has(e.gitRepo) ? { afterOperatorSecrets: true as const } : {}),
      ...(objects.some((o) => o.manifest.metadata.namespace && o.manifest.metadata.namespace === agentOwned(e.cluster)) ? { inAgentNamespace: true as const } : {}),
      spec: pairSpecOf(e, objects, legacy?.legacy ? heldObjects(legacy) : undefined, r.secret),
      warnings: warningsOf(e, r), objects, arrived: arrived.has(e.cluster), ...(r.secret ? { secret: true as const } : {}),
      record: deploymentRecord(e, commitOf(e.gitRepo), objects.length, unchanged.has(e) ? lastRevisions.get(e) ?? 1 : (lastRevisions.get(e) ?? 0) + 1),
    };
  }), ...held.deployments((cluster) => new Set(namespaces.get(cluster)?.map((ns) => ns.metadata.name)), arrived)];
  const retiring = retiringDeployments(facts.deployed, new Set(deployments.map((d) => d.key)), pinned.clusters, previous, leftOut);
  // The plan as it deploys: what failed left out, each bundle's rollout; the planned value stays as handed to onPlanned.
  const final: FleetState = { ...fleet, plan: { ...fleet.plan, entries }, rollouts: rollouts.byBundle };
  const summary = summarize(final, deployedAgents(agents), held.records());
  const state: DesiredState = {
    fleet: final, clusters, deployments, retiring, summary,
    gitRepos: Object.entries(summary.gitRepos).map(([name, r]) => ({ name, ...r })),
    records: Object.fromEntries(deployments.map((d) => [d.key, d.record])),
    journal: journalObjects(deployments, leftOut),
    failures: failures.list(),
    warnings: [
      ...[...fleet.sources.values()].flatMap((s) => s.warnings.map((w) => `gitRepo ${s.gitRepo}: ${w}`)),
      ...!facts.deployed && unchanged.size ? [
        `${unchanged.size} unchanged bundle deployment(s) were rendered again: this program was not given the state (a plain \`pulumi up\`), ` +
        "so a chart with random values, timestamps or lookup changes on every such up; `npm run up` and the operations deploy them exactly as last deployed, as Fleet does",
      ] : [],
      // A held deployment says so on its own component; one that keeps nothing is said here.
      ...failures.list().filter((f) => !f.kept).map((f) => `failed: ${describeFailure(f)}`),
      ...[...rollouts.byBundle.values()].flatMap((r) => r.warnings.map((w) => `bundle ${r.bundle}: ${w}`)),
      ...renderMode ? clusters.flatMap((c) => setupSecretsNote(pinned.renderDir!, c.name, Object.values(c.setup?.secretObjects ?? {}))) : [],
    ],
  };
  options.onDesired?.(state);
  return state;
}

/**
 * The deployments the failures hold (held.ts), with what they need: the state's objects of each (a plain
 * `pulumi up` has no state, so there a failure of a deployed pair stops everything, as before: nothing
 * is lost), the users they were applied as, and which rendered objects they own.
 */
function heldDeployments(failures: FailedDeployments, fleet: FleetState, readNow: ReadonlySet<string>, previous: PreviousDeployment | undefined, facts: Facts) {
  const records = heldRecords(failures, fleet.unread, readNow, previous, fleet.unreadGitRepos);
  if (records.size && !facts.deployed) {
    const first = failures.get(records.values().next().value!)!;
    throw new FleetError(`${first.reason} (without the stack's state, as in a plain \`pulumi up\`, a failed bundle deployment cannot keep its objects as they are, so nothing ` +
      "was changed; `npm run up` keeps them and deploys everything else)", { gitRepo: first.gitRepo, bundle: first.bundle, cluster: first.cluster });
  }
  const kept = new Map<string, { record: DeploymentRecord; deployed: DeployedBundle }>();
  for (const [key, record] of records) {
    const deployed = facts.deployed?.get(key);
    if (!deployed?.objects.length) continue;
    kept.set(key, { record, deployed });
    failures.kept(record, { deploymentId: record.deploymentId, objects: deployed.objects.length });
  }
  const owners = new Map<string, string>();
  for (const [, { record, deployed }] of kept) for (const o of deployed.objects) owners.set(`${record.cluster}\u0000${objectKey(o.manifest)}`, bundleRef(record));
  const ownerOf = (e: PlanEntry, r: RenderedDeployment) => r.objects.map((o) => [o, owners.get(`${e.cluster}\u0000${objectKey(o)}`)] as const).find(([, b]) => b && b !== bundleRef(e));
  return {
    records: () => [...kept.values()].map((k) => k.record),
    deployedOn: (cluster: string) => [...kept.values()].filter((k) => k.record.cluster === cluster).map((k) => k.deployed),
    accounts: () => [...kept.values()].flatMap((k) => (k.deployed.account ? [{ cluster: k.record.cluster, user: k.deployed.account }] : [])),
    taken: (e: PlanEntry, r: RenderedDeployment) => !!ownerOf(e, r),
    takenError: (e: PlanEntry, r: RenderedDeployment) => {
      const [o, ref] = ownerOf(e, r)!;
      const owner = parseBundleRef(ref!);
      return new FleetError(`${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name} is also deployed by bundle ${owner.bundle} of GitRepo ${owner.gitRepo} on this cluster, ` +
        "which failed and keeps its objects as last deployed; an object has one owner", { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster });
    },
    deployments: (namespacesOf: (cluster: string) => ReadonlySet<string>, arrived: ReadonlySet<string>): DesiredDeployment[] =>
      [...kept].map(([key, { record, deployed }]) => {
        const objects = heldObjects(deployed);
        return {
          key, ...formerName(previous, key), gitRepo: record.gitRepo, cluster: record.cluster, commit: record.commit, dependsOn: [],
          ...(deployed.account ? { account: deployed.account } : {}), clusterNamespaces: clusterNamespacesOf(objects, namespacesOf(record.cluster)),
          warnings: [`bundle ${record.bundle} on cluster ${record.cluster} failed: ${describeFailure(failures.get(record)!)}`],
          objects, spec: heldSpec(record, deployed, objects), record, arrived: arrived.has(record.cluster),
          held: true, ...(deployed.appliedDeploymentId ? { appliedDeploymentId: deployed.appliedDeploymentId } : {}), ...(deployed.secret ? { secret: true as const } : {}),
        };
      }),
  };
}

/** The alias of a BundleDeployment an earlier version named without its GitRepo (previous.ts formerNames). */
function formerName(previous: PreviousDeployment | undefined, key: string): { formerName?: string } {
  const name = previous?.formerNames?.[key];
  return name ? { formerName: name } : {};
}

interface RolloutGates {
  /** Per deployment, the deployments of its bundle on other clusters it waits for (earlier waves). */
  gates: Map<PlanEntry, PlanEntry[]>;
  /** Deployments a failed one of an earlier wave holds back, with why: they keep what they have, as in a paused rollout. */
  waiting: [PlanEntry, FleetError][];
  byBundle: Map<string, BundleRollout>;
}

/**
 * fleet.yaml rolloutStrategy (core/targeting/rollout.ts) as dependencies: each deployment of a wave that
 * waits depends on the bundle's deployments of the waves since the last such wave, so the engine applies
 * it only once those are applied and ready, and skips it when one fails. A cluster of an earlier wave
 * whose deployment failed alone (its objects as they were: not ready with this commit) holds the later
 * ones back, as Fleet's rollout pauses on an unavailable partition. The deploymentIDs do not change.
 */
function rolloutGates(entries: PlanEntry[], bundles: Bundle[], views: ClusterView[], failures: FailedDeployments): RolloutGates {
  const out: RolloutGates = { gates: new Map(), waiting: [], byBundle: new Map() };
  const viewOf = new Map(views.map((v) => [v.name, v]));
  const staged = new Set(bundles.filter((b) => b.rolloutStrategy).map((b) => bundleRef({ gitRepo: b.gitRepo, bundle: b.name })));
  if (!staged.size) return out;
  // Grouped once: a fleet of thousands of bundles must not filter every entry per bundle.
  const entriesOf = new Map<string, PlanEntry[]>();
  for (const e of entries) if (staged.has(bundleRef(e))) (entriesOf.get(bundleRef(e)) ?? entriesOf.set(bundleRef(e), []).get(bundleRef(e))!).push(e);
  const failedOf = new Map<string, string[]>();
  for (const f of failures.list()) if (f.cluster && staged.has(bundleRef(f))) (failedOf.get(bundleRef(f)) ?? failedOf.set(bundleRef(f), []).get(bundleRef(f))!).push(f.cluster);
  for (const bundle of bundles) {
    if (!bundle.rolloutStrategy) continue;
    const ref = bundleRef({ gitRepo: bundle.gitRepo, bundle: bundle.name });
    const own = entriesOf.get(ref) ?? [];
    const failedHere = (failedOf.get(ref) ?? []).map((cluster) => ({ cluster }));
    // Partitions are of every cluster the bundle targets, deploying or failed (as Fleet's targets are).
    const clusters = [...new Set([...own.map((e) => e.cluster), ...failedHere.map((f) => f.cluster)])].sort();
    const rollout = partitionsOf(bundle.rolloutStrategy, clusters.map((c) => viewOf.get(c)!));
    out.byBundle.set(ref, { gitRepo: bundle.gitRepo, bundle: bundle.name, ...rollout, warnings: rolloutWarnings(bundle.rolloutStrategy, rollout) });
    const byCluster = new Map(own.map((e) => [e.cluster, e]));
    let before: string[] = [];
    let since: string[] = [];
    for (const wave of rollout.waves) {
      if (wave.afterPrevious) {
        before = since;
        since = [];
      }
      since.push(...wave.clusters);
      const failedBefore = before.filter((c) => failures.has({ gitRepo: bundle.gitRepo, bundle: bundle.name, cluster: c }));
      for (const c of wave.clusters) {
        const e = byCluster.get(c);
        if (!e) continue;
        if (failedBefore.length) {
          out.waiting.push([e, new FleetError(`rollout paused before partition ${wave.partition}: bundle ${bundle.name} failed on cluster(s) ${failedBefore.join(", ")} of an earlier wave, ` +
            "so this cluster keeps what it has (rolloutStrategy)", { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: bundle.fleetYaml, field: "rolloutStrategy" })]);
          continue;
        }
        const gates = before.map((b) => byCluster.get(b)!).filter((g) => g);
        if (gates.length) out.gates.set(e, gates);
      }
    }
  }
  return out;
}

/** Impersonating kubeconfigs for the users held deployments were applied as that no planned one uses now. */
async function withHeldAccounts(accounts: AccountProviders, wanted: { cluster: string; user: string }[], clusters: ClusterConfig[], facts: Facts): Promise<void> {
  const missing = wanted.filter((w) => !accounts.kubeconfigs.get(w.cluster)?.has(w.user));
  if (!missing.length) return;
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const jobs = [...new Map(missing.map((m) => [`${m.cluster} ${m.user}`, m])).entries()].map(([id, m]) => ({
    id, ...clusterCredentials(byName.get(m.cluster)), as: m.user,
  }));
  const results = await facts.impersonate(jobs);
  for (const job of jobs) {
    const cluster = job.id.slice(0, job.id.indexOf(" "));
    const r = results[job.id];
    if (!r?.kubeconfig) throw new FleetError(`cannot act as ${job.as}, which a failed bundle deployment's objects were applied as: ${r?.error ?? "no answer"}`, { cluster });
    (accounts.kubeconfigs.get(cluster) ?? accounts.kubeconfigs.set(cluster, new Map()).get(cluster)!).set(job.as, r.kubeconfig);
  }
}

/**
 * What charts see of each cluster, as Fleet's agent renders on it: a live cluster's version and served
 * API versions, read once per operation (discovery; a cluster that cannot be read is an error naming
 * it, unless the operation leaves it out); in render mode the cluster's kubeVersion and apiVersions.
 */
async function clusterCapabilities(config: StackConfig, entries: PlanEntry[], facts: Facts, leftOut?: ReadonlySet<string>): Promise<Map<string, ClusterCapabilities>> {
  const out = new Map<string, ClusterCapabilities>();
  if (config.renderDir) {
    for (const c of config.clusters) out.set(c.name, { kubeVersion: c.kubeVersion, apiVersions: c.apiVersions });
    return out;
  }
  const deployed = new Set(entries.map((e) => e.cluster));
  const jobs = config.clusters.filter((c) => deployed.has(c.name) && !leftOut?.has(c.name))
    .map((c) => ({ id: c.name, ...clusterCredentials(c) }));
  if (!jobs.length) return out;
  const results = await facts.discovery(jobs);
  for (const job of jobs) {
    const r = results[job.id];
    if (!r?.capabilities) {
      throw new FleetError(`cannot read the cluster's version and served API versions, which its charts see as .Capabilities (discovery): ${r?.error ?? "no answer"}`, { file: config.file, cluster: job.id });
    }
    out.set(job.id, { live: r.capabilities });
  }
  return out;
}

/**
 * Clusters without a kubeconfig of their own use the ambient one, as kubectl does: KUBECONFIG's files
 * merged (else ~/.kube/config), `context` found in any of them. The Kubernetes provider reads a
 * KUBECONFIG of several files as one kubeconfig and fails every object, so when it lists several, the
 * cluster's context is resolved here (client-go's loader, in fleet-render) and the provider gets that
 * one context, its files inlined. A context that does not exist is an error naming it. Without a
 * context and with one file (or none: in-cluster), the provider's own reading is left alone.
 */
async function ambientKubeconfigs(config: StackConfig, facts: Facts): Promise<Map<string, string>> {
  const files = (process.env.KUBECONFIG ?? "").split(path.delimiter).filter((p) => p !== "");
  const ambient = config.clusters.filter((c) => c.kubeconfig === undefined && (c.context !== undefined || files.length > 1));
  const out = new Map<string, string>();
  if (!ambient.length) return out;
  const results = await facts.ambientKubeconfig(ambient.map((c) => ({ id: c.name, context: c.context ?? "" })));
  for (const c of ambient) {
    const r = results[c.name];
    if (!r?.kubeconfig) {
      const where = files.length ? `KUBECONFIG (${files.join(path.delimiter)})` : "the ambient kubeconfig (~/.kube/config)";
      throw new FleetError(`${c.context !== undefined ? `context ${JSON.stringify(c.context)} ` : "the current context "}cannot be used from ${where}: ${r?.error ?? "no answer"}`,
        { file: config.file, cluster: c.name, field: "context" });
    }
    if (files.length > 1) out.set(c.name, r.kubeconfig);
  }
  return out;
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
 * asks nothing new. Clusters in `noLookups` (render mode, left out) get none, as in `helm template`.
 */
async function renderWithLookups(entries: PlanEntry[], fleet: FleetState, capabilities: Map<string, ClusterCapabilities>, accounts: AccountProviders,
  facts: Facts, lastRevisions: ReadonlyMap<PlanEntry, number>, namespacesBefore: ReadonlyMap<string, ReadonlySet<string>>,
  valuesFrom: ReadonlyMap<PlanEntry, ResolvedValuesFrom>, noLookups?: ReadonlySet<string>): Promise<Map<PlanEntry, RenderedDeployment>> {
  const tables = new Map<PlanEntry, LookupAnswer[]>(entries.filter((e) => !noLookups?.has(e.cluster)).map((e) => [e, []]));
  // A deployment that fails (its render, its lookups) is left out here and fails alone (failures.ts).
  let rendered = new Map<PlanEntry, RenderedDeployment>();
  const failed = (e: PlanEntry, err: unknown) => {
    fleet.failures.fail(e, err);
    rendered.delete(e);
  };
  const renderSome = (some: PlanEntry[]) => renderDeployments(some, fleet.bundles, (g) => fleet.sources.get(g)!.commit, facts.render, {
    capabilitiesOf: (c) => capabilities.get(c) ?? {}, lookupsOf: (e) => tables.get(e), valuesFromOf: (e) => valuesFrom.get(e)?.inputs,
    revisionOf: (e) => (noLookups?.has(e.cluster) ? undefined : lastRevisions.get(e)), onFailure: (e, err) => failed(e, err),
  });
  rendered = await renderSome(entries);
  const clusters = new Map(fleet.config.clusters.map((c) => [c.name, c]));
  for (let round = 1; ; round++) {
    const asking = entries.filter((e) => rendered.has(e) && unanswered(rendered.get(e)!.lookups, tables.get(e)).length);
    if (!asking.length) break;
    // One read job per cluster and identity, every missing key of its deployments.
    const jobs = new Map<string, LookupJob & { entries: PlanEntry[] }>();
    for (const e of asking) {
      const ctx = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster };
      if (round > LOOKUP_ROUNDS) {
        failed(e, new FleetError(`its templates kept asking lookup for new objects after ${LOOKUP_ROUNDS} rounds`, ctx));
        continue;
      }
      if (rendered.get(e)!.lookups!.length > MAX_LOOKUPS) {
        failed(e, new FleetError(`its templates make ${rendered.get(e)!.lookups!.length} different lookups, over the limit of ${MAX_LOOKUPS} per bundle deployment`, ctx));
        continue;
      }
      const scope = {
        namespace: e.namespace, allowed: fleet.config.gitRepos.find((g) => g.name === e.gitRepo)?.allowedTargetNamespaces,
        foreign: (namespace: string) => foreignOwners(namespacesBefore, { cluster: e.cluster, gitRepo: e.gitRepo, namespace }),
      };
      const outOfScope = unanswered(rendered.get(e)!.lookups, tables.get(e)).map((k) => lookupScopeError(k, scope, ctx)).find((err) => err);
      if (outOfScope) {
        failed(e, outOfScope);
        continue;
      }
      const user = accounts.userOf.get(e);
      const id = `${e.cluster} ${user ?? ""}`;
      const c = clusters.get(e.cluster)!;
      const job = jobs.get(id) ?? jobs.set(id, {
        id, keys: [], entries: [],
        ...clusterCredentials(c, user ? accounts.kubeconfigs.get(e.cluster)!.get(user)! : undefined),
      }).get(id)!;
      job.entries.push(e);
      for (const k of unanswered(rendered.get(e)!.lookups, tables.get(e))) if (!job.keys.some((x) => stableJson(x) === stableJson(k))) job.keys.push(k);
    }
    if (!jobs.size) break;
    const results = await facts.lookup([...jobs.values()].map(({ entries: _e, ...job }) => job));
    const again: PlanEntry[] = [];
    for (const job of jobs.values()) {
      const r = results[job.id];
      for (const e of job.entries) {
        if (!r?.answers) {
          failed(e, new FleetError(`cannot read what its templates look up (lookup) on the cluster: ${r?.error ?? "no answer"}`, { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster }));
          continue;
        }
        tables.get(e)!.push(...r.answers.filter((a) => unanswered([a.key], tables.get(e)).length));
        fleet.failures.redact(e, lookedUpSecrets(tables.get(e)!).values);
        again.push(e);
      }
    }
    for (const [e, r] of await renderSome(again)) rendered.set(e, r);
  }
  for (const [e, r] of rendered) {
    const secrets = lookedUpSecrets(tables.get(e) ?? []);
    const fromValues = valuesFrom.get(e);
    if (secrets.any || fromValues?.secret) {
      const values = redactionOrder([...secrets.values, ...fromValues?.redact ?? []]);
      rendered.set(e, { ...r, secret: true, warnings: r.warnings.map((w) => redactSecrets(w, values)) });
    }
    if (r.pendingError) failed(e, new FleetError(r.pendingError, { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: fleet.bundles.find((b) => b.gitRepo === e.gitRepo && b.name === e.bundle)?.fleetYaml }));
  }
  return rendered;
}

/**
 * Fleet renders a BundleDeployment again only when its deploymentID changes. So does this: a deployment
 * whose deploymentID and pause are what the last update deployed, whose objects in the state were all
 * applied at that deploymentID (and that asks for no drift correction) gets the objects the state holds, as they were registered, instead of a new render: a
 * chart with random values, timestamps or `lookup` then changes nothing, and the no-op path renders
 * nothing. Render warnings are not repeated for such a deployment (they were shown when it rendered).
 */
function deployedAsBefore(entries: PlanEntry[], unchanged: ReadonlySet<PlanEntry>, previous: PreviousDeployment | undefined, bundles: Bundle[],
  deployed: ReadonlyMap<string, DeployedBundle> | undefined): Map<PlanEntry, RenderedDeployment> {
  const out = new Map<PlanEntry, RenderedDeployment>();
  if (!deployed) return out;
  const byRef = new Map(bundles.map((b) => [bundleRef({ gitRepo: b.gitRepo, bundle: b.name }), b]));
  for (const e of entries) {
    const key = deploymentKey(e);
    const held = deployed.get(key);
    const objects = held?.objects;
    // The state's objects must be the ones applied at this deploymentID: a failed apply, or an update
    // that ran after the state was read, leaves them at another one, and then this renders again.
    if (!unchanged.has(e) || !objects?.length || held!.appliedDeploymentId !== e.deploymentId || previous?.paused?.[key] !== e.paused || e.options.correctDrift?.enabled) continue;
    const bundle = byRef.get(bundleRef(e))!;
    const manifests = objects.map((o) => o.manifest);
    out.set(e, {
      objects: manifests, style: determineStyle(bundle.files, e.options).kind, warnings: [...bundle.warnings ?? []],
      chartCrds: new Set(), retainReasons: new Map(objects.filter((o) => o.retain).map((o) => [o.manifest, o.retain!])),
      ignoredFields: new Map(manifests.map((o): [K8sObject, string[]] => [o, comparePatchPointers(o, e.options.diff?.comparePatches)]).filter(([, p]) => p.length)),
      ...(held!.secret ? { secret: true as const } : {}),
    });
  }
  return out;
}

/**
 * Deployments an earlier version deployed as one resource per object that this update no longer
 * deploys: the first `up` of this version marks those resources retained in the state (so the engine
 * drops them without deleting), so each gets a BundleDeployment that adopts its objects and prunes
 * them all, under their retain rules, in the same update (as the cluster's own identity); the next
 * update deletes the empty pair.
 * A cluster no longer configured is not among them (its objects go with its old provider, as before).
 */
function retiringDeployments(deployed: ReadonlyMap<string, DeployedBundle> | undefined, registered: ReadonlySet<string>, clusters: ClusterConfig[],
  previous: PreviousDeployment | undefined, leftOut?: ReadonlySet<string>): RetiringDeployment[] {
  const configured = new Set(clusters.map((c) => c.name));
  return [...deployed ?? []].filter(([key, d]) => d.legacy && !registered.has(key) && configured.has(parseDeploymentKey(key).cluster) && !leftOut?.has(parseDeploymentKey(key).cluster))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, d]) => {
      const owner = parseDeploymentKey(key);
      const cluster = owner.cluster;
      const objects = heldObjects(d);
      return {
        key, cluster,
        spec: { deploymentId: "", objects: {}, deletePolicy: deletePolicyOf(ownerLabels(owner)), adopt: pairObjects(objects) },
      };
    });
}

/** An environment split into shards is deployed by its shards' stacks, never as a whole. */
function checkNotSplit(config: StackConfig): void {
  if (!config.shards || config.shard) return;
  const environment = config.file.replace(/^.*Pulumi\.(.*)\.yaml$/, "$1");
  const stacks = config.shards.map((s) => shardStackName(environment, s.name)).join(", ");
  throw new FleetError(`this environment is split into shards, each deployed by its own stack (${stacks}); run those, or \`npm run up -- --stack ${environment}\` for all of them`, { file: config.file, field: "shards" });
}

/** The cluster with the one resource that creates its namespaces and agent (setup.ts). */
function withSetup(c: DesiredCluster, legacy: DeployedObject[] | undefined, secrets: OperatorSecret[] = []): DesiredCluster {
  const setup = clusterSetup(c.name, c.namespaces, c.agent, legacy, secrets);
  return setup ? { ...c, setup } : c;
}

/**
 * The namespaces a cluster creates for its bundles. A deployed agent owns its own namespace, so a bundle
 * deploying into it does not create it twice; with the agent switched off the cluster creates it, and
 * the alias to the agent's resource turns the change of owner into an update, never a delete of the
 * namespace (and everything in it) on the cluster.
 */
function clusterNamespaces(cluster: string, entries: PlanEntry[], rendered: Map<PlanEntry, RenderedDeployment>, agentNamespace: string,
  agentDeployed: boolean, onConflict: (entry: PlanEntry, err: FleetError) => void): DesiredNamespace[] {
  return namespacesForCluster(cluster, entries, (e) => rendered.get(e)!.objects, onConflict).filter((ns) => !agentDeployed || ns.name !== agentNamespace).map((ns) => ({
    name: clusterNamespaceName(cluster, ns.name),
    metadata: {
      name: ns.name,
      labels: { ...ns.labels, ...clusterLabels(cluster) },
      ...(Object.keys(ns.annotations).length ? { annotations: ns.annotations } : {}),
    },
    retainOnDelete: !!namespaceRetain(ns.deleteWithBundles),
    ...(ns.name === agentNamespace ? { wasAgentNamespace: true as const } : {}),
  }));
}

/** The provider's client allows 50 requests/s (burst 120) by default: see providerSettings. */
const CLIENT_QPS = 500;
const CLIENT_BURST = 1000;

/**
 * A cluster's access for the stack's provider. Its `clusterIdentifier` is the cluster's name, so a
 * rotated kubeconfig or token is an update of the provider, never a replacement of anything deployed
 * through it. In render mode the provider writes manifests to <renderDir>/<cluster> instead of
 * contacting a cluster.
 */
export function providerSettings(name: string, c: ClusterConfig, renderDir?: string): ProviderSettings {
  const settings: ProviderSettings = { name, clusterIdentifier: c.name };
  if (renderDir) return { ...settings, renderYamlToDirectory: path.join(renderDir, c.name) };
  // With the provider's default rate limit, a create or prune of a few hundred objects waits on the
  // client, not on the API server (BENCHMARKS.md); the API server's priority and fairness still protects it.
  settings.kubeClientSettings = { qps: CLIENT_QPS, burst: CLIENT_BURST };
  if (c.kubeconfig !== undefined) settings.kubeconfig = c.kubeconfig;
  if (c.context !== undefined) settings.context = c.context;
  if (c.deleteUnreachable) settings.deleteUnreachable = true;
  return settings;
}

/**
 * The plan's entries with each one's dependsOn (same cluster) before it, in plan order otherwise: the
 * order the engine registers them in. A cycle is an error naming the deployments in it; with `onCycle`,
 * the deployment that closes it goes there (in one pass) and is left out, and the caller settles what
 * waits for it.
 */
function inDependencyOrder(entries: PlanEntry[], onCycle?: (entry: PlanEntry, err: FleetError) => void, gates?: ReadonlyMap<PlanEntry, PlanEntry[]>): PlanEntry[] {
  const byKey = new Map(entries.map((e) => [deploymentKey(e), e]));
  const done = new Set<string>();
  const inProgress = new Set<string>();
  const out: PlanEntry[] = [];
  const visit = (entry: PlanEntry): void => {
    const key = deploymentKey(entry);
    if (done.has(key)) return;
    if (inProgress.has(key)) {
      const err = new FleetError(`dependsOn forms a cycle through ${[...inProgress].join(" -> ")}`, { gitRepo: entry.gitRepo, bundle: entry.bundle, cluster: entry.cluster, field: "dependsOn" });
      if (!onCycle) throw err;
      onCycle(entry, err);
      return;
    }
    inProgress.add(key);
    for (const ref of entry.dependsOn) {
      const dep = byKey.get(deploymentKey({ ...parseBundleRef(ref), cluster: entry.cluster }));
      if (dep) visit(dep);
    }
    for (const gate of gates?.get(entry) ?? []) visit(gate);
    inProgress.delete(key);
    done.add(key);
    out.push(entry);
  };
  for (const e of entries) visit(e);
  return out;
}

/** The deployment's preview lines: paused first, then what the bundle, the render and the checks said. */
function warningsOf(e: PlanEntry, r: RenderedDeployment): string[] {
  return [
    ...(e.paused ? [`bundle ${e.bundle} is paused on cluster ${e.cluster}: its objects stay exactly as deployed (no update, no delete)`] : []),
    ...r.warnings.map((w) => `bundle ${e.bundle} on cluster ${e.cluster}: ${w}`),
  ];
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export type { PreviousDeployment };

/** What the program (components/program.ts) is given by the operations, scripts and tests. */
export interface DeployOptions extends DesiredOptions {
  /** What the last update deployed; read from the stack's own outputs when not given (null: a new stack). */
  previous?: PreviousDeployment | null;
  /** The crash journal (core/journal.ts), given by the operations' `up` when the state is written once at the end. */
  journal?: JournalHooks;
  /** The objects the stack's state holds per bundle deployment, read by the operations before the engine runs (Facts.deployed). */
  deployed?: () => ReadonlyMap<string, DeployedBundle> | undefined;
  /** What an earlier version created per cluster as one resource per object (Facts.legacySetups), read with `deployed`. */
  legacySetups?: () => ReadonlyMap<string, DeployedObject[]> | undefined;
  /** The access of clusters no longer in the stack whose pairs the state still holds through the stack's provider (read with `deployed`). */
  carriedAccess?: () => Record<string, ClusterAccess> | undefined;
  /** The shard runner's fingerprint of this update's inputs (automation/shard-inputs.ts), kept as the output `inputs`. */
  inputs?: string;
  /** Wall times of the program's own work (benchmarks): computing the desired state, and registering every resource. */
  onProgramTimings?: (t: { planMs: number; registerMs: number }) => void;
}
