/**
 * A run's settings as recorded (runs.ts) and as a rollback re-applies them. The record never holds a
 * credential: each secret field of the stack file (a cluster's kubeconfig, an agent token, a GitRepo's
 * git and Helm credentials, its SOPS key, its downstream Secrets' values) is replaced by a marker, and a
 * rollback reads each from the stack file as it is now, by the same cluster or GitRepo: a rotated
 * credential is the rotated one. Clusters are paused as they are now, whatever the run had: a pause is
 * an incident's lever, which every runner honours (core/desired/holds.ts).
 */
import { FleetError } from "../../core/base/errors";
import type { GitRepoConfig } from "../../core/config/git-repo";
import type { ClusterConfig, StackConfig } from "../../core/config/stack";

/** What a recorded credential reads as. */
export const CREDENTIAL = "[credential: read from the stack file at rollback]";

/** One secret field of an entity (a cluster, a GitRepo, the stack's agent): read it, or write it on a copy. */
interface Slot<T> {
  field: string;
  get(x: T): string | undefined;
  set(x: T, value: string): void;
}

const CLUSTER_SLOTS: Slot<ClusterConfig>[] = [
  { field: "kubeconfig", get: (c) => c.kubeconfig, set: (c, v) => (c.kubeconfig = v) },
  { field: "agent.token", get: (c) => c.agent?.token, set: (c, v) => (c.agent!.token = v) },
];

const GIT_REPO_SLOTS: Slot<GitRepoConfig>[] = [
  { field: "auth.sshPrivateKey", get: (g) => g.auth?.sshPrivateKey, set: (g, v) => (g.auth!.sshPrivateKey = v) },
  { field: "auth.token", get: (g) => g.auth?.token, set: (g, v) => (g.auth!.token = v) },
  { field: "helmSecret.password", get: (g) => g.helmSecret?.password, set: (g, v) => (g.helmSecret!.password = v) },
  { field: "sopsAgeKey", get: (g) => g.sopsAgeKey, set: (g, v) => (g.sopsAgeKey = v) },
];

const AGENT_SLOT: Slot<StackConfig> = { field: "agent.token", get: (s) => s.agent.token, set: (s, v) => (s.agent.token = v) };

/** A place in the settings: a key, an array index, or an array item by its name (and namespace, where it has one). */
type Step = string | number | { id: string };

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
const idOf = (x: unknown): string | undefined =>
  isObject(x) && typeof x.name === "string" ? (typeof x.namespace === "string" ? `${x.namespace}/${x.name}` : x.name) : undefined;
const stepOf = (item: unknown, index: number): Step => (idOf(item) !== undefined ? { id: idOf(item)! } : index);
const stepText = (path: Step[]) =>
  path.map((s, i) => (typeof s === "number" ? `[${s}]` : typeof s === "string" ? `${i ? "." : ""}${s}` : `[${s.id}]`)).join("");

function child(x: unknown, step: Step): unknown {
  if (Array.isArray(x)) return typeof step === "number" ? x[step] : typeof step === "object" ? x.find((item) => idOf(item) === step.id) : undefined;
  return isObject(x) && typeof step === "string" ? x[step] : undefined;
}

/**
 * Where a stack-file place is in the settings: a HelmOp's spec (`helmOps[demo].helm.values.password`) is
 * kept as its bundle's fleet.yaml (`gitRepos[demo].helmOp.fleetYaml...`, its targets as targetCustomizations).
 */
function settingsPathOf(path: Step[]): Step[] {
  if (path[0] !== "helmOps" || path.length < 3) return path;
  const [, entry, field, ...rest] = path;
  if (field === "helmSecret") return ["gitRepos", entry, field, ...rest];
  return ["gitRepos", entry, "helmOp", "fleetYaml", field === "targets" ? "targetCustomizations" : field, ...rest];
}

/**
 * Every Pulumi secret of a stack file (`{secure: ...}`, any field the operator chose), as places in its
 * `pulumi-fleet:` configuration (configFromStackFile's keys): recorded as CREDENTIAL too, whatever the field.
 */
export function securePaths(config: Record<string, unknown>): Step[][] {
  const out: Step[][] = [];
  const walk = (v: unknown, path: Step[]): void => {
    if (Array.isArray(v)) v.forEach((item, i) => walk(item, [...path, stepOf(item, i)]));
    else if (isObject(v)) {
      if (Object.keys(v).length === 1 && typeof v.secure === "string") out.push(path);
      else for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    }
  };
  for (const [key, value] of Object.entries(config)) walk(value, [key]);
  return out;
}

/**
 * The settings with every credential replaced by CREDENTIAL (a copy; plain JSON): the secret fields of
 * the stack file's schema, and each place the stack file keeps a Pulumi secret (`secure`: securePaths).
 */
