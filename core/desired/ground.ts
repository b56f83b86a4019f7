/**
 * What every step of the desired state reads (state.ts): the plan built and checked from the stack's
 * config and the last outputs, before anything is rendered, and what follows from the config alone
 * (agents, the operator's Secrets, maintenance windows). Everything here can stop the program while
 * the engine still has nothing to delete.
 */
import { ClusterAgent, resolveClusterAgents } from "../agent/effective";
import { ClusterPause, StackConfig } from "../config/stack";
import { pausedClusters } from "./holds";
import { shardStackName } from "../config/shards";
import { FleetError } from "../base/errors";
import { FleetState, planFleet } from "../plan/pipeline";
import { withRenderBudget } from "../renderer/render-budget";
import { clustersOutsideWindowsAt } from "../targeting/schedule-windows";
import { PlanEntry } from "../targeting/plan";
import { Facts } from "./facts";
import { FailedDeployments } from "../plan/failures";
import { heldRecords } from "./held";
import { bundleRef } from "../model/keys";
import { operatorSecrets } from "./operator-secrets";
import { DesiredOptions } from "./options";
import { namespaceOwners, Prior } from "./owners";
import { checkNothingEmptied, pinCommits, PreviousDeployment, withoutClusters } from "./previous";

export interface Ground {
  /** The stack's config as given (its health checks and notifications reach every pair's spec). */
  config: StackConfig;
  /** The config with each GitRepo's commit pinned (pinCommits). */
  pinned: StackConfig;
  facts: Facts;
  options: DesiredOptions;
  previous: PreviousDeployment | undefined;
  /** The checked plan, as handed to onPlanned. */
  fleet: FleetState;
  failures: FailedDeployments;
  /** Bundles read in this run (bundleRef). */
  readNow: Set<string>;
  /** Clusters the operation leaves out: nothing of them is read. */
  leftOut: ReadonlySet<string> | undefined;
  renderMode: boolean;
  /** This update's time, as a new record's deployedAt. */
  deployedNow: string;
  agents: Map<string, ClusterAgent>;
  /** The operator's Secrets per cluster (gitRepos[].downstreamResources): from the stack alone, whatever content says. */
  secrets: ReturnType<typeof operatorSecrets>;
  namespacesBefore: Map<string, Set<string>>;
  prior: Prior;
  /** Clusters outside their maintenance windows now: they keep what they have (holds.ts). */
  outside: Awaited<ReturnType<typeof clustersOutsideWindowsAt>>;
  /** Clusters paused (stack `clusters[].paused`): everything on them stays exactly as it is (holds.ts). */
  paused: Map<string, ClusterPause>;
  fileOf: (e: PlanEntry) => string | undefined;
  commitOf: (gitRepo: string) => string;
  agentNamespace: (cluster: string) => string;
  /** The namespace a cluster's deployed agent creates; with the agent switched off the cluster creates it for bundles that need it. */
  agentOwned: (cluster: string) => string | undefined;
}

export async function groundOf(config: StackConfig, given: Facts, options: DesiredOptions): Promise<Ground> {
  // Every render batch of this state spends from one budget per GitRepo (render-budget.ts).
  const facts: Facts = { ...given, render: withRenderBudget(given.render) };
  checkNotSplit(config);
  const previous = withoutClusters(await facts.previous(), config.shard?.elsewhere);
  const pinned: StackConfig = { ...config, gitRepos: pinCommits(config.gitRepos, options.commits, previous) };
  const deployedNow = (options.now ?? new Date()).toISOString();
  const fleet = await planFleet(pinned, options.cacheRoot, facts.render);
  const readNow = new Set(fleet.bundles.map((b) => bundleRef({ gitRepo: b.gitRepo, bundle: b.name })));
  // A GitRepo whose failed deployments keep what they deployed is not emptied, whatever else it matches.
  const holding = new Set([...heldRecords(fleet.failures, fleet.unread, readNow, previous, fleet.unreadGitRepos).values()].map((r) => r.gitRepo));
  for (const gitRepo of fleet.unreadGitRepos.keys()) holding.add(gitRepo);
  checkNothingEmptied(
    pinned.gitRepos.filter((r) => !holding.has(r.name)),
    fleet.plan,
    previous,
    config.shard && fleet.targeting.deploysElsewhere,
  );
  options.onPlanned?.(fleet);
  const agents = resolveClusterAgents(fleet.config);
  const agentNamespace = (cluster: string) => agents.get(cluster)!.namespace;
  const agentOwned = (cluster: string) => (agents.get(cluster)!.agent ? agentNamespace(cluster) : undefined);
  return {
    config,
    pinned,
    facts,
    options,
    previous,
    fleet,
    failures: fleet.failures,
    readNow,
    leftOut: options.leftOut,
    renderMode: !!pinned.renderDir,
    deployedNow,
    agents,
    secrets: operatorSecrets(pinned, fleet.targeting.gitRepos, agentOwned),
    namespacesBefore: namespaceOwners({ records: previous?.records }),
    prior: { deployed: facts.deployed, records: previous?.records },
    outside: await clustersOutsideWindowsAt(pinned, options.now ?? new Date(), fleet.targeting.schedules),
    paused: pausedClusters(pinned.clusters),
    fileOf: (e) => fleet.bundles.find((b) => b.gitRepo === e.gitRepo && b.name === e.bundle)?.fleetYaml,
    commitOf: (gitRepo) => fleet.sources.get(gitRepo)!.commit,
    agentNamespace,
    agentOwned,
  };
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
