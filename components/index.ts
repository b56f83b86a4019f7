/**
 * From stack configuration to registered resources. Order matters for safety: every source is read
 * and the whole plan built and checked before the first resource is registered, so a read error or a
 * fleet about to be emptied stops the program while the engine still has nothing to delete.
 */
import { StackConfig } from "../core/config/stack";
import { FleetState, planFleet } from "../core/pipeline";
import { Fleet, prepareFleet } from "./fleet";
import { checkNothingEmptied, pinPausedRepos, PreviousDeployment, readPreviousDeployment } from "./previous";
import { checkTakeOwnership } from "../core/ownership";

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
}

export async function deployFleet(config: StackConfig, options: DeployOptions = {}): Promise<Fleet> {
  const started = performance.now();
  const previous = options.previous === undefined ? await readPreviousDeployment() : options.previous ?? undefined;
  const pinned: StackConfig = { ...config, gitRepos: pinPausedRepos(config.gitRepos, previous) };
  const state = await planFleet(pinned, options.cacheRoot);
  checkNothingEmptied(pinned.gitRepos, state.plan, previous);
  options.onPlanned?.(state);
  const leftOut = options.leftOut?.();
  const prepared = prepareFleet(state, previous?.deploymentIds, leftOut);
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
  const planned = performance.now();
  const fleet = new Fleet("fleet", state, prepared);
  options.onProgramTimings?.({ planMs: planned - started, registerMs: performance.now() - planned });
  return fleet;
}
