/**
 * The one migration of a stack's state: from the layout an earlier version left (layouts.ts) to the
 * current one, decided purely from the exported state and the stack's clusters. The act (export,
 * this, import, under the stack's lock) is automation/engine/migrate-state.ts; preview and status run
 * only this, in memory, to say what the next `up` moves.
 *
 * What moves: an earlier version's per-object resources (a bundle's objects, a cluster's agent and
 * namespaces) on a cluster the stack still configures are made state-only (stateOnly), so the engine
 * drops them from the state without deleting their objects or loading the Kubernetes provider, and the
 * pair's BundleDeployment and the cluster's ClusterSetup adopt the objects in the same update (the adoption is handed to the program as values: `setups`
 * here, and the deployments read by automation/engine/deployed-objects.ts). Nothing on a cluster is
 * written by the move, and if the update fails the state-only resources stay: the next `up` finishes it. Resources
 * on a cluster no longer configured go with their old provider, as that cluster's removal says.
 * BundleDeployments named without their GitRepo (layout 3) are renamed in the state, with the root's
 * output keys (renames.ts): after the migration nothing reads an old name. A preview, which imports
 * nothing, registers those pairs with their old names as aliases (`aliases`).
 */
import { DeployedObject } from "../desired/facts";
import { CURRENT_LAYOUT, layoutOf } from "./layouts";
import { clusterOfLegacyObject, KUBERNETES_PROVIDER_TYPE, legacyObjects, legacySetups } from "./legacy-resources";
import { layout3Renames, renamed } from "./renames";
import { ExportedState, MOVED_FROM_PROVIDER, nameOfUrn, StateResource } from "./state-shape";

export interface MigrationFacts {
  /** The clusters the stack configures now. */
  configured: ReadonlySet<string>;
}

export interface MigrationStep {
  /** Where the resources' objects go: their pair's BundleDeployment, or their cluster's ClusterSetup. */
  into: "pairs" | "setups";
  urns: string[];
}

export interface Migration {
  /** The layout the state was in, and the one it is in after the migration's update. */
  from: number;
  to: number;
  steps: MigrationStep[];
  /** Every URN the steps move: dropped by the engine's update from the state only. */
  moving: string[];
  /** Per configured cluster, the objects of its earlier agent and namespace resources, which its ClusterSetup adopts. */
  setups: Map<string, DeployedObject[]>;
  /** Layout 3's BundleDeployments renamed in the state: old URN -> new URN (renames.ts). */
  renames: Map<string, string>;
  /**
   * The name the state still holds each renamed pair under, by its key now: the alias the program gives
   * it while the state is not migrated (a preview, status); empty once `up` imported the migrated state.
   */
  aliases: Record<string, string>;
  /** The state with the moving resources made state-only (stateOnly): the same object when nothing changes. */
  state: ExportedState;
  /** Whether `state` differs from the state given: only then does `up` import it. */
  changed: boolean;
}

export function planMigration(exported: ExportedState, facts: MigrationFacts): Migration {
  const resources: StateResource[] = exported.deployment?.resources ?? [];
  const from = layoutOf(resources);
  const pairs = legacyObjects(resources)
    .filter((o) => facts.configured.has(clusterOfLegacyObject(o)))
    .map((o) => o.urn);
  const setups = new Map<string, DeployedObject[]>();
  const setupUrns: string[] = [];
  for (const s of legacySetups(resources)) {
    if (!facts.configured.has(s.cluster)) continue;
    setups.set(s.cluster, [...(setups.get(s.cluster) ?? []), s.object]);
    setupUrns.push(s.urn);
  }
  const steps: MigrationStep[] = [
    ...(pairs.length ? [{ into: "pairs" as const, urns: pairs }] : []),
    ...(setupUrns.length ? [{ into: "setups" as const, urns: setupUrns }] : []),
  ];
  const moving = steps.flatMap((s) => s.urns);
  const renames = layout3Renames(resources);
  const state = withRenames(stateOnly(exported, new Set(moving)), renames);
  const aliases = Object.fromEntries([...renames].map(([from, to]) => [nameOfUrn(to), nameOfUrn(from)]));
  return { from, to: CURRENT_LAYOUT, steps, moving, setups, renames, aliases, state, changed: state !== exported };
}

