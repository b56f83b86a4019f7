/**
 * What the current layout's resources adopt of an earlier version's, as one plain value the program
 * receives (components/program.ts ProgramInputs.adoptions): the desired state (core/desired) is
 * computed without it, and the components add it to what they register.
 */
import { DeployedObject } from "../desired/facts";
import { PairObject, pairObjectKey } from "../model/pair";

export interface Adoptions {
  /**
   * Per cluster, what an earlier version's per-object resources created for it (its agent's objects,
   * its namespaces), taken over by its ClusterSetup when that is created, so nothing on the cluster is
   * written or deleted by the move; by object key, with their retain rules.
   */
  setups: Record<string, Record<string, PairObject>>;
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
