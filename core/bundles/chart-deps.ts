/**
 * Chart dependencies as Fleet resolves them: when a local chart's dependencies (Chart.yaml, or a v1
 * chart's requirements.yaml) are not all in its charts/ directory, Fleet runs Helm's dependency update
 * while reading the bundle, unless helm.disableDependencyUpdate. Here a `file://` dependency is read
 * from the repository (through the checkout: it may leave the bundle, never the checkout), and a
 * remote one (https, http, oci) is pulled as remote charts are (remote-charts.ts: the GitRepo's
 * credentials, helmRepoURLRegex and allowedChartURLs). The files join the bundle under
 * `<chart>/.chart-deps/<name>/`, where fleet-render adds each missing dependency to the chart after
 * Helm's version check (tools/fleet-render/chartdeps.go). Any other repository (an `@alias` of the
 * agent's Helm repositories) is an error naming the chart and dependency.
 */
import * as path from "node:path";
import { FleetError, withContext } from "../base/errors";
import { GitRepoConfig } from "../config/git-repo";
import { Renderer } from "../model/renderer-protocol";
import { Checkout, joinRel } from "./checkout";
import { manifestIdOf, readBundleFiles } from "./content";
import { readYamlAsFleet } from "./goyaml";
import { pullRemoteChartsEach } from "./remote-charts";
import { Bundle, BundleFile } from "./types";

interface Dependency {
  name: string;
  version: string;
  repository: string;
}

const DEPS_DIR = ".chart-deps";

