/**
 * One environment split across several stacks (shards). The environment's stack file is the one
 * definition (clusters, groups, GitRepos, agent settings) plus `shards:`, the rule that puts every
 * cluster in exactly one shard. Each shard is a real Pulumi stack, `<environment>.<shard>`, whose
 * stack file is a generated copy of the definition naming its shard (core/config/shard-files.ts); its
 * program deploys only its own clusters.
 */
import { Field } from "./reader";
import { keysOf } from "./field-table";
import { SHARD_FIELDS, SHARD_OF_FIELDS } from "./stack-fields";
import { FleetError } from "../base/errors";
import { readSelector } from "./selector";
import { LabelSelector, selectorMatches } from "../model/selector";
import { dnsLabelProblem, labelKeyProblem } from "../base/k8s-validation";
import { sha256Hex } from "../base/hash";

/** A shard's membership rule: every given criterion must hold (as a GitRepo target's). */
export interface ShardSpec {
  name: string;
  /** A list of cluster names. */
  clusters?: string[];
  clusterSelector?: LabelSelector;
  /** A cluster group of the definition, by name. */
  clusterGroup?: string;
  /**
   * Placed automatically (`clustersPerShard`): the cluster is in this shard when this shard's name,
   * among these, gives the highest rendezvous hash with the cluster's name.
   */
  hashedAmong?: string[];
  /** With `shardBy`: the value of that label its clusters have (null: clusters without the label). */
  labelValue?: { key: string; value: string | null };
}

/** Which shard a generated stack file is (its `pulumi-fleet:shard` key). */
export interface ShardOf {
  environment: string;
  name: string;
}

/** What the rule reads of a cluster and of a cluster group (stack.ts passes its ClusterConfig and ClusterGroupConfig). */
interface LabelledCluster {
  name: string;
  labels: Record<string, string>;
}
interface SelectingGroup {
  name: string;
  selector: LabelSelector;
}

export function shardStackName(environment: string, shard: string): string {
  return `${environment}.${shard}`;
}

export function readShards(f: Field): ShardSpec[] | undefined {
  if (!f.present) return undefined;
  const shards = f.items().map((s) => {
    s.object(keysOf(SHARD_FIELDS));
    const name = s.child("name").string();
    const problem = dnsLabelProblem(name);
    if (problem) s.child("name").fail(`invalid shard name ${JSON.stringify(name)}: ${problem}`);
    const spec: ShardSpec = { name };
    if (s.child("clusters").present) spec.clusters = s.child("clusters").stringList();
    const selector = readSelector(s.child("clusterSelector"));
    if (selector) spec.clusterSelector = selector;
    const group = s.child("clusterGroup").optString();
    if (group) spec.clusterGroup = group;
    if (!spec.clusters && !spec.clusterSelector && !spec.clusterGroup)
      s.fail("give clusters, clusterSelector or clusterGroup (a shard with no rule holds no cluster)");
    return spec;
  });
  if (shards.length === 0) f.fail("must list at least one shard (or leave shards out)");
  const seen = new Set<string>();
  shards.forEach((s, i) => {
    if (seen.has(s.name))
      f.index(i)
        .child("name")
        .fail(`duplicate shard name ${JSON.stringify(s.name)}`);
    seen.add(s.name);
  });
  return shards;
}

/**
 * `clustersPerShard: N`: the environment split automatically into ceil(clusters / N) shards named
 * s1, s2, ..., each cluster placed by rendezvous (highest random weight) hashing of its name. Why that
 * placement: a cluster's shard depends only on its own name and the shard count, so adding or
 * removing other clusters moves none until the count changes, and when it grows by one only the
 * clusters the new shard wins move (about 1/count of them), all into it; a shrink moves only the
 * last shard's clusters. Each shard holds clusters / count on average (at most N), not exactly: a hash
 * spreads them with a standard deviation of about the square root of that mean (`npm run shards` shows
 * each shard's clusters).
 *
 * With `shardBy: <label>`, the same per value of that label: the clusters with value v are split into
 * ceil(their count / N) shards named <v>-1, <v>-2, ... (v in lowercase, other characters as "-";
 * clusters without the label in unlabelled-1, ...), so a target edit along that label (a region, a
 * tier) runs only that value's shards, where a hash alone spreads any group over all of them.
 */
