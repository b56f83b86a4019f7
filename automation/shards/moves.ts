/**
 * Changing which shard a cluster belongs to (`npm run shards -- --stack <env> --apply`). The plan
 * compares the membership the shard files were generated with against the definition's; applying it
 * moves each moving cluster's resources between the two shard stacks with the engine's own
 * `pulumi state move` (its Cluster component and its BundleDeployments; the command moves their
 * children, the Kubernetes objects, providers and agent, with them), and only then rewrites the shard
 * files. Nothing on the clusters is touched: every object keeps its UID. The BundleContent resources
 * the moved pairs name stay behind (the command cannot copy, and pairs that stay may name them): the
 * new shard's next update registers them (contentsLeftBehind says so when it moves).
 *
 * An interrupted apply is safe to run again: a cluster already in its new shard's state is not moved
 * twice, and until the files are rewritten every shard whose file is out of date refuses to run.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { BUNDLE_CONTENT_TYPE, BUNDLE_DEPLOYMENT_TYPE, CLUSTER_TYPE } from "../../core/desired/types";
import { loadStackConfig, readShardLayout, shardFileProblem, shardFileText, shardOfFile, stackFilePath, ShardLayout } from "../../core/config/shard-files";
import { shardStackName } from "../../core/config/shards";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { BackendOptions, resolveBackend } from "../engine/backend";
import { journalStore } from "../engine/journal-store";
import { openStack, PROJECT_NAME, runCli, stacksDir } from "../engine/stack";
import { nameOfUrn } from "../../core/model/keys";
import { clustersInState } from "./state-clusters";
import { settleLimited } from "../../core/base/settle-limited";

export interface ShardMove {
  cluster: string;
  /** undefined: a cluster no shard file had yet (new to the environment). */
  from?: string;
  to: string;
}

export interface ShardPlan {
  layout: ShardLayout;
  /** Per shard of the definition: undefined when its file is current, else why it is not. */
  problems: Map<string, string | undefined>;
  moves: ShardMove[];
  /** Shard files of this environment whose shard the definition no longer lists. */
  removed: string[];
  /**
   * Clusters a removed shard's file still deploys that the definition no longer has: their bundle
   * deployments and agent are in that shard's state, which no stack would ever update again.
   */
  stranded: { cluster: string; shard: string }[];
  /** Clusters the states of several shards deploy (read by withShardStates): a move cannot choose; resolved by hand. */
  inSeveral: { cluster: string; shards: string[] }[];
}

/** The shard files of an environment present in `dir`, by shard name. */
function existingShardFiles(dir: string, environment: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!fs.existsSync(dir)) return out;
  for (const f of fs.readdirSync(dir)) {
    const m = /^Pulumi\.(.+)\.yaml$/.exec(f);
    if (!m || !m[1].startsWith(`${environment}.`)) continue;
    const of = shardOfFile(dir, m[1]);
    if (of?.environment === environment) out.set(of.name, m[1]);
  }
  return out;
}

/** The clusters a shard file assigns to its shard, by its own (possibly older) copy of the definition. */
function clustersOfShardFile(dir: string, stack: string): string[] {
  return loadStackConfig(dir, stack).config.clusters.map((c) => c.name);
}

export function planShards(dir: string, environment: string): ShardPlan {
  const layout = readShardLayout(dir, environment);
  if (!layout) throw new Error(`stacks/Pulumi.${environment}.yaml has no shards: rule; there is nothing to shard`);
  const files = existingShardFiles(dir, environment);
  const before = new Map<string, string>();
  for (const [shard, stack] of files) for (const c of clustersOfShardFile(dir, stack)) before.set(c, shard);
  const moves: ShardMove[] = [];
  for (const [cluster, to] of [...layout.membership].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const from = before.get(cluster);
    if (from !== to) moves.push({ cluster, from, to });
  }
  const problems = new Map(layout.shards.map((s) => [s.name, shardFileProblem(dir, environment, s.name)]));
  const removed = [...files.keys()].filter((s) => !layout.shards.some((x) => x.name === s)).sort();
  const stranded = [...before]
    .filter(([cluster, shard]) => removed.includes(shard) && !layout.membership.has(cluster))
    .map(([cluster, shard]) => ({ cluster, shard }))
    .sort((a, b) => (a.cluster < b.cluster ? -1 : 1));
  return { layout, problems, moves, removed, stranded, inSeveral: [] };
}

/**
 * The plan read against what each shard's state deploys, not only what its file names: a removal applied
 * earlier whose up never ran leaves a cluster in a state whose file no longer names it. Such a cluster is
 * stranded when its removed shard goes and the definition no longer has it; moved from that state when the
 * definition has it again in another shard (else that shard would deploy it beside the state that still
 * holds it, whose next up, or destroy, deletes its objects). Reads every shard file's stack.
 */