export async function withChartDependencies(
  checkout: Checkout,
  bundles: Bundle[],
  repo: GitRepoConfig,
  render: Renderer,
  onFailure?: (b: Bundle, err: unknown) => void,
): Promise<Bundle[]> {
  // With onFailure, a bundle whose dependencies fail is handed to it and left out; else the first failure is thrown.
  const failed = new Set<Bundle>();
  const fail = (b: Bundle, err: unknown) => {
    if (!onFailure) throw err;
    if (!failed.has(b)) onFailure(b, err);
    failed.add(b);
  };
  const charts = bundles.filter((b) => chartDirOf(b) !== undefined && !b.options.helm?.disableDependencyUpdate);
  const texts = charts.flatMap((b) =>
    ["Chart.yaml", "requirements.yaml"].flatMap((name) => {
      const file = b.files.find((f) => f.name === joinRel(chartDirOf(b)!, name));
      return file ? [{ key: `${b.name}\u0000${name}`, text: file.content, file: joinRel(b.path, file.name), ctx: { gitRepo: b.gitRepo, bundle: b.name } }] : [];
    }),
  );
  const byName = new Map(charts.map((b) => [b.name, b]));
  const docs = await readYamlAsFleet(texts, render, (t, err) => fail(byName.get(t.key.split("\u0000")[0])!, err));
  const wanted = new Map<Bundle, Dependency[]>();
  for (const b of charts) {
    if (failed.has(b)) continue;
    const deps = [...dependenciesOf(docs.get(`${b.name}\u0000Chart.yaml`)), ...dependenciesOf(docs.get(`${b.name}\u0000requirements.yaml`))];
    const missing = deps.filter((d) => !vendored(b, d.name));
    if (missing.length) wanted.set(b, missing);
  }
  if (!wanted.size) return bundles.filter((b) => !failed.has(b));
  // Remote dependencies: one batch, as remote charts.
  const remote = [...wanted].map(([b, deps]) => ({
    bundleRel: b.path,
    ctx: { gitRepo: b.gitRepo, bundle: b.name, file: b.fleetYaml },
    sources: deps
      .filter((d) => /^(https?|oci):\/\//.test(d.repository))
      .map((d) => ({
        helm: {
          chart: d.repository.startsWith("oci://") ? `${d.repository.replace(/\/+$/, "")}/${d.name}` : d.name,
          ...(d.repository.startsWith("oci://") ? {} : { repo: d.repository }),
          version: d.version,
        },
        field: `dependencies[${d.name}]`,
      })),
  }));
  const pulled = await pullRemoteChartsEach(checkout, remote, repo, render);
  const pulledBy = new Map([...wanted.keys()].map((b, i) => [b, pulled[i]]));
  return bundles.flatMap((b) => {
    const deps = wanted.get(b);
    if (!deps) return failed.has(b) ? [] : [b];
    try {
      return [withDependencies(checkout, b, deps, pulledBy.get(b)!)];
    } catch (err) {
      fail(b, err);
      return [];
    }
  });
}

/** The bundle with its missing dependencies added under the chart's .chart-deps/ (Fleet's dependency update). */
function withDependencies(checkout: Checkout, b: Bundle, deps: Dependency[], pulled: { files: BundleFile[] } | FleetError): Bundle {
  if (pulled instanceof FleetError) throw pulled;
  const ctx = { gitRepo: b.gitRepo, bundle: b.name, file: joinRel(b.path, joinRel(chartDirOf(b)!, "Chart.yaml")) };
  const pulledFiles = pulled.files;
  const added: BundleFile[] = [];
  for (const d of deps) {
    const at = joinRel(chartDirOf(b)!, `${DEPS_DIR}/${d.name}`);
    if (d.repository.startsWith("file://")) {
      for (const f of localChart(checkout, b, d, ctx)) added.push({ ...f, name: `${at}/${f.name}` });
    } else if (/^(https?|oci):\/\//.test(d.repository)) {
      // remote-charts.ts names a pulled chart's files `.chart/<id>/<file>`; this dependency's are the ones of its source.
      const prefix = pulledPrefixOf(pulledFiles, d);
      for (const f of pulledFiles.filter((f) => f.name.startsWith(prefix))) added.push({ ...f, name: `${at}/${f.name.slice(prefix.length)}` });
    } else {
      throw new FleetError(
        `chart ${chartDirOf(b)}: dependency ${d.name} has repository ${JSON.stringify(d.repository)}, which is neither a file:// path in the GitRepo nor a chart repository URL ` +
          "(Fleet's agent would resolve an @alias from its own Helm repositories; vendor the dependency into charts/)",
        { ...ctx, field: "dependencies" },
      );
    }
  }
  const files = [...b.files, ...added];
  return { ...b, files, manifestId: manifestIdOf(files) };
}

/** A local chart's directory in the bundle (a helm bundle whose chart is not pulled). */
function chartDirOf(b: Bundle): string | undefined {
  return b.style.kind === "helm" && !b.style.repo && b.style.path !== undefined ? b.style.path : undefined;
}

function dependenciesOf(doc: unknown): Dependency[] {
  const list = (doc as { dependencies?: unknown } | null)?.dependencies;
  if (!Array.isArray(list)) return [];
  return list
    .filter((d) => d && typeof d === "object" && typeof d.name === "string")
    .map((d) => ({
      name: d.name as string,
      version: typeof d.version === "string" ? d.version : String(d.version ?? ""),
      repository: typeof d.repository === "string" ? d.repository : "",
    }));
}

/** Whether charts/ holds the dependency: a directory of its name, or an archive `<name>-<version>.tgz`. */
function vendored(b: Bundle, name: string): boolean {
  const dir = joinRel(chartDirOf(b)!, "charts/");
  return b.files.some((f) => {
    if (!f.name.startsWith(dir)) return false;
    const rest = f.name.slice(dir.length);
    return rest.startsWith(`${name}/`) || isArchiveOf(rest, name);
  });
}

/**
 * Whether `file` is `<name>-<version>.tgz` (`^name-v?\d[^/]*\.tgz$`), by string operations: the name
 * is content, and a regular expression built from it could backtrack exponentially.
 */
export function isArchiveOf(file: string, name: string): boolean {
  if (!file.startsWith(`${name}-`) || !file.endsWith(".tgz") || file.includes("/")) return false;
  let version = file.slice(name.length + 1, -".tgz".length);
  if (version.startsWith("v")) version = version.slice(1);
  return version.length > 0 && version[0] >= "0" && version[0] <= "9";
}

/** A file:// dependency's chart files, read from the checkout relative to the chart's directory. */
function localChart(checkout: Checkout, b: Bundle, d: Dependency, ctx: { gitRepo: string; bundle: string; file: string }): BundleFile[] {
  const target = d.repository.slice("file://".length);
  const rel = path.posix.normalize(joinRel(joinRel(b.path, chartDirOf(b)!), target));
  try {
    // An absolute path names the runner's files, never the GitRepo's.
    if (
      path.posix.isAbsolute(target) ||
      path.posix.isAbsolute(rel) ||
      rel === ".." ||
      rel.startsWith("../") ||
      checkout.kindOf(rel) !== "dir" ||
      !checkout.isInside(rel, "")
    ) {
      throw new FleetError(`chart ${chartDirOf(b)}: dependency ${d.name}: ${d.repository} is not a chart directory inside the GitRepo`, {
        ...ctx,
        field: "dependencies",
      });
    }
    return readBundleFiles(checkout, rel, [], { gitRepo: b.gitRepo, bundle: b.name });
  } catch (err) {
    throw withContext(err, { ...ctx, field: "dependencies" });
  }
}

/** The `.chart/<id>/` prefix under which remote-charts.ts put this dependency's pulled chart. */
function pulledPrefixOf(files: BundleFile[], d: Dependency): string {
  const chartYaml = files.find((f) => /^\.chart\/[^/]+\/(?:[^/]+\/)?Chart\.yaml$/.test(f.name) && namesChart(f.content, d.name));
  return chartYaml ? chartYaml.name.slice(0, -"Chart.yaml".length) : "\u0000";
}

/**
 * Whether a Chart.yaml text has a line `name: <name>` (quoted or not), by string comparison: the name
 * is content, and as a regular expression (it once was one, unescaped) `(a+)+$` backtracked for ever.
 */
export function namesChart(chartYaml: string, name: string): boolean {
  return chartYaml.split("\n").some((line) => {
    if (!line.startsWith("name:")) return false;
    let value = line.slice("name:".length).trim();
    if (value.startsWith('"') || value.startsWith("'")) value = value.slice(1);
    if (value.endsWith('"') || value.endsWith("'")) value = value.slice(0, -1);
    return value === name;
  });
}
