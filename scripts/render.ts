/**
 * `npm run render -- <repo url or dir> [--path P] [--name GITREPO] [--cluster NAME] [--label k=v ...]
 *  [--group G] [--branch B | --revision R]`
 * Like `fleet test`: prints which target matched each bundle (`# Matched: <target>`) and the manifests of
 * raw YAML bundles (overlays and namespace rules applied), or the chart / kustomize reference with the
 * final values for helm and kustomize bundles.
 */
import * as path from "node:path";
import * as YAML from "yaml";
import { resolveSource } from "../core/source/git";
import { readBundles } from "../core/bundles/read";
import { buildPlan } from "../core/targeting/plan";
import { renderRawObjects } from "../core/bundles/manifests";
import { ClusterConfig, GitRepoConfig } from "../core/config/stack";
import { FleetError } from "../core/errors";

interface Args { repo: string; paths: string[]; name: string; cluster: string; labels: Record<string, string>; groups: string[]; branch?: string; revision?: string }

function parseArgs(argv: string[]): Args {
  const args: Args = { repo: "", paths: [], name: "test", cluster: "local", labels: {}, groups: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--path") args.paths.push(next());
    else if (a === "--name") args.name = next();
    else if (a === "--cluster") args.cluster = next();
    else if (a === "--group") args.groups.push(next());
    else if (a === "--branch") args.branch = next();
    else if (a === "--revision") args.revision = next();
    else if (a === "--label") {
      const [k, ...v] = next().split("=");
      args.labels[k] = v.join("=");
    } else if (a.startsWith("--")) throw new Error(`unknown option ${a}`);
    else args.repo = a;
  }
  if (!args.repo) throw new Error("usage: npm run render -- <repo url or dir> [--path P] [--name GITREPO] [--cluster NAME] [--label k=v] [--group G]");
  return args;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const isUrl = /^(https?|ssh|git|file):\/\/|^[\w.-]+@[\w.-]+:/.test(args.repo);
  const repo: GitRepoConfig = {
    name: args.name, repo: isUrl ? args.repo : path.resolve(args.repo), paths: args.paths, branch: args.branch, revision: args.revision,
    targets: [], keepResources: false, deleteNamespace: false, paused: false, allowEmpty: false, insecureSkipTLSVerify: false,
  };
  const cluster: ClusterConfig = { name: args.cluster, labels: args.labels, annotations: {}, templateValues: {}, deleteUnreachable: false };
  // As `fleet test`: the cluster is in the given groups (default: "default", Fleet's default target),
  // and the GitRepo targets those groups.
  const groupNames = args.groups.length ? args.groups : ["default"];
  const groups = groupNames.map((g) => ({ name: g, labels: {}, selector: {} }));
  repo.targets = groupNames.map((g) => ({ name: g, clusterGroup: g }));
  const source = await resolveSource(repo);
  const bundles = readBundles(source.dir, repo);
  const plan = buildPlan(bundles, [cluster], groups);
  for (const b of bundles) {
    const entry = plan.entries.find((e) => e.bundle === b.name);
    console.log(`# Bundle: ${b.name} (${b.path})`);
    if (!entry) {
      const skipped = plan.skipped.find((s) => s.bundle === b.name);
      console.log(skipped ? `# Matched: ${skipped.target} (doNotDeploy)` : "# Matched: none");
      continue;
    }
    console.log(`# Matched: ${entry.target}${entry.customizations.length ? ` (customizations: ${entry.customizations.join(", ")})` : ""}`);
    console.log(`# deploymentID: ${entry.deploymentId}`);
    if (b.style.kind === "yaml") {
      const objects = renderRawObjects(b.files, entry.options, { gitRepo: b.gitRepo, bundle: b.name, cluster: cluster.name });
      for (const o of objects) process.stdout.write(`---\n${YAML.stringify(o)}`);
    } else if (b.style.kind === "kustomize") {
      process.stdout.write(YAML.stringify({ kustomize: { dir: path.posix.join(b.path, entry.options.kustomize?.dir ?? b.style.dir) }, namespace: entry.namespace }));
    } else {
      const chart = b.style.path ? { path: path.posix.join(b.path, b.style.path) } : { repo: b.style.repo, chart: b.style.chart, version: b.style.version };
      process.stdout.write(YAML.stringify({ helm: { ...chart, releaseName: entry.releaseName, namespace: entry.namespace, values: entry.options.helm?.values ?? {} } }));
    }
  }
}

main().catch((err) => {
  console.error(err instanceof FleetError ? `error: ${err.message}` : err);
  process.exit(1);
});
