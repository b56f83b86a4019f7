/**
 * fleet.yaml / GitRepo `serviceAccount`: Fleet's agent installs such a bundle impersonating
 * system:serviceaccount:<agent namespace>:<name>, so the downstream cluster's RBAC for that account
 * decides what the bundle may create, change and delete. Here each (cluster, account) pair gets its own
 * Kubernetes provider whose kubeconfig is the cluster's, reduced to the context in use and acting as the
 * account (`as:`): the stack's identity needs the `impersonate` verb on that service account.
 *
 * With no serviceAccount, Fleet impersonates `fleet-default` when that account exists in the agent
 * namespace, and otherwise uses the agent's own (cluster-admin) credentials; so does this, reading each
 * cluster's agent namespace once per preview or up (the stack's credentials here). The reads and the
 * impersonation are the caller's (core/desired/facts.ts).
 */
import { ClusterConfig } from "./config/stack";
import { FleetError } from "./errors";
import { ImpersonateJob, ImpersonateResult, OwnersJob, OwnersResult } from "./render/fleet-render";
import { PlanEntry } from "./targeting/plan";
import { clusterCredentials } from "./cluster-credentials";

/** Fleet's account for bundles that name none, used when it exists (helmdeployer DefaultServiceAccount). */
export const DEFAULT_SERVICE_ACCOUNT = "fleet-default";

export const serviceAccountUser = (namespace: string, name: string) => `system:serviceaccount:${namespace}:${name}`;

export interface AccountProviders {
  /** The user a deployment is applied as; absent: the stack's own credentials for the cluster. */
  userOf: Map<PlanEntry, string>;
  /** Per cluster, per user: the kubeconfig acting as that user. */
  kubeconfigs: Map<string, Map<string, string>>;
  /** Clusters whose fleet-default account could not be looked up: the warning for their bundles without an account. */
  unread: Map<string, string>;
}

/**
 * The impersonating kubeconfigs the plan needs. `agentNamespace` gives each cluster's agent namespace
 * (where Fleet looks the account up). In render mode nothing is applied, so nothing is impersonated.
 */
export async function accountProviders(
  entries: PlanEntry[], clusters: ClusterConfig[], agentNamespace: (cluster: string) => string, renderMode: boolean,
  live: { skip?: ReadonlySet<string>; read: (jobs: OwnersJob[]) => Promise<Record<string, OwnersResult>>; impersonate: (jobs: ImpersonateJob[]) => Promise<Record<string, ImpersonateResult>> },
): Promise<AccountProviders> {
  const userOf = new Map<PlanEntry, string>();
  const kubeconfigs = new Map<string, Map<string, string>>();
  const unread = new Map<string, string>();
  if (renderMode) return { userOf, kubeconfigs, unread };
  const withDefault = await clustersWithDefaultAccount(entries, clusters, agentNamespace, live.skip ?? new Set(), live.read, unread);
  const wanted = new Map<string, Set<string>>();
  for (const e of entries) {
    const account = e.options.serviceAccount || (withDefault.has(e.cluster) ? DEFAULT_SERVICE_ACCOUNT : undefined);
    if (!account) continue;
    const user = serviceAccountUser(agentNamespace(e.cluster), account);
    userOf.set(e, user);
    (wanted.get(e.cluster) ?? wanted.set(e.cluster, new Set()).get(e.cluster)!).add(user);
  }
  if (!wanted.size) return { userOf, kubeconfigs, unread };
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const jobs = [...wanted].flatMap(([cluster, users]) => [...users].sort().map((as) => ({
    id: `${cluster} ${as}`, ...clusterCredentials(byName.get(cluster)), as,
  })));
  const results = await live.impersonate(jobs);
  for (const job of jobs) {
    const r = results[job.id];
    const cluster = job.id.slice(0, job.id.indexOf(" "));
    if (!r?.kubeconfig) {
      const entry = entries.find((e) => e.cluster === cluster && userOf.get(e) === job.as)!;
      throw new FleetError(`cannot make a kubeconfig acting as ${job.as}: ${r?.error ?? "no answer"}`,
        { gitRepo: entry.gitRepo, bundle: entry.bundle, cluster, field: "serviceAccount" });
    }
    (kubeconfigs.get(cluster) ?? kubeconfigs.set(cluster, new Map()).get(cluster)!).set(job.as, r.kubeconfig);
  }
  return { userOf, kubeconfigs, unread };
}

/**
 * The clusters whose agent namespace holds `fleet-default`, among those with a bundle that names no
 * account (clusters the operation leaves out are not read). A cluster that cannot be read goes into
 * `unread`: its bundles are applied with the stack's credentials and each says so in a warning (an
 * unreachable cluster applies nothing anyway, and a PR preview must not stop on it).
 */
async function clustersWithDefaultAccount(entries: PlanEntry[], clusters: ClusterConfig[], agentNamespace: (cluster: string) => string,
  skip: ReadonlySet<string>, read: (jobs: OwnersJob[]) => Promise<Record<string, OwnersResult>>, unread: Map<string, string>): Promise<Set<string>> {
  const needed = new Set(entries.filter((e) => !e.options.serviceAccount && !skip.has(e.cluster)).map((e) => e.cluster));
  const jobs: OwnersJob[] = clusters.filter((c) => needed.has(c.name)).map((c) => ({
    id: c.name, ...clusterCredentials(c),
    objects: [{ apiVersion: "v1", kind: "ServiceAccount", namespace: agentNamespace(c.name), name: DEFAULT_SERVICE_ACCOUNT }],
  }));
  if (!jobs.length) return new Set();
  const results = await read(jobs);
  const out = new Set<string>();
  for (const job of jobs) {
    const r = results[job.id];
    if (!r || r.error) {
      unread.set(job.id, `could not tell whether ${job.objects[0].namespace}/${DEFAULT_SERVICE_ACCOUNT} exists (${r?.error ?? "no answer"}): ` +
        "applied with the stack's credentials, as when it does not (Fleet would apply as that account if it exists)");
      continue;
    }
    if (r.objects?.[0]) out.add(job.id);
  }
  return out;
}
