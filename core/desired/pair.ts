/**
 * The inputs and outputs of the engine's unit, one BundleDeployment resource per (bundle, cluster)
 * pair, as the provider in tools/fleet-provider reads and writes them (spec.go). Plain values: core
 * builds them, components/ registers them, automation/ reads the outputs.
 */

/** Fleet's BundleDeployment states (fleet.cattle.io/v1alpha1 BundleState). */
export type PairState = "Ready" | "NotReady" | "WaitApplied" | "ErrApplied" | "Modified" | "OutOfSync";

/** One rendered object and why a prune would leave it on the cluster ("" or absent: it is deleted). */
export interface PairObject {
  manifest: Record<string, unknown>;
  retain?: string;
}

/** How the pair deletes: the one value its apply and its deletion obey. */
export interface DeletePolicy {
  propagation: "background" | "foreground" | "orphan";
  /** Only an object still carrying all of these labels is deleted. */
  ownerLabels: Record<string, string>;
}

export interface PairSpec {
  deploymentId: string;
  /** By pairObjectKey. */
  objects: Record<string, PairObject>;
  /** Readiness wait after applying, in seconds; 0 or absent: no wait. */
  timeoutSeconds?: number;
  force?: boolean;
  correctDrift?: boolean;
  paused?: boolean;
  /** Field managers whose fields the pair takes over (objects the per-object resources applied before). */
  adoptFieldManagers?: string[];
  /** Pairs this one waits for, with their last state (Ready lets it apply). */
  waitFor?: { name: string; state: string }[];
  deletePolicy: DeletePolicy;
}

export interface InventoryEntry {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  version: string;
  uid: string;
}

/** What the provider reports: Fleet's BundleDeployment status. */
export interface PairStatus {
  appliedDeploymentId: string;
  state: PairState;
  /** One line per object that is not ready or was refused, with the server's words. */
  messages: string[] | null;
  inventory: InventoryEntry[];
  revision: number;
  retained: string[] | null;
}

/** An object's key in a pair: group/kind/namespace/name (no version: moving versions keeps the object). */
export function pairObjectKey(obj: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }): string {
  const group = obj.apiVersion.includes("/") ? obj.apiVersion.slice(0, obj.apiVersion.lastIndexOf("/")) : "";
  return [group, obj.kind, obj.metadata.namespace ?? "", obj.metadata.name].join("/");
}
