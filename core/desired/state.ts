/**
 * From stack configuration to the desired state: everything the program registers, computed and
 * checked before the first registration, as one plain value. Order matters for safety: every source
 * is read and the whole plan built and checked before anything is rendered, and everything that can
 * fail fails here, so a read error or a fleet about to be emptied stops the program while the engine
 * still has nothing to delete. What it needs from outside (rendering, clusters, the last outputs, the
 * crash journal) comes through `facts` (facts.ts).
 */
import { deployedAgents, resolveClusterAgents } from "../agent/effective";
import { StackConfig } from "../config/stack";
import { healthChecksInput } from "../config/health-checks";
import { kubernetesEventsInput } from "../config/notifications";
import { shardStackName } from "../config/shards";
import { FleetError } from "../base/errors";
import { checkTakeOwnership, ownershipQueries } from "./ownership";
import { FleetState, planFleet } from "../plan/pipeline";
import { checkReach } from "./reach";
import { RenderedDeployment } from "../render/deployments";
import { contestedObjects } from "../render/single-owner";
import { AccountUsers, accountUsers, defaultAccountClusters, wantedUsers } from "./service-accounts";
import { PlanEntry, unchangedDeployments } from "../targeting/plan";
import { agentObjects } from "./agent";
import { renewedKeys, valuesFromAsks, valuesFromRead, ValuesFromReads, valuesFromVerdicts } from "./read-values-from";
import { clusterNamespaces } from "./cluster-namespaces";
import { Facts } from "./facts";
import { describeFailure, failuresOf } from "../plan/failures";
import { HeldDeployments, heldDeployments, heldNamespaces, heldObjects, heldRecords } from "./held";
import { knownOwners, namespaceOwners, ownersUnknown } from "./owners";
import { checkRendered } from "./checks";
import { bundleRef, deploymentKey, parseBundleRef } from "../model/keys";
import { withSetup } from "./setup";
import { renderedSecretsNotes, setupSecretsNote } from "./render-secrets";
import { operatorSecrets, withSecretNamespaces } from "./operator-secrets";
import { clusterNamespacesOf, desiredObjects, pairSpecOf } from "./objects";
import { arrivedClusters, checkNothingEmptied, formerName, pinCommits, withoutClusters } from "./previous";
import { deploymentRecord, entriesByCluster, summarize } from "./records";
import { DesiredCluster, DesiredDeployment, DesiredState } from "./types";
import { deployedAsBefore, retiringDeployments } from "./from-state";
import { journalObjects } from "./journal-objects";
import { gatherAsUsers, gatherClusters, gatherKubeconfigs } from "./gather";
import { gatherExisting, gatherOwners } from "./gather-objects";
import { inDependencyOrder } from "./order";
import { decideInSteps } from "./steps";
import { KnownClusters } from "./cluster-facts";
import { clusterReach, providerSettings } from "./providers";
import { renderWithLookups } from "./render-lookups";
import { RolloutGates, rolloutGates } from "./rollout-gates";
import { keptOutsideWindows, partitionHolds, windowHolds } from "./holds";
import { clustersOutsideWindowsAt } from "../targeting/schedule-windows";

import { DesiredOptions } from "./options";
import { withRenderBudget } from "../renderer/render-budget";