export async function withShardStates(plan: ShardPlan, dir: string, options: BackendOptions = {}, onlyWhenPending = false): Promise<ShardPlan> {
  // `onlyWhenPending` (a cluster's pause rewriting the files): files that name every cluster where the
  // definition puts it are taken as written by this code, which read the states first. `npm run shards`
  // reads them whatever the files say (files reverted, or written by an earlier version, may hide a move).
  if (onlyWhenPending && !plan.moves.length && !plan.removed.length) return plan;
  const shards = [...existingShardFiles(dir, plan.layout.environment).keys()].sort();
  const read = await settleLimited(shards, STATE_READS_AT_ONCE, (shard) => clustersInState(shardStackName(plan.layout.environment, shard), dir, options));
  const heldBy = new Map<string, string[]>();
  read.forEach((r, i) => {
    if (r.status === "rejected") throw r.reason;
    for (const cluster of r.value) heldBy.set(cluster, [...(heldBy.get(cluster) ?? []), shards[i]]);
  });
  return reconcileWithStates(plan, heldBy);
}

/** Shard states read at once by withShardStates. */
const STATE_READS_AT_ONCE = 4;

/** The plan corrected by `heldBy` (each cluster's shards whose state deploys it). Pure. */
export function reconcileWithStates(plan: ShardPlan, heldBy: Map<string, string[]>): ShardPlan {
  const stranded = [...plan.stranded];
  const moves = new Map(plan.moves.map((m) => [m.cluster, m]));
  const inSeveral: ShardPlan["inSeveral"] = [...plan.inSeveral];
  for (const [cluster, shards] of heldBy) {
    const to = plan.layout.membership.get(cluster);
    if (to === undefined) {
      for (const shard of shards)
        if (plan.removed.includes(shard) && !stranded.some((x) => x.cluster === cluster && x.shard === shard)) stranded.push({ cluster, shard });
    } else if (shards.length > 1) {
      inSeveral.push({ cluster, shards });
      moves.delete(cluster); // no move can be named for it
    } else if (shards[0] !== to) moves.set(cluster, { cluster, from: shards[0], to });
  }
  const byCluster = <T extends { cluster: string }>(a: T, b: T) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0);
  return {
    ...plan,
    moves: [...moves.values()].sort(byCluster),
    stranded: stranded.sort((a, b) => byCluster(a, b) || (a.shard < b.shard ? -1 : 1)),
    inSeveral: inSeveral.sort(byCluster),
  };
}

function inSeveralProblem(shards: string[]): string {
  return `its deployments are in the states of shards ${shards.join(" and ")}; a move cannot choose between them: resolve it by hand (\`npm run pulumi -- stack export\` of each)`;
}

function strandedAdvice(shard: string, layout: ShardLayout): string {
  // With shardBy, a value's shards go with its last cluster: no count brings them back.
  const label = layout.config.shards?.find((s) => s.labelValue)?.labelValue?.key;
  if (label)
    return (
      `move it first into a shard that stays (give it a value of ${label} whose shards stay, \`--apply\`, an up of that shard), ` +
      `then remove it from the definition (its new shard's up removes its deployments and agent)`
    );
  return (
    `deploy its removal while ${shard} still exists (a change that keeps the shard count, e.g. a lower clustersPerShard, ` +
    `\`--apply\`, an up of every shard), then change the count`
  );
}

/** `names`: each shard's clusters by name (the plain `npm run shards` view); errors give counts and the moves only. */
export function formatShardPlan(p: ShardPlan, names = false): string {
  const lines = [`environment ${p.layout.environment}: ${p.layout.shards.length} shard(s), ${p.layout.membership.size} cluster(s)`];
  for (const s of p.layout.shards) {
    const problem = p.problems.get(s.name);
    lines.push(
      `  ${s.stack}: ${s.clusters.length} cluster(s)${problem ? ` [to regenerate: ${problem}]` : ""}${names ? `: ${s.clusters.join(", ") || "none"}` : ""}`,
    );
  }
  for (const m of p.moves) {
    lines.push(m.from ? `  move ${m.cluster}: ${m.from} -> ${m.to} (its state moves with \`pulumi state move\`)` : `  new ${m.cluster} -> ${m.to}`);
  }
  for (const r of p.removed) lines.push(`  shard ${r} is no longer in the definition: its file is removed once its clusters have moved`);
  for (const x of p.stranded)
    lines.push(`  ${x.cluster} is no longer in the definition, but its deployments are in shard ${x.shard}, which goes: ${strandedAdvice(x.shard, p.layout)}`);
  for (const x of p.inSeveral) lines.push(`  ${x.cluster}: ${inSeveralProblem(x.shards)}`);
  if (!p.moves.length && !p.removed.length && !p.inSeveral.length && !p.stranded.length && [...p.problems.values()].every((x) => !x))
    lines.push("  every shard file is current; nothing would move");
  return lines.join("\n");
}

