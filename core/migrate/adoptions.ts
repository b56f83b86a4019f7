/**
 * What the current layout's resources adopt of an earlier version's, as one plain value the program
 * receives (components/program.ts ProgramInputs.adoptions): the desired state (core/desired) is
 * computed without it, and the components add it to what they register.
 */
import { DeployedBundle, DeployedObject } from "../desired/facts";
import { heldObjects } from "../desired/held";
import { deletePolicyOf } from "../desired/delete-policy";
import { ownerLabels } from "../desired/ownership";
import { PairObject, pairObjectKey, pairObjects, PairSpec } from "../model/pair";
import { parseDeploymentKey } from "../model/keys";

export interface Adoptions {
  /**
   * Per cluster, what an earlier version's per-object resources created for it (its agent's objects,
   * its namespaces), taken over by its ClusterSetup when that is created, so nothing on the cluster is
   * written or deleted by the move; by object key, with their retain rules.
   */
  setups: Record<string, Record<string, PairObject>>;
  /**
   * Per deployment key, what an earlier version's per-object resources deployed for the pair: its
   * BundleDeployment adopts them when it is created (components/bundle-deployment.ts), whether it deploys
   * now or is held as it was (core/desired/held.ts), so nothing on the cluster is written by the move.
   */
  pairs: Record<string, Record<string, PairObject>>;
  /** An earlier version's deployments this update no longer deploys (retiringPairs), sorted by key. */
  retiring: RetiringDeployment[];
}

/** An earlier version's deployment that is no longer deployed: a BundleDeployment adopts its objects and prunes them. */
export interface RetiringDeployment {
  key: string;
  cluster: string;
  spec: PairSpec;
}

/** The pairs' adoptions: of each deployment an earlier version deployed as one resource per object (read as `earlier`), its objects with their retain rules. */
export function pairAdoptions(deployed: ReadonlyMap<string, DeployedBundle & { earlier?: true }>): Adoptions["pairs"] {
  return Object.fromEntries([...deployed].filter(([, d]) => d.earlier).map(([key, d]) => [key, pairObjects(heldObjects(d))]));
}

/**
 * The earlier version's deployments this update no longer deploys (not `registered`), on clusters the
 * stack still configures and does not leave out: the migration makes their per-object resources
 * state-only (so the engine drops them without deleting), so each gets a BundleDeployment that adopts
 * their objects and prunes them all, under their retain rules, in the same update (as the cluster's own
 * identity); the next update deletes the empty pair. A cluster no longer configured is not among them
 * (its objects go with its old provider, as its removal says).
 */
export function retiringPairs(
  pairs: Adoptions["pairs"],
  registered: ReadonlySet<string>,
  configured: ReadonlySet<string>,
  leftOut?: ReadonlySet<string>,
): RetiringDeployment[] {
  return Object.entries(pairs)
    .filter(([key]) => !registered.has(key) && configured.has(parseDeploymentKey(key).cluster) && !leftOut?.has(parseDeploymentKey(key).cluster))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, adopt]) => {
      const owner = parseDeploymentKey(key);
      return { key, cluster: owner.cluster, spec: { deploymentId: "", objects: {}, deletePolicy: deletePolicyOf(ownerLabels(owner)), adopt } };
    });
}

/** The ClusterSetups' adoptions, from each cluster's objects as the earlier version's resources held them. */
export function setupAdoptions(byCluster: ReadonlyMap<string, DeployedObject[]>): Adoptions["setups"] {
  const out: Adoptions["setups"] = {};
  for (const [cluster, objects] of byCluster) {
    if (!objects.length) continue;
    out[cluster] = Object.fromEntries(
      objects.map((o) => {
        const manifest = identityOnly(o.manifest as unknown as Record<string, unknown>);
        return [keyOf(manifest), { manifest, ...(o.retain ? { retain: o.retain } : {}) }];
      }),
    );
  }
  return out;
}

/** What a prune needs of an adopted Secret is its identity: its values are left out, so an adoption holds no secret. */
function identityOnly(manifest: Record<string, unknown>): Record<string, unknown> {
  if (manifest.kind !== "Secret") return manifest;
  const { data: _data, stringData: _stringData, ...rest } = manifest;
  return rest;
}

const keyOf = (m: Record<string, unknown>) => pairObjectKey(m as { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } });
