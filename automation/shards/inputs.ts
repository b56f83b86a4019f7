/**
 * Which shards an `up` or `preview` of a sharded environment can leave out: a shard whose inputs are
 * exactly those of its last successful update has, by construction, nothing to do (an update without
 * --refresh compares the program's resources with the state only; it reads no cluster). The inputs are
 * fingerprinted here, before any engine runs:
 *  - the shard's own part of its stack file as written (its clusters' entries with their encrypted
 *    values, the GitRepos without their targets, the global settings): an edit that concerns other
 *    shards' clusters only, or a target edit, does not change it;
 *  - its plan, from the same pure pipeline the program runs: every (bundle, cluster) with its target,
 *    options and deploymentID (Fleet's content address of the bundle, pulled charts included) and the
 *    commits the GitRepos resolved to: that is what a target edit or a new commit changes;
 *  - the code that turns them into resources (automation/engine/program-code.ts), and the ambient kubeconfig's content when one of its clusters is
 *    reached through it (core/config/cluster-access.ts).
 * The fingerprint is recorded as the stack output `inputs` by each successful update the shard runner
 * starts (none when it left a cluster out). A shard runs anyway when its last update was not a
 * successful `up` run this way (a failed or interrupted one, a refresh, a plain `pulumi up`), when its
 * crash journal has entries, while a rollback is pinned, when one of its clusters does not answer a
 * probe, when its plan could not read a GitRepo or bundle here, when one of its bundles has
 * correctDrift (its update refreshes first) or helm.valuesFrom (values the fingerprint cannot see), or
 * with --all-shards or --refresh.
 */
import { createHash } from "node:crypto";
import { asPulumiKeeps, checkShardStackFile, loadStackConfig } from "../../core/config/shard-files";
import { stableJson } from "../../core/base/hash";
import { ambientKubeconfigText, usesAmbientKubeconfig } from "../../core/config/cluster-access";
import { configFromValues, planFleet, readSources } from "../../core/plan/pipeline";
import { probedAndObserved } from "../operation/session";
import { lastRecorded } from "./recorded";
import { rememberingRenderer } from "../../core/renderer/render-memo";
import { withRenderBudget } from "../../core/renderer/render-budget";
import { runRenderer } from "../../core/renderer/fleet-render";
import type { Renderer } from "../../core/model/renderer-protocol";
import { pinCommits } from "../../core/desired/previous";
import { resolveBackend } from "../engine/backend";
import { openStack } from "../engine/stack";
import { programCodeHash } from "../engine/program-code";

export interface ShardInputs {
  fingerprint: string;
  /** The commit each GitRepo resolved to: the shard's update deploys exactly these (DeployOptions.commits). */
  commits: Record<string, string>;
  /** Why the shard must run whatever its fingerprint (correctDrift, helm.valuesFrom), if it must. */
  mustRun?: string;
  /** Not render mode: its clusters are probed before it is left out. */
  reachesClusters: boolean;
}

/**
 * `commits`: the commit per GitRepo to plan with (as the update will deploy it); default: resolve each.
 * `render`: what plans it (a decision shares one among its shards: core/renderer/render-memo.ts).
 */
