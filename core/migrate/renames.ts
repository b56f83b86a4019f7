/**
 * Layout 3's names, moved to the current ones in the state itself: its BundleDeployments were named
 * "<cluster>/<bundle>" (before bundles were keyed by their GitRepo, issue 41), and so were the keys of
 * the root stack's `deployments` and `deploymentStates` outputs. The migration renames both to
 * "<cluster>/<gitRepo>/<bundle>" (core/model/keys.ts deploymentKey), so nothing after it reads an old
 * name. The GitRepo is the one the pair's ownership labels name (its delete policy's ownerLabels), or
 * its output record's; a pair that names neither keeps its name (nothing is guessed: the engine then
 * replaces it as any pair of an unknown GitRepo).
 */
import { REPO_NAME_LABEL } from "../targeting/depends-on";
import { BUNDLE_DEPLOYMENT_TYPE } from "../desired/types";
import { DEPLOYMENT_STATES_OUTPUT, DEPLOYMENTS_OUTPUT } from "../desired/previous";
import { deploymentKey, clusterOfKey } from "../model/keys";
import { nameOfUrn, StateResource } from "./state-shape";

/** A key of layout 3 or before: "<cluster>/<bundle>" (names hold no "/"). */
export const isUnqualifiedKey = (key: string) => key.indexOf("/") === key.lastIndexOf("/");

/** An unqualified key with its GitRepo: the deployment's key now. */
export function qualifiedKey(unqualified: string, gitRepo: string): string {
  const cluster = clusterOfKey(unqualified);
  return deploymentKey({ cluster, gitRepo, bundle: unqualified.slice(cluster.length + 1) });
}

/** A secret value as the state holds it: its keys cannot be read without decrypting, so it is left as it is. */
const isSecretEnvelope = (v: unknown) => !!v && typeof v === "object" && "4dabf18193072939515e22adb298388d" in v;

const record = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === "object" && !isSecretEnvelope(v) ? (v as Record<string, unknown>) : undefined;

/** The GitRepo a layout-3 BundleDeployment's inputs name (its delete policy's ownership labels). */
function gitRepoOfInputs(r: StateResource): string | undefined {
  const labels = record(record(record(r.inputs)?.deletePolicy)?.ownerLabels);
  const gitRepo = labels?.[REPO_NAME_LABEL];
  return typeof gitRepo === "string" ? gitRepo : undefined;
}

const isStackRoot = (r: StateResource) => r.type === "pulumi:pulumi:Stack";

/**
 * Old URN -> new URN of each layout-3 BundleDeployment (custom, named by an unqualified key) whose
 * GitRepo is known and whose new URN is free. An earlier version's BundleDeployment components (layouts
 * 1 and 2, not custom) are not renamed: the pair that adopts their objects is registered under the new
 * name, and they leave the state.
 */
export function layout3Renames(resources: StateResource[]): Map<string, string> {
  const root = resources.find(isStackRoot);
  const records = record(record(root?.outputs)?.[DEPLOYMENTS_OUTPUT]) ?? {};
  const taken = new Set(resources.map((r) => r.urn));
  const out = new Map<string, string>();
  for (const r of resources) {
    const name = nameOfUrn(r.urn);
    if (r.type !== BUNDLE_DEPLOYMENT_TYPE || !r.custom || !isUnqualifiedKey(name)) continue;
    const fromRecord = record(records[name])?.gitRepo;
    const gitRepo = gitRepoOfInputs(r) ?? (typeof fromRecord === "string" ? fromRecord : undefined);
    if (!gitRepo) continue;
    const urn = `${r.urn.slice(0, r.urn.length - name.length)}${qualifiedKey(name, gitRepo)}`;
    if (!taken.has(urn)) out.set(r.urn, urn);
  }
  return out;
}

/**
 * The resources with each renamed URN changed wherever the state names it: the resource itself, and
 * every parent, dependency, property dependency, deletedWith and replaceWith naming it (what `pulumi
 * state rename` changes: test/e2e/migrate-rename-engine.test.ts compares the two; a BundleDeployment is
 * no provider, so no provider reference names it, and a child's URN holds its parent's type, not its name). The root's output
 * keys are qualified too. The same array when nothing is renamed.
 */
export function renamed(resources: StateResource[], renames: ReadonlyMap<string, string>): StateResource[] {
  const outputKeys = outputKeysToQualify(resources, renames);
  if (!renames.size && !outputKeys) return resources;
  const to = (urn: string) => renames.get(urn) ?? urn;
  return resources.map((r) => {
    const x = { ...r } as StateResource & Record<string, unknown>;
    x.urn = to(r.urn);
    if (r.parent) x.parent = to(r.parent);
    if (Array.isArray(x.dependencies)) x.dependencies = (x.dependencies as string[]).map(to);
    if (record(x.propertyDependencies))
      x.propertyDependencies = Object.fromEntries(
        Object.entries(x.propertyDependencies as Record<string, string[]>).map(([k, urns]) => [k, (urns ?? []).map(to)]),
      );
    if (typeof x.deletedWith === "string") x.deletedWith = to(x.deletedWith);
    if (Array.isArray(x.replaceWith)) x.replaceWith = (x.replaceWith as string[]).map(to);
    if (isStackRoot(r) && outputKeys) x.outputs = outputKeys;
    return x;
  });
}

/**
 * The root's outputs with the `deployments` and `deploymentStates` keys qualified: by the record's
 * GitRepo, else by the renamed BundleDeployment's. A key whose GitRepo neither tells is dropped, as the
 * versions before this one dropped it when reading (nothing can be matched to it; the engine still holds
 * its resource). Undefined when no key changes.
 */
function outputKeysToQualify(resources: StateResource[], renames: ReadonlyMap<string, string>): Record<string, unknown> | undefined {
  const outputs = record(resources.find(isStackRoot)?.outputs);
  const records = record(outputs?.[DEPLOYMENTS_OUTPUT]);
  const states = record(outputs?.[DEPLOYMENT_STATES_OUTPUT]);
  if (!outputs || ![records, states].some((m) => m && Object.keys(m).some(isUnqualifiedKey))) return undefined;
  const byOldName = new Map([...renames].map(([from, to]) => [nameOfUrn(from), nameOfUrn(to)]));
  const keyNow = (key: string): string | undefined => {
    if (!isUnqualifiedKey(key)) return key;
    const gitRepo = record(records?.[key])?.gitRepo;
    return typeof gitRepo === "string" ? qualifiedKey(key, gitRepo) : byOldName.get(key);
  };
  const qualified = (m: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(m).flatMap(([key, v]): [string, unknown][] => (keyNow(key) ? [[keyNow(key)!, v]] : [])));
  return {
    ...outputs,
    ...(records ? { [DEPLOYMENTS_OUTPUT]: qualified(records) } : {}),
    ...(states ? { [DEPLOYMENT_STATES_OUTPUT]: qualified(states) } : {}),
  };
}
