/**
 * The whole pure pipeline, stack configuration to plan: sources (git), bundles (fleet.yaml rules),
 * targeting. Any failure stops everything: a GitRepo that cannot be read never becomes "no bundles".
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { CONFIG_NAMESPACE, configFromStackFile, GitRepoConfig, parseStackConfig, StackConfig, stackFileFor, TOP_LEVEL_KEYS } from "./config/stack";
import { resolveSource, Source } from "./source/git";
import { readBundles } from "./bundles/read";
import { Bundle } from "./bundles/types";
import { buildPlan, Plan } from "./targeting/plan";
import { withContext } from "./errors";
import { Renderer, runRenderer } from "./render/fleet-render";

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

/** `render` runs fleet-render's content jobs (core/desired/facts.ts); the real one by default. */
export async function planFleet(config: StackConfig, cacheRoot?: string, render: Renderer = runRenderer): Promise<FleetState> {
  const sources = await readSources(config.gitRepos, cacheRoot);
  const bundles = config.gitRepos.flatMap((repo) => {
    try {
      return readBundles(sources.get(repo.name)!.dir, repo, render);
    } catch (err) {
      throw withContext(err, { gitRepo: repo.name });
    }
  });
  return { config, sources, bundles, plan: buildPlan(bundles, config.clusters, config.clusterGroups, render) };
}

/** Reads stacks/Pulumi.<stack>.yaml directly (no engine), for the plan and render commands. */
export function loadStackFile(stack: string, projectDir: string): StackConfig {
  const file = stackFileFor(stack);
  const abs = path.join(projectDir, file);
  if (!fs.existsSync(abs)) throw withContext(new Error(`stack file not found`), { file });
  const doc = YAML.parse(fs.readFileSync(abs, "utf8"));
  return parseStackConfig(configFromStackFile(doc, file), file, projectDir);
}

/** The stack configuration from `<namespace>:<key>` values as the engine stores them (JSON text for structures). */
export function configFromValues(get: (key: string) => string | undefined, stack: string): StackConfig {
  const raw: Record<string, unknown> = {};
  for (const key of TOP_LEVEL_KEYS) {
    const text = get(`${CONFIG_NAMESPACE}:${key}`);
    if (text === undefined) continue;
    try {
      raw[key] = JSON.parse(text);
    } catch {
      raw[key] = text;
    }
  }
  return parseStackConfig(raw, stackFileFor(stack), PROJECT_DIR);
}
