/**
 * `npm run validate -- REPO [--stack NAME] [--path P] [--name GITREPO] [--branch B | --revision R] [--allow-chart-url REGEX]`
 * Checks a GitRepo's fleet.yaml files and renders every bundle for the stack's clusters (their labels,
 * groups and templateValues from stacks/Pulumi.<stack>.yaml), offline: no kubeconfig is read, no
 * cluster is contacted, no engine runs. Each problem is one line, `file:line field: reason (bundle,
 * clusters)`; the exit code is 1 when there is any. The pipeline is `up`'s (core/plan/pipeline.ts
 * planBundles, core/render/deployments.ts), so what passes here renders the same there.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { resolveSource, Source } from "../core/source/git";
import { loadStackFile, planBundles } from "../core/plan/pipeline";
import { PROJECT_DIR } from "../core/base/project-dir";
import { renderDeployments } from "../core/render/deployments";
import { checkSingleOwner } from "../core/render/single-owner";
import { runRenderer } from "../core/renderer/fleet-render";
import { withRenderBudget } from "../core/renderer/render-budget";
import { CONFIG_NAMESPACE, StackConfig, stackFileFor } from "../core/config/stack";
import { GitRepoConfig, gitRepoEntry } from "../core/config/git-repo";
import { FleetError } from "../core/base/errors";
import { lineOfField } from "../core/bundles/field-lines";
import { problemLines, warningLine } from "./validate-report";
import { CommandSpec, OptionSpec, parseCommand, runMain, UsageError } from "./cli";

const SPEC = {
  usage: "npm run validate -- REPO [--stack NAME] [--path P] [--name GITREPO] [--branch B | --revision R] [--allow-chart-url REGEX]",
  summary: "Checks REPO's fleet.yaml files (a git URL or a directory) and renders every bundle for the stack's clusters, offline.",
  positionals: ["REPO"],
  options: {
    stack: { type: "string", value: "NAME", help: "the clusters (labels, groups, templateValues) of stacks/Pulumi.NAME.yaml (default local)" },
    path: { type: "string", value: "P", multiple: true, help: "a bundle path inside the repository (default: the stack's GitRepo's paths, else all)" },
    name: { type: "string", value: "GITREPO", help: "the GitRepo's name (default: the stack's GitRepos of this repo, else the repository's own name)" },
    branch: { type: "string", value: "B", help: "the branch to read" },
    revision: { type: "string", value: "R", help: "the commit or tag to read" },
    "allow-chart-url": {
      type: "string",
      value: "REGEX",
      multiple: true,
      help: "a chart URL remote charts may be pulled from (default: the stack's GitRepo's allowedChartURLs, else none)",
    },
  },
} satisfies CommandSpec<Record<string, OptionSpec>>;

const isUrl = (repo: string) => /^(https?|ssh|git|file):\/\/|^[\w.-]+@[\w.-]+:/.test(repo);

/** The stack file, its errors with the line of the field they name. */
function readStack(stack: string): StackConfig {
  try {
    return loadStackFile(stack, PROJECT_DIR);
  } catch (err) {
    if (!(err instanceof FleetError) || !err.context.field || err.context.line) throw err;
    const text = fs.readFileSync(path.join(PROJECT_DIR, stackFileFor(stack)), "utf8");
    const line = lineOfField(text, `${CONFIG_NAMESPACE}:${err.context.field}`, ["config"]);
    throw line ? new FleetError(err.reason, { ...err.context, line }) : err;
  }
}

/**
 * The GitRepos to validate: the stack's GitRepos of this repository (their targets, paths and settings;
 * --name picks one), else one that targets every cluster of the stack, so every bundle is rendered for
 * every cluster it may reach.
 */
