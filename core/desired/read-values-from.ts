/**
 * `helm.valuesFrom` (core/render/values-from.ts resolves): each deployment's referenced ConfigMaps and
 * Secrets are read on its cluster with the identity that deploys it (its serviceAccount's impersonating
 * kubeconfig, else the cluster's), through the read-only reader `lookup` uses: one read per cluster,
 * identity and GitRepo (gather.ts), a Get per object, with the operator's deadline: one GitRepo's
 * slow read fails only its own deployments there. Here is what is asked, and what the answers give: a
 * deployment that may not read, or whose read or values fail, fails alone. Nothing is read in render
 * mode (as `fleet test`) or on a cluster left out: each such deployment says so.
 */
import { GitRepoConfig } from "../config/git-repo";
import { FleetError } from "../base/errors";
import { stableJson } from "../base/hash";
import { LookupAnswer, LookupKey } from "../model/renderer-protocol";
import { lookupKeyOf, resolveValuesFrom, ResolvedValuesFrom, valuesFromProblem, valuesFromRefs, ValuesFromRef, withValuesDigest } from "../render/values-from";
import { AccountUsers } from "./service-accounts";
import { PlanEntry } from "../targeting/plan";
import { ClusterFacts } from "./cluster-facts";
import { Failed } from "../plan/failures";
import { StepVerdicts } from "./steps";
import { foreignOwners } from "./owners";
import { readId } from "./cluster-reads";

/** What is read per cluster, identity and GitRepo, and which deployments asked it. */
export interface ValuesFromAsks {
  asks: Map<string, { cluster: string; user?: string; gitRepo: string; keys: LookupKey[]; entries: [PlanEntry, ValuesFromRef[]][] }>;
  /** Per deployment whose valuesFrom is not read (render mode, a cluster left out): its warning. */
  notRead: Map<PlanEntry, string>;
  /** Deployments whose references reach outside what their GitRepo may read. */
  failed: Failed[];
}

export interface ValuesFromReads {
  /** Per deployment whose valuesFrom was read: what it gives. */
  read: Map<PlanEntry, ResolvedValuesFrom>;
  /** Per deployment whose valuesFrom was not read (render mode, a cluster left out): its warning. */
  notRead: Map<PlanEntry, string>;
  /** Deployments whose read or values failed, and those asks failed before reading. */
  failed: Failed[];
}

interface Context {
  gitRepos: GitRepoConfig[];
  users: AccountUsers;
  /** Namespaces other GitRepos' deployments were in first (owners.ts namespaceOwners). */
  namespacesBefore: ReadonlyMap<string, ReadonlySet<string>>;
  renderMode: boolean;
  leftOut?: ReadonlySet<string>;
  fileOf: (e: PlanEntry) => string | undefined;
}

/** What each deployment's valuesFrom asks of its cluster; a reference outside what its GitRepo may read fails it before anything is read. */
export function valuesFromAsks(entries: PlanEntry[], ctx: Context): ValuesFromAsks {
  const out: ValuesFromAsks = { asks: new Map(), notRead: new Map(), failed: [] };
  const asked = new Map<string, Set<string>>();
  for (const e of entries) {
    const refs = valuesFromRefs(e.options, e.namespace);
    if (!refs.length) continue;
    if (ctx.renderMode || ctx.leftOut?.has(e.cluster)) {
      out.notRead.set(
        e,
        ctx.renderMode
          ? "helm.valuesFrom is not read in render mode (as `fleet test` does not read it): rendered without those values"
          : "helm.valuesFrom is not read: the cluster is left out of this operation",
      );
      continue;
    }
    const where = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: ctx.fileOf(e) };
    const scope = {
      namespace: e.namespace,
      allowed: ctx.gitRepos.find((g) => g.name === e.gitRepo)?.allowedTargetNamespaces,
      foreign: (namespace: string) => foreignOwners(ctx.namespacesBefore, { cluster: e.cluster, gitRepo: e.gitRepo, namespace }),
    };
    const problem = valuesFromProblem(refs, scope, where);
    if (problem) {
      out.failed.push({ pair: e, error: problem });
      continue;
    }
    const user = ctx.users.userOf.get(e);
    const id = readId(`${e.cluster} ${user ?? ""}`, e.gitRepo);
    const ask = out.asks.get(id) ?? out.asks.set(id, { cluster: e.cluster, ...(user ? { user } : {}), gitRepo: e.gitRepo, keys: [], entries: [] }).get(id)!;
    const keys = asked.get(id) ?? asked.set(id, new Set()).get(id)!;
    ask.entries.push([e, refs]);
    for (const ref of refs) {
      const key = lookupKeyOf(ref);
      if (!keys.has(stableJson(key))) {
        keys.add(stableJson(key));
        ask.keys.push(key);
      }
    }
  }
  return out;
}

/** A read's key in ClusterFacts.valuesFrom: its identity and GitRepo. */
export const valuesFromKey = (ask: { user?: string; gitRepo: string }): string => readId(ask.user ?? "", ask.gitRepo);

/** What the answers (ClusterFacts.valuesFrom) give each deployment that asked; one that cannot be read, or whose values fail, fails alone. */
export function valuesFromRead(asks: ValuesFromAsks, known: ReadonlyMap<string, ClusterFacts>, ctx: Pick<Context, "fileOf">): ValuesFromReads {
  const out: ValuesFromReads = { read: new Map(), notRead: asks.notRead, failed: [...asks.failed] };
  for (const ask of asks.asks.values()) {
    const r = known.get(ask.cluster)?.valuesFrom.get(valuesFromKey(ask));
    const answers = new Map((r?.answers ?? []).map((a): [string, LookupAnswer] => [stableJson(a.key), a]));
    for (const [e, refs] of ask.entries) {
      const where = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: ctx.fileOf(e) };
      if (!r?.answers) {
        out.failed.push({
          pair: e,
          error: new FleetError(`cannot read what it references on the cluster: ${r?.error ?? "no answer"}`, { ...where, field: "helm.valuesFrom" }),
        });
        continue;
      }
      const resolved = resolveValuesFrom(refs, (key) => answers.get(stableJson(key)), where);
      if (resolved instanceof FleetError) out.failed.push({ pair: e, error: resolved });
      else out.read.set(e, resolved);
    }
  }
  return out;
}

/**
 * The reads as a step's verdicts: what failed, the values read from Secrets (never in a failure's words),
 * and each deployment read anew with the values' digest in its deploymentID (a changed value is a new
 * deploymentID), the planned entry left as it was handed on.
 */
export function valuesFromVerdicts(reads: ValuesFromReads): StepVerdicts {
  const read = [...reads.read];
  return {
    failed: reads.failed,
    secrets: new Map(read.map(([e, r]) => [e, r.redact])),
    renewed: new Map(read.map(([e, r]) => [e, { ...e, deploymentId: withValuesDigest(e.deploymentId, r.digest) }])),
  };
}

/** A map by deployment, keyed by the deployments a step gave anew (valuesFromVerdicts) where it did. */
export function renewedKeys<V>(byEntry: ReadonlyMap<PlanEntry, V>, renewed: ReadonlyMap<PlanEntry, PlanEntry> | undefined): Map<PlanEntry, V> {
  return new Map([...byEntry].map(([e, v]) => [renewed?.get(e) ?? e, v]));
}
