/**
 * The whole pure pipeline, stack configuration to plan: sources (git), bundles (fleet.yaml rules),
 * targeting. A GitRepo that cannot be read is in `unreadGitRepos` (it never becomes "no bundles": its
 * deployments are held, held.ts); a bundle, or a (bundle, cluster) pair, that fails is recorded in
 * `failures` and left out of the plan, with whatever depends on it on that cluster
 * (core/plan/failures.ts): the rest still deploys.
 */
import { parseYamlFile } from "../base/yaml-documents";
import * as fs from "node:fs";
import * as path from "node:path";
import { ClusterConfig, CONFIG_NAMESPACE, configFromStackFile, parseStackConfig, StackConfig, stackFileFor, TOP_LEVEL_KEYS } from "../config/stack";
import { STACK_FIELDS } from "../config/stack-fields";
import { GitRepoConfig } from "../config/git-repo";
import { Source } from "../source/types";
import { readSource } from "../source/read-source";
import { gitBounds } from "../source/git-bounds";
import { settleLimited } from "../base/settle-limited";
import { stopSignal, throwIfStopped } from "../base/stop-signal";
import { readBundles, UnreadBundle } from "../bundles/read";
import { FailedDeployments } from "./failures";
import { bundleRef } from "../model/keys";
import { Bundle } from "../bundles/types";
import { Plan, PlanIsolation, planTargets } from "../targeting/plan";
import { decideTargets, TargetedStack, Targeting } from "../targeting/match";
import { Rollout } from "../targeting/rollout";
import { FleetError, withContext } from "../base/errors";
import { runRenderer } from "../renderer/fleet-render";
import { withRenderBudget } from "../renderer/render-budget";
import { Renderer } from "../model/renderer-protocol";
import { PROJECT_DIR } from "../base/project-dir";

export interface FleetState {
  config: StackConfig;
  sources: Map<string, Source>;
  /** The bundles that were read. */
  bundles: Bundle[];
  /** Only pairs that deploy: failed ones, and those waiting for them, are in `failures` (narrowed as later stages fail pairs). */
  plan: Plan;
  /** Bundles that could not be read. */
  unread: UnreadBundle[];
  /**
   * GitRepos that could not be read as a whole (source, paths, bundle count, a symlinked fleet.yaml...):
   * each keeps what it deployed (held.ts) and every other GitRepo deploys.
   */
  unreadGitRepos: Map<string, FleetError>;
  /** Grows as later stages (rendering, checks) fail pairs; complete once the desired state is computed. */
  failures: FailedDeployments;
  /** What every target of the stack and its bundles selects (core/targeting/match.ts), matched once. */
  targeting: Targeting;
  /** Per bundle with a rolloutStrategy (by bundle ref, core/model/keys.ts): its partitions and waves, set once the desired state is computed. */
  rollouts?: Map<string, BundleRollout>;
  /** Per deployment key, the digest of what decides the pair's apply (core/plan/stalled.ts pairInputs), set once the desired state is computed. */
  pairInputs?: Map<string, string>;
}

/** A bundle's rollout as this update walks it (core/targeting/rollout.ts), with where it differs from Fleet. */
export interface BundleRollout extends Rollout {
  gitRepo: string;
  bundle: string;
  warnings: string[];
}

/**
 * Each GitRepo's source, and why those that cannot be read could not (each fails alone): every read is
 * its own task with its own bounds (git-bounds.ts), at most PULUMI_FLEET_GIT_CONCURRENCY at once, so a
 * remote that stalls holds one slot for its low-speed time and every other GitRepo is read meanwhile.
 */
export async function readSources(
  repos: GitRepoConfig[],
  cacheRoot?: string,
  resolve: typeof readSource = readSource,
): Promise<{ sources: Map<string, Source>; failed: Map<string, FleetError> }> {
  // The operator's setting: a bad value stops the run (naming the variable), not one GitRepo.
  const { concurrency } = gitBounds();
  // One at a time per URL is enforced by the cache lock; different repositories resolve in parallel.
  const results = await settleLimited(repos, concurrency, (r) => resolve(r, cacheRoot));
  const sources = new Map<string, Source>();
  const failed = new Map<string, FleetError>();
  results.forEach((r, i) => {
    if (r.status === "fulfilled") sources.set(r.value.gitRepo, r.value);
    else if (stopSignal.aborted)
      throw r.reason; // a stopped operation is no GitRepo's failure
    else failed.set(repos[i].name, withContext(r.reason, { gitRepo: repos[i].name }));
  });
  return { sources, failed };
}

/** `render` runs fleet-render's content jobs (core/desired/facts.ts); the real one by default. */
export async function planFleet(config: StackConfig, cacheRoot?: string, render: Renderer = withRenderBudget(runRenderer)): Promise<FleetState> {
  const { sources, failed } = await readSources(config.gitRepos, cacheRoot);
  const read = config.gitRepos.filter((repo) => sources.has(repo.name)).map((repo) => ({ dir: sources.get(repo.name)!.dir, repo }));
  let planned: Awaited<ReturnType<typeof planBundles>>;
  try {
    planned = await planBundles(read, config, render);
  } finally {
    for (const s of sources.values()) s.dispose?.(); // read into memory: a HelmOp's directory (its values) goes
  }
  for (const [name, err] of failed) planned.unreadGitRepos.set(name, err);
  return { config, sources, ...planned };
}