function gitReposFor(
  repoArg: string,
  config: StackConfig,
  v: { path?: string[]; name?: string; branch?: string; revision?: string; "allow-chart-url"?: string[] },
): GitRepoConfig[] {
  const repo = isUrl(repoArg) ? repoArg : path.resolve(repoArg);
  const known = config.gitRepos.filter((g) => g.repo === repo && (v.name === undefined || g.name === v.name));
  const over = {
    ...(v.path ? { paths: v.path } : {}),
    ...(v.branch ? { branch: v.branch } : {}),
    ...(v.revision ? { revision: v.revision } : {}),
    ...(v["allow-chart-url"] ? { allowedChartURLs: v["allow-chart-url"] } : {}),
  };
  if (known.length) {
    console.error(`validating as GitRepo ${known.map((g) => g.name).join(", ")} of ${config.file} (targets, paths and settings)`);
    return known.map((g) => ({ ...g, ...over }));
  }
  console.error(`${repoArg} is not a GitRepo of ${config.file}: validating it as one that targets every cluster of the stack`);
  return [gitRepoEntry(v.name ?? defaultName(repo), repo, { ...over, targets: [{ name: "all", clusterSelector: {} }] })];
}

/** The repository's own name (its directory, or its URL's last part), as a GitRepo is usually named: bundle names and dependsOn carry it. */
function defaultName(repo: string): string {
  const base = (repo.split(/[/:]/).filter(Boolean).pop() ?? "").replace(/\.git$/, "");
  const name = base
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return name || "validate";
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

const onDisk = (repo: GitRepoConfig) => !isUrl(repo.repo) && repo.branch === undefined && repo.revision === undefined;

async function main(): Promise<void> {
  const started = Date.now();
  const { values: v, positionals } = parseCommand(process.argv.slice(2), SPEC);
  if (v.branch !== undefined && v.revision !== undefined) throw new UsageError("--branch and --revision exclude each other");
  const config = readStack(v.stack ?? "local");
  const repos = gitReposFor(positionals[0], config, v);
  const sources = new Map<string, Source>();
  for (const repo of repos)
    sources.set(repo.name, onDisk(repo) ? { gitRepo: repo.name, commit: "", dir: repo.repo, fetched: false, warnings: [] } : await resolveSource(repo));
  const render = withRenderBudget(runRenderer);
  const read = repos.map((repo) => ({ dir: sources.get(repo.name)!.dir, repo }));
  const { bundles, plan, failures, unreadGitRepos } = await planBundles(read, config, render, { dependenciesNotRead: "warn" });
  for (const err of unreadGitRepos.values()) throw err;
  const byCluster = new Map(config.clusters.map((c) => [c.name, c]));
  const rendered = await renderDeployments(plan.entries, bundles, (g) => sources.get(g)!.commit, render, {
    capabilitiesOf: (c) => ({ kubeVersion: byCluster.get(c)?.kubeVersion, apiVersions: byCluster.get(c)?.apiVersions }),
    onFailure: (e, err) => failures.fail(e, err),
  });
  await checkSingleOwner(new Map(plan.entries.filter((e) => rendered.has(e)).map((e) => [e, rendered.get(e)!])), (e, err) => failures.fail(e, err));
  // Files are shown as the user named the directory; a fetched repository's as its paths inside it.
  const shown = (gitRepo: string) => (onDisk(repos.find((r) => r.name === gitRepo)!) ? positionals[0] : "");
  const textOf = (gitRepo: string, file: string) => fs.readFileSync(path.join(sources.get(gitRepo)!.dir, file), "utf8");
  const warnings = new Set([
    ...bundles.flatMap((b) => (b.warnings ?? []).map((w) => warningLine(b.name, w, (f) => textOf(b.gitRepo, f), shown(b.gitRepo)))),
    ...[...sources.values()].flatMap((s) => s.warnings),
  ]);
  for (const w of warnings) console.log(w);
  const problems = problemLines(failures.list(), textOf, shown);
  for (const p of problems) console.log(p);
  const objects = [...rendered.values()].reduce((n, r) => n + r.objects.length, 0);
  console.log(
    `${count(bundles.length, "bundle")}, ${count(rendered.size, "(bundle, cluster) render")} of ${count(config.clusters.length, "cluster")}, ${count(objects, "object")}, ${count(problems.length, "problem")} (${Date.now() - started} ms)`,
  );
  if (problems.length) process.exitCode = 1;
}

runMain(SPEC, main);