/** Refuses shard files that disagree with their definition (before a run, or before handing them to a runner), showing what would make them current. */
export function assertShardsCurrent(dir: string, layout: ShardLayout): void {
  if (!layout.shards.some((s) => shardFileProblem(dir, layout.environment, s.name))) return;
  throw new Error(
    `${formatShardPlan(planShards(dir, layout.environment))}\nthe shard files are not current: ` +
      `run \`npm run shards -- --stack ${layout.environment} --apply\` (it moves clusters' state, then writes them)`,
  );
}

/** Resources to name to `pulumi state move` for one cluster (it moves their children along). */
export function clusterUrns(resources: { urn: string; type: string }[], cluster: string): string[] {
  return resources
    .filter(
      (r) => (r.type === CLUSTER_TYPE && nameOfUrn(r.urn) === cluster) || (r.type === BUNDLE_DEPLOYMENT_TYPE && nameOfUrn(r.urn).startsWith(`${cluster}/`)),
    )
    .map((r) => r.urn);
}

/**
 * The contents (BundleContent digests) the moved pairs name that the destination's state lacks: they
 * stay in the source (`pulumi state move` moves, it cannot copy, and pairs that stay may name them).
 */
export function contentsLeftBehind(moved: { urn: string; type: string; inputs?: Record<string, unknown> }[], dest: { urn: string; type: string }[]): string[] {
  const there = new Set(dest.filter((r) => r.type === BUNDLE_CONTENT_TYPE).map((r) => nameOfUrn(r.urn)));
  const named = moved.filter((r) => r.type === BUNDLE_DEPLOYMENT_TYPE).map((r) => r.inputs?.content);
  return [...new Set(named.filter((c): c is string => typeof c === "string" && !there.has(c)))].sort();
}

/** What a move says of the contents it left behind (contentsLeftBehind), or nothing. */
export function contentsLeftBehindNote(cluster: string, from: string, to: string, digests: string[]): string | undefined {
  if (!digests.length) return undefined;
  return (
    `${cluster}: its pairs name ${digests.length} content(s) (their manifests, kept once per render) that stay in ${from}'s state ` +
    `(\`pulumi state move\` cannot copy, and pairs there may name them): ${to}'s next \`npm run up\` registers them again; ` +
    `until then its refresh and status only check that those pairs' objects exist`
  );
}

/**
 * The cluster's own providers in a stack of an earlier version: Kubernetes' (namespaces, agent) and
 * pulumi-fleet's (its BundleDeployments), named after it and one per impersonated account
 * ("<cluster>/as/<user>"). The stack's one provider ("fleet:<stack>") is no cluster's.
 */
export function providerUrns(resources: { urn: string; type: string }[], cluster: string): string[] {
  const types = new Set(["pulumi:providers:kubernetes", "pulumi:providers:pulumi-fleet"]);
  return resources.filter((r) => types.has(r.type) && (nameOfUrn(r.urn) === cluster || nameOfUrn(r.urn).startsWith(`${cluster}/as/`))).map((r) => r.urn);
}

export interface ApplyOptions extends BackendOptions {
  environment: string;
  /** Directory of the stack files (default stacks/). */
  stackConfigDir?: string;
  env?: Record<string, string>;
  log?: (line: string) => void;
}

/**
 * Moves every moving cluster's state, then writes the shard files (see the file comment). `read`: the
 * plan withShardStates already gave (`npm run shards` shows it first), else it is read here.
 */