export function automaticShards(perShardField: Field, shardByField: Field, clusters: LabelledCluster[]): ShardSpec[] | undefined {
  const perShard = perShardField.optConfigNumber();
  const key = shardByField.optString();
  if (perShard === undefined) {
    if (key !== undefined) shardByField.fail("applies with clustersPerShard only (shards chosen automatically, kept together by this label)");
    return undefined;
  }
  if (!Number.isInteger(perShard) || perShard < 1) perShardField.fail(`must be a whole number of clusters, 1 or more (got ${perShard})`);
  const count = (n: number) => Math.max(1, Math.ceil(n / perShard));
  if (key === undefined) {
    const names = Array.from({ length: count(clusters.length) }, (_, i) => `s${i + 1}`);
    return names.map((name) => ({ name, hashedAmong: names }));
  }
  const problem = labelKeyProblem(key);
  if (problem) shardByField.fail(`invalid label key ${JSON.stringify(key)}: ${problem}`);
  const sizes = new Map<string | null, number>();
  for (const c of clusters) sizes.set(labelOf(c, key), (sizes.get(labelOf(c, key)) ?? 0) + 1);
  const byPrefix = new Map<string, string | null>();
  const specs: ShardSpec[] = [];
  // Clusters without the label first, then by value: the order `npm run shards` lists them in.
  const values = [...sizes.keys()].sort((a, b) => (a === null ? -1 : b === null ? 1 : a < b ? -1 : a > b ? 1 : 0));
  for (const value of values) {
    const prefix = shardPrefix(value);
    if (byPrefix.has(prefix)) {
      const other = byPrefix.get(prefix)!;
      shardByField.fail(
        `${describeValue(key, other)} and ${describeValue(key, value)} would name the same shards (${prefix}-1, ...): shard names are lowercase letters, digits and "-"; give the clusters distinct values`,
      );
    }
    byPrefix.set(prefix, value);
    const names = Array.from({ length: count(sizes.get(value)!) }, (_, i) => `${prefix}-${i + 1}`);
    specs.push(...names.map((name) => ({ name, hashedAmong: names, labelValue: { key, value } })));
  }
  return specs.length ? specs : [{ name: "s1", hashedAmong: ["s1"] }];
}

/** The cluster's value of label `key`, null without it (its own labels only: `constructor` is a valid key). */
function labelOf(c: LabelledCluster, key: string): string | null {
  return Object.hasOwn(c.labels, key) ? c.labels[key] : null;
}

/** The name a label value's shards start with: a DNS label with room for "-<n>". */
function shardPrefix(value: string | null): string {
  if (value === null) return "unlabelled";
  const plain = value
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .replace(/^-+|-+$/g, "");
  if (plain && plain.length <= 50) return plain;
  // Too long for a stack name part, or nothing left of it: a readable start and the value's hash.
  return `${plain.slice(0, 40).replace(/-+$/, "") || "v"}-${sha256Hex(value).slice(0, 8)}`;
}

const describeValue = (key: string, value: string | null) => (value === null ? `clusters without label ${key}` : `${key}=${JSON.stringify(value)}`);

/**
 * Placements computed in this process, by the shards a cluster is hashed among (named by their first
 * name and count: one label value's, or s1..sK) and cluster: every shard's stack file is a copy of the
 * definition, so a decision over K shards parses it K times; without this each parse hashed clusters x K again.
 */
const placed = new Map<string, string>();
/** Beyond it, the kept placements are dropped (a long-running process sees many layouts): 10,000 clusters x a few. */
const MAX_PLACED = 50_000;

export function forgetPlacements(): void {
  placed.clear();
}

