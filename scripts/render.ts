/**
 * `npm run render -- <repo url or dir> [--path P] [--name GITREPO] [--cluster NAME] [--label k=v ...]
 *  [--group G] [--branch B | --revision R] [--allow-chart-url REGEX ...]`
 * Like `fleet test`: prints which target matched each bundle (`# Matched: <target>`), its deploymentID,
 * and the manifests it deploys, from the same renderer `up` uses (fleet-render: Helm, kustomize, raw
 * YAML, every bundle style). A directory is read as it is on disk (uncommitted edits included) unless
 * --branch or --revision asks for a commit of it.
 */
import * as path from "node:path";
import * as YAML from "yaml";
import { resolveSource, Source } from "../core/source/git";
import { planBundles } from "../core/plan/pipeline";
import { renderDeployments } from "../core/render/deployments";
import { checkSingleOwner } from "../core/render/single-owner";
import { runRenderer } from "../core/renderer/fleet-render";
import { withRenderBudget } from "../core/renderer/render-budget";
import { ClusterConfig } from "../core/config/stack";
import { gitRepoEntry } from "../core/config/git-repo";
import { FleetError } from "../core/base/errors";
import { CommandSpec, OptionSpec, parseCommand, runMain, UsageError } from "./cli";

const SPEC = {
  usage: "npm run render -- REPO [--path P] [--name GITREPO] [--cluster NAME] [--label k=v] [--group G] [--branch B | --revision R] [--allow-chart-url REGEX]",
  summary: "Like `fleet test`: which target matched each bundle of REPO (a git URL or a directory) and what it deploys.",
  positionals: ["REPO"],
  options: {
    path: { type: "string", value: "P", multiple: true, help: "a bundle path inside the repository (default: the whole repository)" },
    name: { type: "string", value: "GITREPO", help: "the GitRepo's name (default test)" },
    cluster: { type: "string", value: "NAME", help: "the cluster's name (default local)" },
    label: { type: "string", value: "k=v", multiple: true, help: "a label of the cluster" },
    group: { type: "string", value: "G", multiple: true, help: "a cluster group the cluster is in and the GitRepo targets (default: default)" },
    branch: { type: "string", value: "B", help: "the branch to read" },
    revision: { type: "string", value: "R", help: "the commit or tag to read" },
    "allow-chart-url": {
      type: "string",
      value: "REGEX",
      multiple: true,
      help: "a chart URL remote charts may be pulled from (the GitRepo's allowedChartURLs; default: none)",
    },
  },
} satisfies CommandSpec<Record<string, OptionSpec>>;

interface Args {
  repo: string;
  paths: string[];
  name: string;
  cluster: string;
  labels: Record<string, string>;
  groups: string[];
  branch?: string;
  revision?: string;
  allowedChartURLs: string[];
}

function parse(argv: string[]): Args {
  const { values: v, positionals } = parseCommand(argv, SPEC);
  if (v.branch !== undefined && v.revision !== undefined) throw new UsageError("--branch and --revision exclude each other");
  const labels: Record<string, string> = {};
  for (const l of v.label ?? []) {
    const eq = l.indexOf("=");
    if (eq <= 0) throw new UsageError(`--label ${l}: expected key=value`);
    labels[l.slice(0, eq)] = l.slice(eq + 1);
  }
  return {
    repo: positionals[0],
    paths: v.path ?? [],
    name: v.name ?? "test",
    cluster: v.cluster ?? "local",
    labels,
    groups: v.group ?? [],
    branch: v.branch,
    revision: v.revision,
    allowedChartURLs: v["allow-chart-url"] ?? [],
  };
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const isUrl = /^(https?|ssh|git|file):\/\/|^[\w.-]+@[\w.-]+:/.test(args.repo);
  const repo = gitRepoEntry(args.name, isUrl ? args.repo : path.resolve(args.repo), {
    paths: args.paths,
    branch: args.branch,
    revision: args.revision,
    allowedChartURLs: args.allowedChartURLs,
  });
  const cluster: ClusterConfig = { name: args.cluster, labels: args.labels, annotations: {}, templateValues: {}, deleteUnreachable: false };
  // As `fleet test`: the cluster is in the given groups (default: "default", Fleet's default target),
  // and the GitRepo targets those groups.
  const groupNames = args.groups.length ? args.groups : ["default"];
  const groups = groupNames.map((g) => ({ name: g, labels: {}, selector: {} }));
  repo.targets = groupNames.map((g) => ({ name: g, clusterGroup: g }));
  const onDisk = !isUrl && args.branch === undefined && args.revision === undefined;
  const source: Source = onDisk ? { gitRepo: repo.name, commit: "", dir: repo.repo, fetched: false, warnings: [] } : await resolveSource(repo);
  // One render budget for the GitRepo over every batch, as in `up` (core/renderer/render-budget.ts).
  const render = withRenderBudget(runRenderer);
  // A broken bundle fails alone, as in `up`: the others are rendered, each failure printed, and the command fails at the end.
  // A dependsOn on a bundle outside the paths read is a warning, as `fleet test` renders such a bundle (up refuses it).
  const {
    bundles,
    plan: planned,
    failures,
    unreadGitRepos,
  } = await planBundles([{ dir: source.dir, repo }], { clusters: [cluster], clusterGroups: groups }, render, { dependenciesNotRead: "warn" });
  for (const err of unreadGitRepos.values()) throw err;
  const rendered = await renderDeployments(planned.entries, bundles, () => source.commit, render, { onFailure: (e, err) => failures.fail(e, err) });
  await checkSingleOwner(new Map(planned.entries.filter((e) => rendered.has(e)).map((e) => [e, rendered.get(e)!])), (e, err) => failures.fail(e, err));
  const plan = { ...planned, entries: failures.settle(planned.entries.filter((e) => rendered.has(e))) };
  for (const b of bundles) {
    if (failures.has({ gitRepo: b.gitRepo, bundle: b.name, cluster: cluster.name })) continue;
    const entry = plan.entries.find((e) => e.gitRepo === b.gitRepo && e.bundle === b.name);
    console.log(`# Bundle: ${b.name} (${b.path})`);
    if (!entry) {
      const skipped = plan.skipped.find((s) => s.gitRepo === b.gitRepo && s.bundle === b.name);
      console.log(skipped ? `# Matched: ${skipped.target} (doNotDeploy)` : "# Matched: none");
      continue;
    }
    const r = rendered.get(entry)!;
    console.log(`# Matched: ${entry.target}${entry.customizations.length ? ` (customizations: ${entry.customizations.join(", ")})` : ""}`);
    console.log(`# deploymentID: ${entry.deploymentId}`);
    console.log(`# style: ${r.style}`);
    for (const w of r.warnings) console.log(`# warning: ${w}`);
    for (const o of r.objects) process.stdout.write(`---\n${YAML.stringify(o, { sortMapEntries: true })}`);
  }
  const failed = failures.list();
  for (const f of failed) console.log(`# Bundle: ${f.bundle}\n# Error: ${f.message}`);
  if (failed.length)
    throw new FleetError(`${failed.length} bundle(s) failed (the others are rendered above):\n${failed.map((f) => `  ${f.message}`).join("\n")}`);
}

runMain(SPEC, main);