export async function shardInputs(dir: string, stack: string, commits?: Record<string, string>, cacheRoot?: string, render?: Renderer): Promise<ShardInputs> {
  const { raw, config } = loadStackConfig(dir, stack);
  const members = new Set(config.clusters.map((c) => c.name));
  const { clusters: _c, clusterGroups: _g, gitRepos, helmOps, shards: _s, shard: _sh, ...global } = raw as Record<string, unknown>;
  const state = await planFleet({ ...config, gitRepos: pinCommits(config.gitRepos, commits) }, cacheRoot, render);
  // As written: an encrypted kubeconfig is an object here, so it still counts as the cluster's own.
  const memberEntries = ((raw.clusters ?? []) as { name?: string; kubeconfig?: unknown }[]).filter((c) => members.has(String(c.name)));
  const entries = state.plan.entries.map((e) => [
    e.gitRepo,
    e.bundle,
    e.cluster,
    e.target,
    e.customizations,
    e.namespace,
    e.releaseName,
    e.deploymentId,
    e.paused,
    e.dependsOn,
    e.options,
  ]);
  const parts = {
    // As Pulumi keeps them: the CLI's rewrite of a new stack's file (`5` as `"5"`) changes no fingerprint.
    global: asPulumiKeeps(global),
    clusters: memberEntries,
    gitRepos: ((gitRepos ?? []) as Record<string, unknown>[]).map(({ targets: _t, ...rest }) => rest),
    // A HelmOp's targets, as a GitRepo's, count through the plan's entries: an edit of them reruns the shards it reaches only.
    helmOps: ((helmOps ?? []) as Record<string, unknown>[]).map(({ targets: _t, ...rest }) => rest),
    commits: [...state.sources.values()].map((s) => [s.gitRepo, s.commit]),
    entries,
    code: programCodeHash(),
    kubeconfig: memberEntries.some(usesAmbientKubeconfig) ? createHash("sha256").update(ambientKubeconfigText()).digest("hex") : "",
  };
  const drift = state.plan.entries.find((e) => e.options.correctDrift?.enabled);
  // Its values live on the cluster, which the fingerprint does not read: a changed value must still deploy.
  const valuesFrom = state.plan.entries.find((e) => e.options.helm?.valuesFrom?.length);
  // What the plan could not read here (a GitRepo whose credentials are secrets of the stack file, which this
  // decision does not decrypt; a bundle that failed) is in no fingerprint: its change must not go unseen.
  const [unreadRepo] = state.unreadGitRepos.keys();
  const [failed] = state.failures.list();
  const mustRun = drift
    ? `bundle ${drift.bundle} on ${drift.cluster} has correctDrift (its update refreshes first)`
    : valuesFrom
      ? `bundle ${valuesFrom.bundle} on ${valuesFrom.cluster} has helm.valuesFrom (its values are read from the cluster at each update)`
      : unreadRepo !== undefined
        ? `gitRepo ${unreadRepo} could not be read here (its credentials may be secrets of the stack file, which this decision does not decrypt)`
        : failed || state.unread.length
          ? "a bundle of its plan could not be read or planned"
          : undefined;
  return {
    fingerprint: createHash("sha256").update(stableJson(parts)).digest("hex"),
    commits: Object.fromEntries([...state.sources.values()].map((s) => [s.gitRepo, s.commit])),
    reachesClusters: config.renderDir === undefined,
    ...(mustRun ? { mustRun } : {}),
  };
}

export interface ShardDecision {
  shard: string;
  stack: string;
  fingerprint: string;
  commits: Record<string, string>;
  /** undefined: it runs; else why it is left out. */
  skip?: string;
}

/**
 * Whether one of the stack's clusters does not answer now, probed as an operation probes them (its settings
 * as the engine reads them, secrets decrypted), when each was last seen kept as an operation keeps it: a
 * stack left out must not hide a cluster that went down, which its up reports. Asked only outside render
 * mode (ShardInputs.reachesClusters).
 */
async function anyUnreachable(stack: string): Promise<boolean> {
  const opened = await openStack({ stack, existing: true });
  const all = await opened.getAllConfig();
  const config = configFromValues((key) => all[key]?.value, stack);
  const { unreachable } = await probedAndObserved(resolveBackend(), { stack }, config.clusters);
  return unreachable.size > 0;
}

/** Every shard's inputs, and (when `mayLeaveOut`) which shards have nothing to do. */
export async function decideShards(dir: string, shards: { shard: string; stack: string }[], mayLeaveOut: boolean): Promise<ShardDecision[]> {
  // Every shard is a copy of one definition: its GitRepos resolve once, and every shard deploys those commits.
  const { gitRepos } = loadStackConfig(dir, shards[0].stack).config;
  // A GitRepo that cannot be resolved is not pinned: each shard reads it and it fails there alone.
  // A HelmOp that is not polled keeps the version each shard recorded (core/desired/previous.ts): not pinned here.
  const { sources } = await readSources(gitRepos.filter((r) => !r.helmOp || r.helmOp.polled));
  for (const s of sources.values()) s.dispose?.();
  const commits = Object.fromEntries([...sources.values()].map((s) => [s.gitRepo, s.commit]));
  // So the shards' identical batches of content jobs (their bundles, from the same checkouts) render once.
  const render = rememberingRenderer(withRenderBudget(runRenderer));
  return Promise.all(shards.map((s) => decideShard(dir, s, commits, render, mayLeaveOut)));
}

async function decideShard(
  dir: string,
  s: { shard: string; stack: string },
  commits: Record<string, string>,
  render: Renderer,
  mayLeaveOut: boolean,
): Promise<ShardDecision> {
  // A shard file out of date with its definition (or naming another shard) runs, and its operation refuses it:
  // never left out unnoticed.
  let current = true;
  try {
    checkShardStackFile(dir, s.stack);
  } catch {
    current = false;
  }
  const inputs = await shardInputs(dir, s.stack, commits, undefined, render);
  const decision = { ...s, fingerprint: inputs.fingerprint, commits: inputs.commits };
  if (!mayLeaveOut || inputs.mustRun || !current) return decision;
  if ((await lastRecorded(s.stack)) !== inputs.fingerprint) return decision;
  // A cluster that does not answer (or cannot be probed here) is the up's to report: it runs. Render mode probes none.
  if (inputs.reachesClusters && (await anyUnreachable(s.stack).catch(() => true))) return decision;
  return { ...decision, skip: `inputs unchanged since its last successful up (${inputs.fingerprint.slice(0, 12)})` };
}