export async function applyShards(options: ApplyOptions, read?: ShardPlan): Promise<ShardPlan> {
  const dir = options.stackConfigDir ?? stacksDir();
  const log = options.log ?? ((l: string) => console.log(l));
  const plan = read ?? (await withShardStates(planShards(dir, options.environment), dir, options));
  if (plan.inSeveral.length) throw new Error(`nothing was changed: ${plan.inSeveral.map((x) => `${x.cluster}: ${inSeveralProblem(x.shards)}`).join("; ")}`);
  // Removing the shard would orphan them: objects and agent left on the cluster, no stack to prune them.
  if (plan.stranded.length)
    throw new Error(
      `nothing was changed: ${plan.stranded.map((x) => `${x.cluster} (shard ${x.shard})`).join(", ")} would be left deployed with no stack to remove ${plan.stranded.length === 1 ? "it" : "them"}: ` +
        [...new Set(plan.stranded.map((x) => x.shard))].map((shard) => strandedAdvice(shard, plan.layout)).join("; "),
    );
  const stackOf = (shard: string) => shardStackName(options.environment, shard);
  const moving = plan.moves.filter((m) => m.from !== undefined);
  if (moving.length) {
    // The engine reads each stack's secrets settings from its file: a scratch directory holds the
    // shard files as they are now plus the new shards' files, so no real file is current before the moves are done.
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pf-shard-move-"));
    try {
      fs.copyFileSync(stackFilePath(dir, options.environment), stackFilePath(scratch, options.environment));
      for (const shard of new Set(moving.flatMap((m) => [m.from!, m.to]))) {
        const file = stackFilePath(scratch, stackOf(shard));
        // The files themselves are rewritten below; here they only carry the definition's secrets settings.
        fs.writeFileSync(file, shardFileText(dir, options.environment, shard));
      }
      for (const m of moving) await moveCluster({ ...options, stackConfigDir: scratch }, stackOf(m.from!), stackOf(m.to), m.cluster, log);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }
  for (const s of plan.layout.shards) {
    if (plan.problems.get(s.name) === undefined) continue;
    fs.writeFileSync(stackFilePath(dir, s.stack), shardFileText(dir, options.environment, s.name));
    log(`wrote ${path.relative(PROJECT_DIR, stackFilePath(dir, s.stack))} (${s.clusters.length} cluster(s))`);
  }
  for (const r of plan.removed) {
    fs.rmSync(stackFilePath(dir, stackOf(r)));
    log(
      `removed ${path.relative(PROJECT_DIR, stackFilePath(dir, stackOf(r)))}: the clusters its file named have moved; check that the stack ${stackOf(r)} holds nothing (\`npm run pulumi -- stack export --stack ${stackOf(r)}\`) before removing it with \`npm run pulumi -- stack rm ${stackOf(r)}\``,
    );
  }
  return plan;
}

async function moveCluster(
  options: ApplyOptions & { stackConfigDir: string },
  from: string,
  to: string,
  cluster: string,
  log: (l: string) => void,
): Promise<void> {
  const journal = (await journalStore(resolveBackend(options), PROJECT_NAME, from)?.list()) ?? [];
  if (journal.length) {
    throw new Error(
      `stack ${from} has ${journal.length} crash-journal entr${journal.length === 1 ? "y" : "ies"} from an interrupted update: run \`npm run up\` on it first, so that nothing it may have left behind on ${cluster} is forgotten`,
    );
  }
  const source = await openStack({ ...options, stack: from });
  const dest = await openStack({ ...options, stack: to });
  const before = ((await source.exportStack()).deployment?.resources ?? []) as { urn: string; type: string; inputs?: Record<string, unknown> }[];
  const destResources = ((await dest.exportStack()).deployment?.resources ?? []) as { urn: string; type: string }[];
  const urns = clusterUrns(before, cluster);
  const inDest = clusterUrns(destResources, cluster).length > 0;
  if (!urns.length) {
    log(`${cluster}: nothing in ${from}'s state${inDest ? ` (already in ${to})` : " (never deployed)"}; nothing to move`);
    return;
  }
  if (inDest) throw new Error(`cluster ${cluster} has resources in both ${from} and ${to}: resolve that by hand before moving (pulumi stack export)`);
  const cli = (args: string[]) => runCli(source, [...args, "--yes", "--non-interactive"]);
  await cli(["state", "move", "--source", from, "--dest", to, ...urns]);
  const after = (await source.exportStack()).deployment?.resources ?? [];
  const left = clusterUrns(after, cluster);
  if (left.length) throw new Error(`pulumi state move left ${left.length} resource(s) of ${cluster} in ${from}: ${left.slice(0, 3).join(", ")}`);
  // The engine copies providers rather than moving them; the source's copies now serve nothing there
  // (removing one from the state touches no cluster), and would otherwise show as deletes in its preview.
  const copies = providerUrns(after, cluster);
  if (copies.length) await cli(["state", "delete", "--stack", from, ...copies]);
  log(`${cluster}: moved ${urns.length} resource(s) and their children from ${from} to ${to} (pulumi state move)`);
  const moved = new Set(urns);
  const note = contentsLeftBehindNote(
    cluster,
    from,
    to,
    contentsLeftBehind(
      before.filter((r) => moved.has(r.urn)),
      destResources,
    ),
  );
  if (note) log(note);
}