export async function desiredState(config: StackConfig, given: Facts, options: DesiredOptions = {}): Promise<DesiredState> {
  // Every render batch of this state spends from one budget per GitRepo (render-budget.ts).
  const facts: Facts = { ...given, render: withRenderBudget(given.render) };
  checkNotSplit(config);
  const previous = withoutClusters(await facts.previous(), config.shard?.elsewhere);
  if (previous?.objectLayout && !facts.deployed) {
    throw new FleetError(
      "this stack was deployed by an earlier version, one engine resource per Kubernetes object; `npm run up` moves it to one BundleDeployment " +
        "per bundle and cluster without touching the clusters (a plain `pulumi up` cannot: it would delete and recreate every object). Run it once, then `pulumi up` works as before",
      { file: config.file },
    );
  }
  const pinned: StackConfig = { ...config, gitRepos: pinCommits(config.gitRepos, options.commits, previous) };
  const deployedNow = (options.now ?? new Date()).toISOString();
  const fleet = await planFleet(pinned, options.cacheRoot, facts.render);
  const { failures } = fleet;
  const readNow = new Set(fleet.bundles.map((b) => bundleRef({ gitRepo: b.gitRepo, bundle: b.name })));
  // A GitRepo whose failed deployments keep what they deployed is not emptied, whatever else it matches.
  const holding = new Set([...heldRecords(failures, fleet.unread, readNow, previous, fleet.unreadGitRepos).values()].map((r) => r.gitRepo));
  for (const gitRepo of fleet.unreadGitRepos.keys()) holding.add(gitRepo);
  checkNothingEmptied(
    pinned.gitRepos.filter((r) => !holding.has(r.name)),
    fleet.plan,
    previous,
    config.shard && fleet.targeting.deploysElsewhere,
  );
  options.onPlanned?.(fleet);
  const leftOut = options.leftOut?.();
  const renderMode = !!pinned.renderDir;
  const commitOf = (gitRepo: string) => fleet.sources.get(gitRepo)!.commit;

  const agents = resolveClusterAgents(fleet.config);
  const agentNamespace = (cluster: string) => agents.get(cluster)!.namespace;
  /** The namespace a cluster's deployed agent creates; with the agent switched off the cluster creates it for bundles that need it. */
  const agentOwned = (cluster: string) => (agents.get(cluster)!.agent ? agentNamespace(cluster) : undefined);
  // The operator's Secrets per cluster (gitRepos[].downstreamResources): from the stack alone, whatever content says.
  const secrets = operatorSecrets(pinned, fleet.targeting.gitRepos, agentOwned);
  const namespacesBefore = namespaceOwners({ records: previous?.records });
  const fileOf = (e: PlanEntry) => fleet.bundles.find((b) => b.gitRepo === e.gitRepo && b.name === e.bundle)?.fleetYaml;
  const prior = { deployed: facts.deployed, records: previous?.records };
  // Maintenance windows: a cluster outside its schedules' windows keeps what it has (holds.ts).
  const outside = await clustersOutsideWindowsAt(pinned, options.now ?? new Date(), fleet.targeting.schedules);
  const namespacesOf = (es: PlanEntry[], onConflict: (e: PlanEntry, err: FleetError) => void) => {
    const byCluster = entriesByCluster(es);
    return new Map(
      pinned.clusters.map((c) => [
        c.name,
        clusterNamespaces(c.name, byCluster.get(c.name) ?? [], rendered, agentNamespace(c.name), !!agents.get(c.name)!.agent, onConflict),
      ]),
    );
  };
  // What the steps gather of the clusters (`known`: ClusterFacts per cluster name) and decide on the way, for the steps after them and the registration.
  let known!: KnownClusters, accounts!: AccountUsers, valuesFrom!: ValuesFromReads, unchanged!: Set<PlanEntry>, lastRevisions!: Map<PlanEntry, number>;
  let rendered!: Map<PlanEntry, RenderedDeployment>, rollouts!: RolloutGates, held!: HeldDeployments;
  // Each step fails the deployments it finds wrong, alone, with what waits for them on their cluster (steps.ts).
  const entries = await decideInSteps(
    fleet.plan.entries,
    [
      // What content asks beyond its GitRepo's stack entry fails before anything renders as it asked (core/desired/reach.ts).
      { name: "reach", judge: (alive) => ({ failed: failuresOf((fail) => checkReach(alive, pinned, fleet.bundles, fleet.targeting, fail)) }) },
      {
        // helm.valuesFrom, read from each cluster as the deploying identity: a changed value is a new deploymentID.
        name: "valuesFrom",
        judge: async (alive) => {
          known = await gatherClusters(pinned, defaultAccountClusters(alive, renderMode, leftOut), agentNamespace, facts);
          const users = accountUsers(alive, agentNamespace, renderMode, known);
          const asks = valuesFromAsks(alive, { gitRepos: pinned.gitRepos, users, namespacesBefore, renderMode, leftOut, fileOf });
          await gatherAsUsers(wantedUsers(alive, users), asks, pinned.clusters, facts, known);
          const reads = valuesFromRead(asks, known, { fileOf });
          const verdicts = valuesFromVerdicts(reads);
          accounts = { ...users, userOf: renewedKeys(users.userOf, verdicts.renewed) };
          valuesFrom = { ...reads, read: renewedKeys(reads.read, verdicts.renewed) };
          return verdicts;
        },
      },
      {
        name: "maintenance windows",
        judge: (alive) => ({ failed: windowHolds(alive, outside, previous).map(([pair, error]) => ({ pair, error, held: "schedule" })) }),
      },
      {
        // An unchanged deployment is taken from the state as deployed; the others render, Helm revisions counted as the agent's releases do.
        name: "render",
        judge: async (planned) => {
          unchanged = unchangedDeployments(planned, previous?.deploymentIds);
          const fromState = deployedAsBefore(planned, unchanged, previous, fleet.bundles, facts.deployed);
          lastRevisions = new Map(
            planned.flatMap((e): [PlanEntry, number][] => {
              const key = deploymentKey(e);
              return previous?.deploymentIds?.[key] !== undefined ? [[e, previous.revisions?.[key] ?? 1]] : [];
            }),
          );
          const render = await renderWithLookups(
            planned.filter((e) => !fromState.has(e)),
            fleet,
            known,
            accounts,
            facts,
            lastRevisions,
            namespacesBefore,
            valuesFrom.read,
            leftOut,
          );
          rendered = new Map([...render.rendered, ...fromState]);
          return render.verdicts;
        },
      },
      {
        name: "rendered objects",
        judge: async (alive) => {
          const contested = contestedObjects(new Map(alive.map((e) => [e, rendered.get(e)!])));
          if (!renderMode) await gatherOwners(ownersUnknown(contested, prior), pinned.clusters, facts, known, leftOut);
          const owners = knownOwners(contested, prior, renderMode ? undefined : known);
          return { failed: checkRendered(alive, rendered, { owners, prior, namespacesBefore, stack: pinned, bundles: fleet.bundles, secrets }) };
        },
      },
      {
        // takeOwnership reads and judges only the deployments still alive.
        name: "takeOwnership",
        judge: async (alive) => {
          if (renderMode) return { failed: [] };
          const adoption = {
            entries: alive,
            rendered,
            bundles: fleet.bundles,
            unchanged,
            skip: leftOut,
            adopting: new Set(pinned.gitRepos.filter((r) => r.takeOwnership).map((r) => r.name)),
          };
          await gatherExisting(ownershipQueries(adoption), pinned.clusters, facts, known);
          return { failed: failuresOf((fail) => checkTakeOwnership(adoption, known, fail)) };
        },
      },
      { name: "dependency order", judge: (alive) => ({ failed: failuresOf((fail) => inDependencyOrder(alive, fail)) }) },
      { name: "namespaces", judge: (alive) => ({ failed: failuresOf((fail) => namespacesOf(alive, fail)) }) },
      {
        // What the failed deployments keep, and what must not take it from them; which clusters a rollout holds back.
        name: "holds and rollout gates",
        untilSettled: true,
        judge: (alive) => {
          held = heldDeployments(failures, fleet, readNow, previous, facts.deployed);
          rollouts = rolloutGates(alive, fleet.bundles, fleet.targeting.partitions, failures);
          const staged = options.partition === undefined ? [] : partitionHolds(rollouts.byBundle, alive, unchanged, options.partition);
          return {
            failed: [
              ...alive.filter((e) => held.taken(e, rendered.get(e)!)).map((e) => ({ pair: e, error: held.takenError(e, rendered.get(e)!) })),
              ...rollouts.waiting.map(([pair, error]) => ({ pair, error })),
              ...rollouts.heldBack.map(([pair, error]) => ({ pair, error, held: "schedule" as const })),
              ...staged.map(([pair, error]) => ({ pair, error, held: "partition" as const })),
            ],
          };
        },
      },
    ],
    failures,
  );
  // A pair leaving a cluster outside its windows is kept, decided after the rollouts: it is in no partition, and nothing alive waits on it.
  const leaving = keptOutsideWindows(fleet.plan.entries, outside, previous, readNow);
  failures.record({ failed: leaving.map(([pair, error]) => ({ pair, error, held: "schedule" })) });
  if (leaving.length) held = heldDeployments(failures, fleet, readNow, previous, facts.deployed);
  // Removing deployments cannot make two bundles' namespace labels conflict: no conflict is left here.
  const namespaces = namespacesOf(entries, (_e, err) => {
    throw err;
  });
  for (const [cluster, list] of namespaces) {
    const owned = agentOwned(cluster);
    const names = new Set([...list.map((ns) => ns.metadata.name), ...(owned ? [owned] : [])]);
    list.push(...heldNamespaces(held.deployedOn(cluster), names));
    list.sort(byName);
    namespaces.set(cluster, withSecretNamespaces(cluster, list, secrets.get(cluster) ?? [], owned));
  }
  /** What the deployment says beyond its render: who it cannot act as, values not read, Secrets written in render mode, drift not corrected. */
  const notesOf = (e: PlanEntry, r: RenderedDeployment): string[] => {
    const unread = e.options.serviceAccount ? undefined : accounts.unread.get(e.cluster);
    const valuesNotRead = valuesFrom.notRead.get(e);
    return [
      ...(unread ? [`serviceAccount: ${unread}`] : []),
      ...(valuesNotRead ? [valuesNotRead] : []),
      ...(renderMode ? renderedSecretsNotes(pinned.renderDir!, e.cluster, r.objects, r.decrypted) : []),
      ...(e.options.correctDrift?.enabled && !options.correctsDrift
        ? [
            "correctDrift.enabled is honoured by `npm run up` and the operations' Automation API (it refreshes this bundle's objects first); a plain `pulumi up` corrects drift only with --refresh",
          ]
        : []),
    ];
  };
  await gatherKubeconfigs(
    held.accounts(),
    pinned.clusters,
    facts,
    known,
    (w, error) => new FleetError(`cannot act as ${w.user}, which a failed bundle deployment's objects were applied as: ${error}`, { cluster: w.cluster }),
  );
  const arrived = arrivedClusters(
    pinned.clusters.map((c) => c.name),
    previous,
  );

  const clusters = [...pinned.clusters].sort(byName).map((c): DesiredCluster =>
    withSetup(
      {
        name: c.name,
        provider: providerSettings(c.name, clusterReach(c, known.get(c.name)!), pinned.renderDir),
        accountProviders: [...known.get(c.name)!.kubeconfigs]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([user, kubeconfig]) => ({ user, provider: providerSettings(`${c.name}/as/${user}`, { ...c, kubeconfig, context: undefined }) })),
        namespaces: namespaces.get(c.name)!,
        ...(agents.get(c.name)!.agent ? { agent: agentObjects(c.name, agents.get(c.name)!.agent!) } : {}),
        arrived: arrived.has(c.name),
      },
      facts.legacySetups?.get(c.name),
      secrets.get(c.name),
    ),
  );
  const deployments = [
    ...inDependencyOrder(entries, undefined, rollouts.gates).map((e): DesiredDeployment => {
      const key = deploymentKey(e);
      const r = rendered.get(e)!;
      const nsNames = new Set(namespaces.get(e.cluster)!.map((ns) => ns.metadata.name));
      const objects = desiredObjects(e, r);
      const account = accounts.userOf.get(e);
      const legacy = facts.deployed?.get(key);
      return {
        key,
        ...formerName(previous, key),
        entry: e,
        gitRepo: e.gitRepo,
        cluster: e.cluster,
        commit: commitOf(e.gitRepo),
        dependsOn: [
          ...e.dependsOn.map((ref) => deploymentKey({ ...parseBundleRef(ref), cluster: e.cluster })),
          ...(rollouts.gates.get(e) ?? []).map(deploymentKey),
        ],
        ...(account ? { account } : {}),
        clusterNamespaces: clusterNamespacesOf(objects, nsNames),
        ...(secrets.get(e.cluster)?.some((s) => s.gitRepo === e.gitRepo) ? { afterOperatorSecrets: true as const } : {}),
        ...(objects.some((o) => o.manifest.metadata.namespace && o.manifest.metadata.namespace === agentOwned(e.cluster))
          ? { inAgentNamespace: true as const }
          : {}),
        spec: {
          ...pairSpecOf(e, objects, legacy?.legacy ? heldObjects(legacy) : undefined, r.secret),
          ...healthChecksInput(config.healthChecks),
          ...kubernetesEventsInput(config.notifications, e),
        },
        warnings: warningsOf(e, [...r.warnings, ...notesOf(e, r)]),
        objects,
        arrived: arrived.has(e.cluster),
        ...(r.secret ? { secret: true as const } : {}),
        record: deploymentRecord(
          e,
          commitOf(e.gitRepo),
          objects.length,
          unchanged.has(e) ? (lastRevisions.get(e) ?? 1) : (lastRevisions.get(e) ?? 0) + 1,
          unchanged.has(e) ? previous?.records?.[key]?.deployedAt : deployedNow,
        ),
      };
    }),
    ...held.deployments((cluster) => new Set(namespaces.get(cluster)?.map((ns) => ns.metadata.name)), arrived),
  ];
  const retiring = retiringDeployments(facts.deployed, new Set(deployments.map((d) => d.key)), pinned.clusters, previous, leftOut);
  // The plan as it deploys: what failed left out, each bundle's rollout; the planned value stays as handed to onPlanned.
  const final: FleetState = { ...fleet, plan: { ...fleet.plan, entries }, rollouts: rollouts.byBundle };
  const summary = summarize(final, deployedAgents(agents), held.records());
  const state: DesiredState = {
    fleet: final,
    clusters,
    deployments,
    retiring,
    summary,
    gitRepos: Object.entries(summary.gitRepos).map(([name, r]) => ({ name, ...r })),
    records: Object.fromEntries(deployments.map((d) => [d.key, d.record])),
    journal: journalObjects(deployments, leftOut),
    failures: failures.list(),
    warnings: [
      ...[...fleet.sources.values()].flatMap((s) => s.warnings.map((w) => `gitRepo ${s.gitRepo}: ${w}`)),
      ...(!facts.deployed && unchanged.size
        ? [
            `${unchanged.size} unchanged bundle deployment(s) were rendered again: this program was not given the state (a plain \`pulumi up\`), ` +
              "so a chart with random values, timestamps or lookup changes on every such up; `npm run up` and the operations deploy them exactly as last deployed, as Fleet does",
          ]
        : []),
      // A held deployment says so on its own component; one that keeps nothing is said here.
      ...failures
        .list()
        .filter((f) => !f.kept)
        .map((f) => (f.held ? describeFailure(f) : `failed: ${describeFailure(f)}`)),
      ...[...rollouts.byBundle.values()].flatMap((r) => r.warnings.map((w) => `bundle ${r.bundle}: ${w}`)),
      ...(renderMode ? clusters.flatMap((c) => setupSecretsNote(pinned.renderDir!, c.name, Object.values(c.setup?.secretObjects ?? {}))) : []),
    ],
  };
  options.onDesired?.(state);
  return state;
}

/** An environment split into shards is deployed by its shards' stacks, never as a whole. */
function checkNotSplit(config: StackConfig): void {
  if (!config.shards || config.shard) return;
  const environment = config.file.replace(/^.*Pulumi\.(.*)\.yaml$/, "$1");
  const stacks = config.shards.map((s) => shardStackName(environment, s.name)).join(", ");
  throw new FleetError(
    `this environment is split into shards, each deployed by its own stack (${stacks}); run those, or \`npm run up -- --stack ${environment}\` for all of them`,
    { file: config.file, field: "shards" },
  );
}

/** The deployment's preview lines: paused first, then what the bundle, the render and the checks said. */
function warningsOf(e: PlanEntry, warnings: string[]): string[] {
  return [
    ...(e.paused ? [`bundle ${e.bundle} is paused on cluster ${e.cluster}: its objects stay exactly as deployed (no update, no delete)`] : []),
    ...warnings.map((w) => `bundle ${e.bundle} on cluster ${e.cluster}: ${w}`),
  ];
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
