/**
 * Gathering for `helm.valuesFrom` (core/render/values-from.ts decides): each deployment's referenced
 * ConfigMaps and Secrets are read on its cluster with the identity that deploys it (its serviceAccount's
 * impersonating kubeconfig, else the cluster's), through the read-only reader `lookup` uses: one job per
 * cluster and identity, a Get per object. A deployment that may not read, or whose read or values fail,
 * fails alone. Nothing is read in render mode (as `fleet test`) or on a cluster left out: each such
 * deployment says so.
 */
import { ClusterConfig } from "../config/stack";
import { GitRepoConfig } from "../config/git-repo";
import { FleetError } from "../errors";
import { stableJson } from "../hash";
import { LookupAnswer, LookupJob } from "../render/fleet-render";
import { lookupKeyOf, resolveValuesFrom, ResolvedValuesFrom, valuesFromProblem, valuesFromRefs, ValuesFromRef } from "../render/values-from";
import { AccountProviders } from "../service-accounts";
import { PlanEntry } from "../targeting/plan";
import { Facts } from "./facts";
import { foreignOwners } from "./owners";
import { accessOf } from "../cluster-access";

export interface ValuesFromReads {
  /** Per deployment whose valuesFrom was read: what it gives. */
  read: Map<PlanEntry, ResolvedValuesFrom>;
  /** Per deployment whose valuesFrom was not read (render mode, a cluster left out): its warning. */
  notRead: Map<PlanEntry, string>;
}

export async function readValuesFrom(entries: PlanEntry[], ctx: {
  gitRepos: GitRepoConfig[]; clusters: ClusterConfig[]; accounts: AccountProviders; lookup: Facts["lookup"];
  /** Namespaces other GitRepos' deployments were in first (owners.ts namespaceOwners). */
  namespacesBefore: ReadonlyMap<string, ReadonlySet<string>>;
  renderMode: boolean; leftOut?: ReadonlySet<string>; fileOf: (e: PlanEntry) => string | undefined;
  fail: (e: PlanEntry, err: FleetError) => void;
}): Promise<ValuesFromReads> {
  const out: ValuesFromReads = { read: new Map(), notRead: new Map() };
  const jobs = new Map<string, LookupJob & { entries: [PlanEntry, ValuesFromRef[]][]; asked: Set<string> }>();
  const clusters = new Map(ctx.clusters.map((c) => [c.name, c]));
  for (const e of entries) {
    const refs = valuesFromRefs(e.options, e.namespace);
    if (!refs.length) continue;
    if (ctx.renderMode || ctx.leftOut?.has(e.cluster)) {
      out.notRead.set(e, ctx.renderMode
        ? "helm.valuesFrom is not read in render mode (as `fleet test` does not read it): rendered without those values"
        : "helm.valuesFrom is not read: the cluster is left out of this operation");
      continue;
    }
    const where = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: ctx.fileOf(e) };
    const scope = {
      namespace: e.namespace, allowed: ctx.gitRepos.find((g) => g.name === e.gitRepo)?.allowedTargetNamespaces,
      foreign: (namespace: string) => foreignOwners(ctx.namespacesBefore, { cluster: e.cluster, gitRepo: e.gitRepo, namespace }),
    };
    const problem = valuesFromProblem(refs, scope, where);
    if (problem) {
      ctx.fail(e, problem);
      continue;
    }
    const user = ctx.accounts.userOf.get(e);
    const id = `${e.cluster} ${user ?? ""}`;
    const c = clusters.get(e.cluster)!;
    const job = jobs.get(id) ?? jobs.set(id, {
      id, keys: [], entries: [], asked: new Set<string>(),
      ...accessOf(c, user ? ctx.accounts.kubeconfigs.get(e.cluster)!.get(user)! : undefined),
    }).get(id)!;
    job.entries.push([e, refs]);
    for (const ref of refs) {
      const key = lookupKeyOf(ref);
      if (!job.asked.has(stableJson(key))) job.asked.add(stableJson(key)), job.keys.push(key);
    }
  }
  if (!jobs.size) return out;
  const results = await ctx.lookup([...jobs.values()].map(({ entries: _e, asked: _a, ...job }) => job));
  for (const job of jobs.values()) {
    const r = results[job.id];
    const answers = new Map((r?.answers ?? []).map((a): [string, LookupAnswer] => [stableJson(a.key), a]));
    for (const [e, refs] of job.entries) {
      const where = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: ctx.fileOf(e) };
      if (!r?.answers) {
        ctx.fail(e, new FleetError(`cannot read what it references on the cluster: ${r?.error ?? "no answer"}`, { ...where, field: "helm.valuesFrom" }));
        continue;
      }
      const resolved = resolveValuesFrom(refs, (key) => answers.get(stableJson(key)), where);
      if (resolved instanceof FleetError) ctx.fail(e, resolved);
      else out.read.set(e, resolved);
    }
  }
  return out;
}