/** The state with layout 3's names moved to the current ones (renames.ts): the same object when nothing changes. */
function withRenames(exported: ExportedState, renames: ReadonlyMap<string, string>): ExportedState {
  const resources = exported.deployment?.resources ?? [];
  const next = renamed(resources, renames);
  return next === resources ? exported : { ...exported, deployment: { ...exported.deployment, resources: next } };
}

/**
 * The state with the moving resources made state-only (no longer custom, no id or provider: the
 * engine drops a component from the state without asking any provider) and the Kubernetes provider
 * instances no custom resource uses any more removed, with the references of the components that
 * named them (the Chart and Directory components, whose delete asks no provider either). A state that
 * then holds no Kubernetes provider needs no Kubernetes provider plugin. The same object when nothing changes.
 */
function stateOnly(exported: ExportedState, urns: ReadonlySet<string>): ExportedState {
  const resources = exported.deployment?.resources ?? [];
  const moved = resources.map((r) => (urns.has(r.urn) && (r.custom || r.id !== undefined || r.provider !== undefined) ? movedResource(r) : r));
  const used = new Set(moved.filter((r) => r.custom && r.provider).map((r) => providerUrn(r.provider!)));
  const dropped = new Set(moved.filter((r) => r.type === KUBERNETES_PROVIDER_TYPE && !used.has(r.urn)).map((r) => r.urn));
  if (!dropped.size && moved.every((r, i) => r === resources[i])) return exported;
  const kept = moved
    .filter((r) => !dropped.has(r.urn))
    .map((r) => {
      if (!r.provider || !dropped.has(providerUrn(r.provider))) return r;
      const { provider: _dropped, ...rest } = r;
      return rest;
    });
  return { ...exported, deployment: { ...exported.deployment, resources: kept } };
}

/** A provider reference is "<provider's URN>::<its id>". */
const providerUrn = (ref: string) => ref.slice(0, ref.lastIndexOf("::"));

/**
 * A resource left in the state only, its inputs (the object it held, which its new owner adopts), its
 * retainOnDelete (the retain rule it was registered with, read by legacy-resources.ts) and its provider
 * reference (as an output: providerOf) kept: a component's delete touches no cluster whatever they say.
 */
function movedResource(r: StateResource): StateResource {
  const { id: _id, provider, ...rest } = r;
  // The provider's name says the user the object was applied as ("<cluster>/as/<user>"): kept for the pair that adopts it.
  return { ...rest, custom: false, ...(provider ? { outputs: { ...r.outputs, [MOVED_FROM_PROVIDER]: provider } } : {}) };
}

/** What the migration's `up` does besides what the preview lists (undefined: nothing moves). */
export function migrationNote(m: Pick<Migration, "steps">): string | undefined {
  const count = (into: MigrationStep["into"]) => m.steps.find((s) => s.into === into)?.urns.length ?? 0;
  const [bundleObjects, setups] = [count("pairs"), count("setups")];
  if (!bundleObjects && !setups) return undefined;
  const moves = [
    ...(bundleObjects ? [`those ${bundleObjects} resource(s) into one BundleDeployment per bundle and cluster`] : []),
    ...(setups ? [`the ${setups} resource(s) of the clusters' agents and namespaces into one ClusterSetup per cluster`] : []),
  ];
  return (
    `this stack was deployed by an earlier version, one engine resource per Kubernetes object: the next \`up\` moves ${moves.join(", and ")}, ` +
    "in the state only: no object is created, changed or deleted for it, and the preview lists only what changes besides"
  );
}
