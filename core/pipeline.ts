/**
 * The whole pure pipeline, stack configuration to plan: sources (git), bundles (fleet.yaml rules),
 * targeting. Any failure stops everything: a GitRepo that cannot be read never becomes "no bundles".
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { configFromStackFile, GitRepoConfig, parseStackConfig, StackConfig, stackFileFor } from "./config/stack";
import { resolveSource, Source } from "./source/git";
import { readBundles } from "./bundles/read";
import { Bundle } from "./bundles/types";
import { buildPlan, Plan } from "./targeting/plan";
import { withContext } from "./errors";

/** The project root: relative paths in stack files (local repositories, renderDir) resolve against it. */
export const PROJECT_DIR = path.resolve(__dirname, "..");

export interface FleetState {
  config: StackConfig;
  sources: Map<string, Source>;
  bundles: Bundle[];
  plan: Plan;
}

export async function readSources(repos: GitRepoConfig[], cacheRoot?: string): Promise<Map<string, Source>> {
  // One at a time per URL is enforced by the cache lock; different repositories resolve in parallel.
  const results = await Promise.all(repos.map((r) => resolveSource(r, cacheRoot)));
  return new Map(results.map((s) => [s.gitRepo, s]));
}

/** GitRepos pinned to the given commits (a plain directory's "dir-" content hash is not a commit: it is read as it is). */
export function pinCommits(repos: GitRepoConfig[], commits: Record<string, string> | undefined): GitRepoConfig[] {
  if (!commits) return repos;
  return repos.map((r) => {
    const commit = commits[r.name];
    return commit && !commit.startsWith("dir-") ? { ...r, revision: commit, branch: undefined } : r;
  });
}

export async function planFleet(config: StackConfig, cacheRoot?: string): Promise<FleetState> {
  const sources = await readSources(config.gitRepos, cacheRoot);
  const bundles = config.gitRepos.flatMap((repo) => {
    try {
      return readBundles(sources.get(repo.name)!.dir, repo);
    } catch (err) {
      throw withContext(err, { gitRepo: repo.name });
    }
  });
  return { config, sources, bundles, plan: buildPlan(bundles, config.clusters, config.clusterGroups) };
}

/** Reads stacks/Pulumi.<stack>.yaml directly (no engine), for the plan and render commands. */
export function loadStackFile(stack: string, projectDir: string): StackConfig {
  const file = stackFileFor(stack);
  const abs = path.join(projectDir, file);
  if (!fs.existsSync(abs)) throw withContext(new Error(`stack file not found`), { file });
  const doc = YAML.parse(fs.readFileSync(abs, "utf8"));
  return parseStackConfig(configFromStackFile(doc, file), file, projectDir);
}
