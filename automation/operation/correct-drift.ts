/**
 * up's first step for bundles with correctDrift.enabled: their objects refreshed, so the update re-applies what was edited by hand;
 * and the contents handed over to an update or preview that refreshes everything first (`--refresh`).
 */
import { BUNDLE_DEPLOYMENT_TYPE } from "../../core/desired/types";
import { parseDeploymentKey } from "../../core/model/keys";
import { nameOfUrn } from "../../core/migrate/state-shape";
import { clustersOutsideWindowsAt } from "../../core/targeting/schedule-windows";
import { stopSignal } from "../../core/base/stop-signal";
import { OperationOptions } from "./results";
import { Session, stackRootUrn } from "./session";
import { driftRefreshed } from "./plan";
import { pausedClusters } from "../../core/desired/holds";
import { contentFileOf, withContentHandedOver } from "../engine/content-handover";
import { contentsIn } from "../engine/deployed-objects";

/**
 * fleet.yaml correctDrift.enabled, mapped onto the engine: Fleet's agent re-applies a drifted object
 * of such a bundle on its own; here `up` first refreshes the objects of the deployments that have it
 * (as recorded by the last update), so the update that follows diffs them against the cluster and
 * re-applies what was edited by hand. Other bundles' drift is left alone, and reported by `status`,
 * until `up --refresh`. A cluster outside its maintenance window is not refreshed: Fleet's agent
 * clears drift correction off schedule, so a hand edit there stays until the window opens. Nor is a
 * paused cluster (its pairs are registered paused: nothing is corrected there). A redeploy
 * (`npm run redeploy`) refreshes every pair so, with the same exceptions.
 */
export async function correctDrift(s: Session, options: OperationOptions): Promise<void> {
  const drifting = driftRefreshed(s.before, options.refresh, options.run?.kind === "redeploy");
  if (!drifting.length) return;
  const config = await s.config();
  const outside = await clustersOutsideWindowsAt(config, options.deploy?.now ?? new Date());
  const leftAlone = new Set([...outside.keys(), ...pausedClusters(config.clusters).keys()]);
  const keys = new Set(drifting.map(([key]) => key).filter((key) => !leftAlone.has(parseDeploymentKey(key).cluster)));
  if (!keys.size) return;
  const excluded = new Set(s.excluded);
  // The state was read before the migration this up imported: a pair it renamed is refreshed by its name now.
  const targets = s.state.resources
    .filter((r) => r.type === BUNDLE_DEPLOYMENT_TYPE)
    .map((r) => s.renames.get(r.urn) ?? r.urn)
    .filter((urn) => keys.has(nameOfUrn(urn)) && !excluded.has(urn));
  if (!targets.length) return;
  const root = stackRootUrn(s.state);
  await s.locked(() =>
    withRefreshContents(s, true, () => s.stack.refresh({ signal: stopSignal, target: root ? [root, ...targets] : targets, onOutput: options.onOutput })),
  );
}

/**
 * An engine command that refreshes (`refresh`: a refresh, a status, an update or preview with `--refresh`)
 * with the state's contents handed over (content-handover.ts): a refresh runs no program, and an update or
 * preview refreshes every pair before any BundleContent's Check has given the provider its manifests, so
 * without them each pair's Read would compare fields or only check presence depending on whether its
 * content's Check happened to run first.
 */
export function withRefreshContents<T>(s: Pick<Session, "stack" | "state">, refresh: boolean | undefined, command: () => Promise<T>): Promise<T> {
  return refresh ? withContentHandedOver(contentFileOf(s.stack), contentsIn(s.state.resources), command) : command();
}