/**
 * Each checked-out GitRepo's bundles, and their plan: a bundle, or a (bundle, cluster) pair, that fails
 * is in `failures` (with what waits for it) and not in the plan. What concerns a whole GitRepo is in
 * `unreadGitRepos`, and none of its bundles is planned.
 */
export async function planBundles(
  read: { dir: string; repo: GitRepoConfig }[],
  stack: TargetedStack & { clusters: ClusterConfig[] },
  render: Renderer = runRenderer,
  opts: Pick<PlanIsolation, "dependenciesNotRead"> = {},
): Promise<Pick<FleetState, "bundles" | "plan" | "unread" | "failures" | "unreadGitRepos" | "targeting">> {
  const failures = new FailedDeployments();
  const unread: UnreadBundle[] = [];
  const unreadGitRepos = new Map<string, FleetError>();
  const bundles: Bundle[] = [];
  // One GitRepo after the other: their renderer batches share the runner's cores.
  for (const { dir, repo } of read) {
    // Reading a checkout between batches is synchronous but short (bounded files); a stopped operation reads no further.
    throwIfStopped();
    const unreadHere: UnreadBundle[] = [];
    try {
      bundles.push(
        ...(await readBundles(dir, repo, render, (b, err) => {
          unreadHere.push(b);
          failures.fail({ ...b, cluster: "" }, err);
        })),
      );
      unread.push(...unreadHere);
    } catch (err) {
      if (stopSignal.aborted) throw err;
      // The whole GitRepo fails: none of its bundles is planned, so their own failures would say less.
      for (const b of unreadHere) failures.forget({ ...b, cluster: "" });
      unreadGitRepos.set(repo.name, withContext(err, { gitRepo: repo.name }));
    }
  }
  refuseHelmOpsNamedAsBundles(bundles, unreadGitRepos);
  // Every target of the stack and of the bundles read is matched here, once; the decisions after read the answers.
  const targeting = decideTargets(stack, bundles);
  const plan = await planTargets(bundles, stack.clusters, targeting.bundles, render, {
    ...opts,
    onFailure: (pair, err) => failures.fail(pair, err),
    unread: new Set(unread.map(bundleRef)),
  });
  return { bundles, plan: { ...plan, entries: failures.settle(plan.entries) }, unread, failures, unreadGitRepos, targeting };
}

/**
 * Fleet's HelmOp fails when a bundle of its name exists that is not its own ("a non-helmops bundle already
 * exists"): here a GitRepo's bundle named as a HelmOp (fleet.yaml `name:`) leaves the HelmOp unread (its
 * deployments held) and the GitRepo's bundle deploys.
 */
function refuseHelmOpsNamedAsBundles(bundles: Bundle[], unreadGitRepos: Map<string, FleetError>): void {
  const gitRepoBundles = new Map(bundles.filter((b) => !b.helmOp).map((b) => [b.name, b]));
  for (let i = bundles.length - 1; i >= 0; i--) {
    const b = bundles[i];
    const other = b.helmOp && gitRepoBundles.get(b.name);
    if (!other) continue;
    unreadGitRepos.set(
      b.gitRepo,
      new FleetError(`a non-helmops bundle already exists with name ${b.name}; aborting (GitRepo ${other.gitRepo}'s ${other.path || "."})`, {
        gitRepo: b.gitRepo,
      }),
    );
    bundles.splice(i, 1);
  }
}

/** Reads stacks/Pulumi.<stack>.yaml directly (no engine), for the plan and render commands. */
export function loadStackFile(stack: string, projectDir: string): StackConfig {
  const file = stackFileFor(stack);
  const abs = path.join(projectDir, file);
  if (!fs.existsSync(abs)) throw withContext(new Error(`stack file not found`), { file });
  const doc = parseYamlFile(fs.readFileSync(abs, "utf8"), file) as Parameters<typeof configFromStackFile>[0];
  return parseStackConfig(configFromStackFile(doc, file), file, projectDir);
}

/** The stack configuration from `<namespace>:<key>` values as the engine stores them (JSON text for structures). */
export function configFromValues(get: (key: string) => string | undefined, stack: string): StackConfig {
  const raw: Record<string, unknown> = {};
  for (const key of TOP_LEVEL_KEYS) {
    const text = get(`${CONFIG_NAMESPACE}:${key}`);
    if (text === undefined) continue;
    // A string field is its text (a label key "123" or "null" stays one), a whole number's digits are read as the
    // file reader reads them (" 5" or "1e1" refused by both); other values as Pulumi serialized them.
    const kind = STACK_FIELDS[key as keyof typeof STACK_FIELDS]?.type.kind;
    if (kind === "string" || kind === "configInteger") {
      raw[key] = text;
      continue;
    }
    try {
      raw[key] = JSON.parse(text);
    } catch {
      raw[key] = text;
    }
  }
  return parseStackConfig(raw, stackFileFor(stack), PROJECT_DIR);
}