/** The shard of `names` that cluster `cluster` hashes to: the name with the highest sha256 of "<shard>/<cluster>". */
function rendezvousShard(cluster: string, names: string[]): string {
  const key = `${names[0]}\0${names.length}\0${cluster}`;
  const known = placed.get(key);
  if (known) return known;
  let best = names[0];
  let bestWeight = "";
  for (const name of names) {
    const weight = sha256Hex(`${name}/${cluster}`);
    if (weight > bestWeight) [best, bestWeight] = [name, weight];
  }
  if (placed.size >= MAX_PLACED) placed.clear();
  placed.set(key, best);
  return best;
}

/** For automatic shards: each cluster's shard, among those of its label value when shardBy is set. */
function automaticPlacement(shards: ShardSpec[]): ((c: LabelledCluster) => string | undefined) | undefined {
  const automatic = shards.filter((s) => s.hashedAmong);
  if (!automatic.length) return undefined;
  const label = automatic[0].labelValue;
  if (!label) return (c) => rendezvousShard(c.name, automatic[0].hashedAmong!);
  const byValue = new Map(automatic.map((s) => [s.labelValue!.value, s.hashedAmong!]));
  return (c) => {
    const names = byValue.get(labelOf(c, label.key));
    return names && rendezvousShard(c.name, names);
  };
}

export function readShardOf(f: Field): ShardOf | undefined {
  if (!f.present) return undefined;
  f.object(keysOf(SHARD_OF_FIELDS));
  return { environment: f.child("environment").string(), name: f.child("name").string() };
}

/** `hashed`: the shard the cluster's name hashes to among automatic shards (computed once per cluster). */
function holds(s: ShardSpec, c: LabelledCluster, groups: SelectingGroup[], hashed: string | undefined): boolean {
  if (s.hashedAmong && hashed !== s.name) return false;
  if (s.labelValue && labelOf(c, s.labelValue.key) !== s.labelValue.value) return false;
  if (s.clusters && !s.clusters.includes(c.name)) return false;
  if (s.clusterSelector && !selectorMatches(s.clusterSelector, c.labels)) return false;
  if (s.clusterGroup) {
    const g = groups.find((x) => x.name === s.clusterGroup);
    if (!g || !selectorMatches(g.selector, c.labels)) return false;
  }
  return true;
}

/**
 * Cluster name -> shard name. A cluster in two shards or in none, a listed cluster that does not
 * exist, or an unknown group is an error naming it: the check runs before anything is deployed.
 */
export function shardMembership(clusters: LabelledCluster[], groups: SelectingGroup[], shards: ShardSpec[], file: string): Map<string, string> {
  const fail = (field: string, reason: string): never => {
    throw new FleetError(reason, { file, field });
  };
  const names = new Set(clusters.map((c) => c.name));
  shards.forEach((s, i) => {
    if (s.clusterGroup && !groups.some((g) => g.name === s.clusterGroup))
      fail(`shards[${i}].clusterGroup`, `unknown cluster group ${JSON.stringify(s.clusterGroup)}`);
    s.clusters?.forEach((c, j) => {
      if (!names.has(c)) fail(`shards[${i}].clusters[${j}]`, `cluster ${JSON.stringify(c)} is not in clusters`);
    });
  });
  const out = new Map<string, string>();
  const placement = automaticPlacement(shards);
  // Automatic shards hold only the clusters hashed to them: asking that one shard alone keeps this linear in clusters, not clusters x shards.
  const byName = new Map(shards.map((s) => [s.name, s]));
  const allHashed = shards.every((s) => s.hashedAmong);
  for (const c of clusters) {
    const hashed = placement?.(c);
    const candidates = allHashed ? [hashed === undefined ? undefined : byName.get(hashed)].filter((s) => s !== undefined) : shards;
    const matched = candidates.filter((s) => holds(s, c, groups, hashed)).map((s) => s.name);
    if (matched.length === 0) fail("shards", `cluster ${c.name} is in no shard: every cluster must be in exactly one (add it to a shard's rule)`);
    if (matched.length > 1)
      fail(
        "shards",
        `cluster ${c.name} is in ${matched.length} shards (${matched.join(", ")}): every cluster must be in exactly one, or two stacks would deploy it`,
      );
    out.set(c.name, matched[0]);
  }
  return out;
}