export function withoutCredentials(config: StackConfig, secure: Step[][] = []): StackConfig {
  const out = JSON.parse(JSON.stringify(config)) as StackConfig;
  for (const path of secure.map(settingsPathOf)) {
    const parent = path.slice(0, -1).reduce<unknown>(child, out);
    const last = path[path.length - 1];
    if (Array.isArray(parent)) {
      const i = parent.findIndex((item, j) => stepMatches(item, j, last));
      if (i >= 0) parent[i] = CREDENTIAL;
    } else if (isObject(parent) && typeof last === "string" && parent[last] !== undefined) parent[last] = CREDENTIAL;
  }
  const mark = <T>(x: T, slots: Slot<T>[]) => slots.forEach((s) => s.get(x) !== undefined && s.set(x, CREDENTIAL));
  mark(out, [AGENT_SLOT]);
  for (const c of out.clusters) mark(c, CLUSTER_SLOTS);
  for (const g of out.gitRepos) {
    mark(g, GIT_REPO_SLOTS);
    for (const d of g.downstreamResources ?? []) d.data = Object.fromEntries(Object.keys(d.data).map((k) => [k, CREDENTIAL]));
  }
  // A shard's view of the other shards' clusters holds their kubeconfigs too.
  if (out.shard) for (const c of out.shard.otherClusters) mark(c, CLUSTER_SLOTS);
  return out;
}

/**
 * The recorded settings to re-apply: each credential from `current` (the stack file now) by the same
 * cluster or GitRepo, and each cluster paused as it is now. A credential the stack file no longer has is
 * an error naming the cluster or GitRepo and the field.
 */
export function withCurrentCredentials(recorded: StackConfig, current: StackConfig, run: string): StackConfig {
  const out = JSON.parse(JSON.stringify(recorded)) as StackConfig;
  const missing = (field: string, where: { cluster?: string; gitRepo?: string }) =>
    new FleetError(
      `run ${run} used a credential here that the stack file no longer has (${where.cluster ? "the cluster" : where.gitRepo ? "the GitRepo" : "the field"} is gone or unset), so it cannot be re-applied`,
      { file: current.file, field, ...where },
    );
  const fill = <T>(x: T, now: T | undefined, slots: Slot<T>[], where: { cluster?: string; gitRepo?: string }) => {
    for (const s of slots) {
      if (s.get(x) !== CREDENTIAL) continue;
      const value = now && s.get(now);
      if (value === undefined) throw missing(s.field, where);
      s.set(x, value);
    }
  };
  fill(out, current, [AGENT_SLOT], {});
  const clustersNow = new Map([...current.clusters, ...(current.shard?.otherClusters ?? [])].map((c) => [c.name, c]));
  const fillCluster = (c: ClusterConfig) => fill(c, clustersNow.get(c.name), CLUSTER_SLOTS, { cluster: c.name });
  for (const c of out.clusters) {
    fillCluster(c);
    const now = clustersNow.get(c.name);
    if (now?.paused) c.paused = now.paused;
    else delete c.paused;
  }
  for (const c of out.shard?.otherClusters ?? []) fillCluster(c);
  const reposNow = new Map(current.gitRepos.map((g) => [g.name, g]));
  for (const g of out.gitRepos) {
    const now = reposNow.get(g.name);
    fill(g, now, GIT_REPO_SLOTS, { gitRepo: g.name });
    for (const d of g.downstreamResources ?? []) {
      const dNow = now?.downstreamResources?.find((x) => x.name === d.name && x.namespace === d.namespace);
      for (const key of Object.keys(d.data)) {
        if (d.data[key] !== CREDENTIAL) continue;
        const value = dNow?.data[key];
        if (value === undefined) throw missing(`downstreamResources[${d.namespace}/${d.name}].data.${key}`, { gitRepo: g.name });
        d.data[key] = value;
      }
    }
  }
  fillMarked(out, current, [], (path) => missing(stepText(path), {}));
  return out;
}

function stepMatches(item: unknown, index: number, step: Step): boolean {
  return typeof step === "number" ? index === step : typeof step === "object" && idOf(item) === step.id;
}

/** Every CREDENTIAL left (a place the stack file keeps a secret) from the same place of `current`. */
function fillMarked(x: unknown, current: unknown, path: Step[], missing: (path: Step[]) => Error): void {
  const fillAt = (get: () => unknown, set: (v: unknown) => void, step: Step, now: unknown) => {
    const value = get();
    const at = [...path, step];
    if (value === CREDENTIAL) {
      const v = child(now, step);
      if (v === undefined) throw missing(at);
      set(v);
    } else fillMarked(value, child(now, step), at, missing);
  };
  if (Array.isArray(x))
    x.forEach((item, i) =>
      fillAt(
        () => item,
        (v) => (x[i] = v),
        stepOf(item, i),
        current,
      ),
    );
  else if (isObject(x))
    for (const k of Object.keys(x))
      fillAt(
        () => x[k],
        (v) => (x[k] = v),
        k,
        current,
      );
}
