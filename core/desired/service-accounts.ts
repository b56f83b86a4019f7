/**
 * fleet.yaml / GitRepo `serviceAccount`: Fleet's agent installs such a bundle impersonating
 * system:serviceaccount:<agent namespace>:<name>, so the downstream cluster's RBAC for that account
 * decides what the bundle may create, change and delete. Here each (cluster, account) pair gets its own
 * Kubernetes provider whose kubeconfig is the cluster's, reduced to the context in use and acting as the
 * account (`as:`): the stack's identity needs the `impersonate` verb on that service account.
 *
 * With no serviceAccount, Fleet impersonates `fleet-default` when that account exists in the agent
 * namespace, and otherwise uses the agent's own (cluster-admin) credentials; so does this, reading each
 * cluster's agent namespace once per preview or up (the stack's credentials here). What is read and the
 * impersonating kubeconfigs are gathered (core/desired/gather.ts); here is only who applies what.
 */
import { FleetError } from "../base/errors";
import { PlanEntry } from "../targeting/plan";
import { ClusterFacts } from "./cluster-facts";

/** Fleet's account for bundles that name none, used when it exists (helmdeployer DefaultServiceAccount). */
export const DEFAULT_SERVICE_ACCOUNT = "fleet-default";

export const serviceAccountUser = (namespace: string, name: string) => `system:serviceaccount:${namespace}:${name}`;

export interface AccountUsers {
  /** The user a deployment is applied as; absent: the stack's own credentials for the cluster. */
  userOf: Map<PlanEntry, string>;
  /** Clusters whose fleet-default account could not be looked up: the warning for their bundles without an account. */
  unread: Map<string, string>;
}

/**
 * The user each deployment is applied as: its serviceAccount, else `fleet-default` where the cluster's
 * agent namespace holds it (gathered: ClusterFacts.defaultAccount). `agentNamespace` gives each
 * cluster's agent namespace. In render mode nothing is applied, so nothing is impersonated.
 */
export function accountUsers(
  entries: PlanEntry[],
  agentNamespace: (cluster: string) => string,
  renderMode: boolean,
  known: ReadonlyMap<string, ClusterFacts>,
): AccountUsers {
  const userOf = new Map<PlanEntry, string>();
  const unread = new Map<string, string>();
  if (renderMode) return { userOf, unread };
  for (const [cluster, f] of known) if (f.defaultAccount && f.defaultAccount !== true) unread.set(cluster, f.defaultAccount.unread);
  for (const e of entries) {
    const account = e.options.serviceAccount || (known.get(e.cluster)?.defaultAccount === true ? DEFAULT_SERVICE_ACCOUNT : undefined);
    if (account) userOf.set(e, serviceAccountUser(agentNamespace(e.cluster), account));
  }
  return { userOf, unread };
}

/** The clusters whose agent namespace is read for `fleet-default`: those with a bundle that names no account (clusters left out are not read). */
export function defaultAccountClusters(entries: PlanEntry[], renderMode: boolean, skip?: ReadonlySet<string>): Set<string> {
  return renderMode ? new Set() : new Set(entries.filter((e) => !e.options.serviceAccount && !skip?.has(e.cluster)).map((e) => e.cluster));
}

/** Per cluster, the users its deployments are applied as, in the order their kubeconfigs are made (sorted per cluster). */
export function wantedUsers(entries: PlanEntry[], users: AccountUsers): { cluster: string; user: string; entry: PlanEntry }[] {
  const wanted = new Map<string, Map<string, PlanEntry>>();
  for (const e of entries) {
    const user = users.userOf.get(e);
    if (!user) continue;
    const here = wanted.get(e.cluster) ?? wanted.set(e.cluster, new Map()).get(e.cluster)!;
    if (!here.has(user)) here.set(user, e);
  }
  return [...wanted].flatMap(([cluster, here]) => [...here.keys()].sort().map((user) => ({ cluster, user, entry: here.get(user)! })));
}

/** Why a deployment cannot be applied as its user: the cluster's kubeconfig cannot be made to act as it. */
export const impersonationRefused = (w: { cluster: string; user: string; entry: PlanEntry }, error: string) =>
  new FleetError(`cannot make a kubeconfig acting as ${w.user}: ${error}`, {
    gitRepo: w.entry.gitRepo,
    bundle: w.entry.bundle,
    cluster: w.cluster,
    field: "serviceAccount",
  });
