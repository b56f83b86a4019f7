/**
 * From stack configuration to registered resources. Order matters for safety: every source is read
 * and the whole plan built and checked before the first resource is registered, so a read error or a
 * fleet about to be emptied stops the program while the engine still has nothing to delete.
 */
import { StackConfig } from "../core/config/stack";
import { FleetState, pinCommits, planFleet } from "../core/pipeline";
import { buildPlan } from "../core/targeting/plan";
import { Fleet, prepareFleet } from "./fleet";
import { checkNothingEmptied, pinPausedRepos, PreviousDeployment, readPreviousDeployment, withoutClusters } from "./previous";
import { FleetError } from "../core/errors";
import { shardStackName } from "../core/config/shards";
import { checkTakeOwnership } from "../core/ownership";
import { identityOf, JournalEntry, journalObjects, settleEarlier } from "../core/journal";
import { runRenderer } from "../core/render/fleet-render";

export { Fleet, FleetSummary, DeploymentRecord, deploymentRecord, FLEET_TYPE } from "./fleet";
export { Cluster, CLUSTER_TYPE } from "./cluster";
export { GitRepo, GIT_REPO_TYPE } from "./git-repo";
export { BundleDeployment, BUNDLE_DEPLOYMENT_TYPE, deploymentName } from "./bundle-deployment";
export { PreviousDeployment, RECORD_OUTPUT } from "./previous";

export interface DeployOptions {
  /** Git cache directory (default ~/.cache/pulumi-fleet). */
  cacheRoot?: string;
  /** What the last update deployed; read from the stack's own outputs when not given. */
  previous?: PreviousDeployment | null;
  /** Called with the checked plan before any registration: the operations read it to explain a preview. */
  onPlanned?: (state: FleetState) => void;
  /** Wall times of this program's own work (benchmarks): planning, and registering every resource. */
  onProgramTimings?: (t: { planMs: number; registerMs: number }) => void;
  /** Set by automation/operations.ts, whose `up` refreshes correctDrift bundles first; a plain `pulumi up` warns instead. */
  correctsDrift?: boolean;
  /** Clusters the operation leaves out (unreachable, excluded from the engine): their objects' owners are not read. */
  leftOut?: () => ReadonlySet<string>;
  /** The crash journal (core/journal.ts), given by the operations' `up` when the state is written once at the end. */
  journal?: JournalHooks;
  /** The shard runner's fingerprint of this update's inputs (automation/shard-inputs.ts), kept as the output `inputs`. */
  inputs?: string;
  /** The commit to deploy per GitRepo, as the shard runner resolved it for every shard (a paused GitRepo keeps its own). */
  commits?: Record<string, string>;
}

export interface JournalHooks {
  list(): Promise<{ key: string; entry: JournalEntry }[]>;
  add(entry: JournalEntry): Promise<string>;
  remove(keys: string[]): Promise<void>;
  /** identityOf every Kubernetes object in the stack's state (read only when the journal has entries). */
  stateIdentities(): Promise<Set<string>>;
  /** Who writes this update's entry. */
  writer: string;
  /** Told the key of this update's entry (removed once the engine has written the state). */
  onRecorded(key: string): void;
  /** Where the sweep's reports go (the operations' warnings, shown even with --quiet). */
  warn(message: string): void;
}

export async function deployFleet(config: StackConfig, options: DeployOptions = {}): Promise<Fleet> {
  const started = performance.now();
  if (config.shards && !config.shard) {
    const stacks = config.shards.map((s) => shardStackName(environmentOf(config.file), s.name)).join(", ");
    throw new FleetError(`this environment is split into shards, each deployed by its own stack (${stacks}); run those, or \`npm run up -- --stack ${environmentOf(config.file)}\` for all of them`, { file: config.file, field: "shards" });
  }
  const read = options.previous === undefined ? await readPreviousDeployment() : options.previous ?? undefined;
  const previous = withoutClusters(read, config.shard?.elsewhere);
  const pinned: StackConfig = { ...config, gitRepos: pinPausedRepos(pinCommits(config.gitRepos, options.commits), previous) };
  const state = await planFleet(pinned, options.cacheRoot);
  const shard = config.shard;
  checkNothingEmptied(pinned.gitRepos, state.plan, previous,
    shard && (() => buildPlan(state.bundles, [...state.config.clusters, ...shard.otherClusters], state.config.clusterGroups)));
  options.onPlanned?.(state);
  const leftOut = options.leftOut?.();
  const prepared = prepareFleet(state, previous, leftOut);
  if (!options.correctsDrift) {
    for (const e of state.plan.entries) {
      if (e.options.correctDrift?.enabled) {
        prepared.rendered.get(e)!.warnings.push("correctDrift.enabled is honoured by `npm run up` and the operations' Automation API (it refreshes this bundle's objects first); a plain `pulumi up` corrects drift only with --refresh");
      }
    }
  }
  if (!pinned.renderDir) {
    checkTakeOwnership({
      entries: state.plan.entries, rendered: prepared.rendered, bundles: state.bundles, clusters: pinned.clusters,
      unchanged: prepared.unchanged, skip: leftOut,
    });
  }
  if (options.journal && !pinned.renderDir) await sweepAndRecord(options.journal, state, prepared, leftOut);
  const planned = performance.now();
  const fleet = new Fleet("fleet", state, prepared);
  options.onProgramTimings?.({ planMs: planned - started, registerMs: performance.now() - planned });
  return fleet;
}

/**
 * Before anything is registered (the engine holds the stack's lock): earlier updates' journal entries
 * are swept (objects an update that died created and nothing owns now are deleted, core/journal.ts),
 * then this update records what it may create.
 */
async function sweepAndRecord(journal: JournalHooks, state: FleetState, prepared: ReturnType<typeof prepareFleet>, leftOut?: ReadonlySet<string>): Promise<void> {
  const earlier = await journal.list();
  if (earlier.length) {
    const planned = new Set<string>();
    for (const [e, r] of prepared.rendered) {
      for (const o of r.objects) planned.add(identityOf({ cluster: e.cluster, apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }));
    }
    // The namespaces the Cluster components create are planned too (journalObjects never sweeps a Namespace anyway).
    for (const [cluster, namespaces] of prepared.namespaces) {
      for (const ns of namespaces) planned.add(identityOf({ cluster, apiVersion: "v1", kind: "Namespace", name: ns.name }));
    }
    const configured = new Set(state.config.clusters.map((c) => c.name));
    await settleEarlier(earlier, journal, journal.writer, journal.warn, {
      inState: await journal.stateIdentities(), planned, readable: (c) => configured.has(c) && !leftOut?.has(c), clusters: state.config.clusters,
    }, (jobs) => runRenderer({ owners: jobs }).owners);
  }
  const objects = journalObjects(state.plan.entries, prepared.rendered, leftOut);
  if (objects.length) journal.onRecorded(await journal.add({ writer: journal.writer, objects }));
}

/** "stacks/Pulumi.prod.yaml" -> "prod". */
function environmentOf(file: string): string {
  return file.replace(/^.*Pulumi\.(.*)\.yaml$/, "$1");
}
