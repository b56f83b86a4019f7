/**
 * Reads a GitRepo's checked-out tree into bundles (Fleet's `fleet apply` stage): discovery, fleet.yaml,
 * names, targets in Fleet's order, values files, style and content ID. Any problem is an error naming
 * the GitRepo, bundle and file; zero bundles is an error too, never an empty result.
 */
import * as path from "node:path";
import { FleetError, withContext } from "../base/errors";
import { dnsLabelProblem } from "../base/k8s-validation";
import { positiveNumber } from "../base/operator-env";
import { bundleNameFor } from "../base/naming";
import { GitRepoConfig } from "../config/git-repo";
import { DEFAULT_TARGET, TargetCriteria } from "../config/target-criteria";
import { Checkout, joinRel } from "./checkout";
import { discoverBundleDirs, fleetYamlIn } from "./discover";
import { manifestIdOf, rawManifestFiles, readBundleFiles } from "./content";
import { checkFleetYamlText, FleetYaml, parseFleetYaml } from "./fleetyaml";
import { readYamlAsFleet, YamlText } from "./goyaml";
import { Bundle, BundleFile, BundleStyle, BundleTarget, DeploymentOptions } from "./types";
import { ChartSource, PulledCharts, pullRemoteChartsEach } from "./remote-charts";
import { runRenderer } from "../renderer/fleet-render";
import { readsValuesFiles, readValuesDocs, valuesFilesOf, withValuesFiles } from "./values-files";
import { Renderer } from "../model/renderer-protocol";
import { withChartDependencies } from "./chart-deps";
import { Decrypter, withDecryptedFiles } from "./sops";

/** A bundle that could not be read: its name (fleet.yaml's when it was read, else the one its path gives) and path. */
export interface UnreadBundle {
  gitRepo: string;
  bundle: string;
  path: string;
}

/**
 * `render` runs fleet-render's jobs (YAML as Fleet reads it, chart pulls): the real one unless a test
 * gives a fake. With `onFailure`, a bundle that cannot be read (fleet.yaml, values files, chart pull,
 * dependencies, files) is handed to it and left out, so the others still deploy; without it the first
 * failure is thrown. What concerns the whole GitRepo (its paths, the bundle limit) always throws.
 */
export async function readBundles(
  root: string,
  repo: GitRepoConfig,
  render: Renderer = runRenderer,
  onFailure?: (b: UnreadBundle, err: unknown) => void,
  decrypt?: Decrypter,
): Promise<Bundle[]> {
  // Every read of the checkout goes through this one confined view (checkout.ts).
  const checkout = new Checkout(root, repo.name);
  const dirs = discoverBundleDirs(checkout, repo.paths);
  // Each bundle becomes a deployment per targeted cluster: a push of thousands of tiny bundles would
  // multiply the plan (and the runner's memory) by the fleet's size.
  const maxBundles = Math.floor(positiveNumber(process.env, "PULUMI_FLEET_MAX_BUNDLES", 1000));
  if (dirs.length > maxBundles) {
    throw new FleetError(
      `the repository has ${dirs.length} bundles, over the limit of ${maxBundles} per GitRepo (PULUMI_FLEET_MAX_BUNDLES); nothing was read further`,
      { gitRepo: repo.name, field: "paths" },
    );
  }
  let failures = 0;
  const fail = (bundle: string, rel: string, err: unknown) => {
    if (!onFailure) throw err;
    failures++;
    onFailure({ gitRepo: repo.name, bundle, path: rel }, err);
  };
  // Each stage runs on what the one before left: a failed bundle is handed to `fail` once and dropped.
  const each = <T, U>(items: T[], name: (t: T) => [bundle: string, rel: string], step: (t: T) => U): U[] =>
    items.flatMap((t) => {
      try {
        return [step(t)];
      } catch (err) {
        fail(...name(t), err);
        return [];
      }
    });
  // YAML is read as Fleet reads it, by fleet-render: one batch for the fleet.yamls, one for values files.
  // Remote charts: one batch for the GitRepo, each chart pulled once however many bundles name it.
  const fleetYamls = await readFleetYamls(checkout, dirs, repo, render, (rel, err) => fail(bundleNameFor(repo.name, rel), rel, err));
  const valuesDocs = await readValuesDocs(checkout, fleetYamls, repo, render);
  const pending = each(
    fleetYamls,
    (p) => [p.fy.name ?? bundleNameFor(repo.name, p.rel), p.rel],
    (fy) => bundleOptions(checkout, fy, repo, valuesDocs),
  );
  const pulled = await pullRemoteChartsEach(
    checkout,
    pending.map((p) => ({ bundleRel: p.bundle.path, sources: p.chartSources, ctx: p.ctx })),
    repo,
    render,
  );
  const read = each(
    pending.map((p, i) => [p, pulled[i]] as const),
    ([p]) => [p.bundle.name, p.bundle.path],
    ([p, charts]) => {
      if (charts instanceof FleetError) throw charts;
      return withFiles(checkout, p, charts);
    },
  );
  const withDeps = await withChartDependencies(checkout, read, repo, render, onFailure && ((b, err) => fail(b.name, b.path, err)));
  // Two bundles of one name: neither is the bundle of that name, so both fail (Fleet would overwrite one with the other).
  const paths = new Map<string, string[]>();
  for (const b of withDeps) paths.set(b.name, [...(paths.get(b.name) ?? []), b.path]);
  const bundles = withDeps.filter((b) => {
    const all = paths.get(b.name)!;
    if (all.length === 1) return true;
    if (all[0] === b.path)
      fail(
        b.name,
        b.path,
        new FleetError(`bundle name ${b.name} is produced by both ${all.join(" and ")}; set a distinct name in fleet.yaml`, { gitRepo: repo.name }),
      );
    return false;
  });
  if (bundles.length === 0 && failures === 0) {
    throw new FleetError(`no resource found at the following paths: ${(repo.paths.length ? repo.paths : ["."]).join(", ")}`, { gitRepo: repo.name });
  }
  // After every check on the files as committed (style, resources, manifestID): the encrypted ones leave here.
  return withDecryptedFiles(bundles, repo, decrypt);
}

interface ParsedFleetYaml {
  rel: string;
  fleetYamlName?: string;
  fleetYamlRel?: string;
  fy: FleetYaml;
}

/** Each bundle directory's fleet.yaml, parsed; a directory whose fleet.yaml cannot be read goes to `failed`. */
async function readFleetYamls(
  checkout: Checkout,
  dirs: string[],
  repo: GitRepoConfig,
  render: Renderer,
  failed: (rel: string, err: unknown) => void,
): Promise<ParsedFleetYaml[]> {
  const found = dirs.map((rel) => {
    const name = fleetYamlIn(checkout, rel);
    return { rel, name, file: name ? (rel === "." ? name : `${rel}/${name}`) : undefined };
  });
  const texts: YamlText[] = [];
  const broken = new Set<string>();
  for (const f of found) {
    if (!f.file) continue;
    const ctx = { gitRepo: repo.name, bundle: bundleNameFor(repo.name, f.rel) };
    try {
      const text = checkout.readText(f.file);
      checkFleetYamlText(text, f.file);
      texts.push({ key: f.file, text, file: f.file, ctx });
    } catch (err) {
      broken.add(f.rel);
      failed(f.rel, withContext(err, ctx));
    }
  }
  const relOf = new Map(found.map((f) => [f.file, f.rel]));
  const docs = await readYamlAsFleet(texts, render, (t, err) => {
    broken.add(relOf.get(t.key)!);
    failed(relOf.get(t.key)!, err);
  });
  return found
    .filter((f) => !broken.has(f.rel))
    .flatMap((f) => {
      try {
        const fy = parseFleetYaml(f.file ? docs.get(f.file) : {}, f.file ?? "(none)");
        return [{ rel: f.rel, fleetYamlName: f.name, fleetYamlRel: f.file, fy }];
      } catch (err) {
        failed(f.rel, withContext(err, { gitRepo: repo.name, bundle: bundleNameFor(repo.name, f.rel) }));
        return [];
      }
    });
}

/** A bundle before its files are read: everything fleet.yaml and the GitRepo decide. */
interface PendingBundle {
  bundle: Omit<Bundle, "style" | "files" | "manifestId" | "warnings">;
  exclude: string[];
  chartSources: ChartSource[];
  ctx: { gitRepo: string; bundle: string; file?: string };
  /** Settings given that are not honoured yet (fleet.yaml's, then the GitRepo's), or not read as in Fleet. */
  unhonoured: string[];
}

function bundleOptions(checkout: Checkout, parsed: ParsedFleetYaml, repo: GitRepoConfig, valuesDocs: Map<string, unknown>): PendingBundle {
  const { rel, fleetYamlName, fleetYamlRel, fy } = parsed;
  const dir = path.join(checkout.root, rel);
  const defaultName = bundleNameFor(repo.name, rel);
  const name = fy.name ?? defaultName;
  const bctx = { gitRepo: repo.name, bundle: name };
  // The name becomes a label value, a URN part and a file name: Kubernetes's rule, before any use.
  const nameProblem = fy.name === undefined ? undefined : dnsLabelProblem(fy.name);
  if (nameProblem)
    throw new FleetError(`bundle name ${JSON.stringify(fy.name)} ${nameProblem}`, {
      gitRepo: repo.name,
      bundle: defaultName,
      file: fleetYamlRel,
      field: "name",
    });

  const options: DeploymentOptions = { ...fy.options };
  // Fleet's order: fleet.yaml targets, then targetCustomizations; unnamed ones get target000, target001...
  const customizations: BundleTarget[] = [...fy.targets, ...fy.targetCustomizations].map((t, i) => ({
    ...t,
    name: t.name || `target${String(i).padStart(3, "0")}`,
  }));
  for (const [i, t] of customizations.entries()) {
    // A customization without chart coordinates inherits the bundle's (Fleet's propagateHelmChartProperties).
    if (t.helm && options.helm) {
      customizations[i] = {
        ...t,
        helm: { ...t.helm, repo: t.helm.repo ?? options.helm.repo, chart: t.helm.chart ?? options.helm.chart, version: t.helm.version ?? options.helm.version },
      };
    }
  }
  const warnings = fy.unhonoured.map((w) => `${fleetYamlRel}: ${w}`);
  try {
    if (options.helm && readsValuesFiles(options.helm)) options.helm = withValuesFiles(checkout, rel, options.helm, valuesDocs);
    for (const [i, t] of customizations.entries()) if (t.helm) customizations[i] = { ...t, helm: withValuesFiles(checkout, rel, t.helm, valuesDocs) };
  } catch (err) {
    throw withContext(err, bctx);
  }

  const restrictions: TargetCriteria[] = fy.overrideTargets ?? (repo.targets.length ? repo.targets : [DEFAULT_TARGET]);
  const targets: BundleTarget[] = [...customizations, ...restrictions.map((t) => ({ ...t, name: t.name ?? "" }))];
  if (repo.targetNamespace) {
    options.namespace = repo.targetNamespace;
    for (const t of targets) t.namespace = repo.targetNamespace;
  }
  if (repo.serviceAccount) options.serviceAccount = repo.serviceAccount;
  if (repo.keepResources) options.keepResources = true;
  if (repo.deleteNamespace) options.deleteNamespace = true;

  // Fleet's ignoreApplyConfigs: each values file as written and its base name, compared with every path in the bundle
  // (so `values/prod.yaml` also leaves out a `prod.yaml` at the bundle's top).
  const valuesFiles = [...valuesFilesOf(options.helm), ...customizations.flatMap((t) => valuesFilesOf(t.helm))];
  const exclude = [fleetYamlName, ...valuesFiles, ...valuesFiles.map((vf) => path.posix.basename(vf))].filter((x): x is string => !!x);
  if (options.helm?.valuesFiles?.length && !readsValuesFiles(options.helm))
    warnings.push(`${fleetYamlRel}: ${unreadValuesFiles(options.helm.valuesFiles, exclude)}`);
  const chartSources: ChartSource[] = [
    ...(options.helm ? [{ helm: options.helm, field: "helm" }] : []),
    ...customizations.flatMap((t) => (t.helm ? [{ helm: t.helm, field: `targetCustomizations[${t.name}].helm` }] : [])),
  ];
  return {
    bundle: {
      name,
      gitRepo: repo.name,
      path: rel,
      dir,
      fleetYaml: fleetYamlRel,
      labels: { ...fy.labels },
      ...(repo.helmOp ? { helmOp: true as const } : {}),
      options,
      targets,
      restrictions,
      ...(fy.overrideTargets ? { overrideTargets: true as const } : {}),
      targetCustomizationMode: fy.targetCustomizationMode,
      dependsOn: fy.dependsOn,
      ...(fy.rolloutStrategy ? { rolloutStrategy: fy.rolloutStrategy } : {}),
      paused: fy.paused || repo.paused,
    },
    exclude,
    chartSources,
    ctx: { ...bctx, file: fleetYamlRel },
    unhonoured: warnings,
  };
}

/** The bundle's files (Fleet's content rules), then its pulled charts'; its style and manifestID. */
function withFiles(checkout: Checkout, p: PendingBundle, pulled: PulledCharts): Bundle {
  const b = p.bundle;
  const files = [...readBundleFiles(checkout, b.path, p.exclude, { gitRepo: b.gitRepo, bundle: b.name }), ...pulled.files];
  const bundle: Bundle = {
    ...b,
    style: determineStyle(files, b.options),
    files,
    manifestId: manifestIdOf(files),
    warnings: [...p.unhonoured, ...pulled.warnings],
  };
  if (!hasResources(bundle)) {
    throw new FleetError(`bundle has no resources: no Kubernetes manifests (.yaml/.yml/.json), chart or kustomization in ${b.path}`, p.ctx);
  }
  return bundle;
}

export function determineStyle(files: BundleFile[], options: DeploymentOptions): BundleStyle {
  const names = new Set(files.map((f) => f.name));
  const helm = options.helm;
  if (helm) {
    const chartDir = cleanRel(helm.chart ?? "");
    if (!helm.repo && names.has(joinRel(chartDir, "Chart.yaml"))) return { kind: "helm", path: chartDir };
    if (helm.repo || (helm.chart && /^(oci|https?):\/\//.test(helm.chart))) {
      return { kind: "helm", repo: helm.repo, chart: helm.chart, version: helm.version };
    }
    if (helm.chart) return { kind: "helm", path: chartDir };
  }
  if (!helm && names.has("Chart.yaml")) return { kind: "helm", path: "." };
  const kdir = cleanRel(options.kustomize?.dir ?? "");
  if (names.has(joinRel(kdir, "kustomization.yaml"))) return { kind: "kustomize", dir: kdir };
  return { kind: "yaml" };
}

function hasResources(b: Bundle): boolean {
  if (b.style.kind === "helm") {
    if (b.style.repo || !b.style.path || /^(oci|https?):\/\//.test(b.style.chart ?? "")) return true;
    const chartYaml = joinRel(b.style.path, "Chart.yaml");
    if (!b.files.some((f) => f.name === chartYaml)) {
      // A file (a chart archive) is no chart to Fleet: addRemoteCharts pulls nothing for a chart that exists on disk, and
      // DetermineStyle finds no <chart>/Chart.yaml, so the bundle deploys its other YAML files as raw manifests and never
      // the chart. Refused here, deliberately (docs/fleet-compatibility.md): that bundle deploys without what it names.
      const chart = b.style.path;
      if (b.files.some((f) => f.name === chart)) {
        throw new FleetError(
          `helm chart ${b.style.path} is a file, not a chart directory: Fleet does not unpack a chart archive in the bundle (it would deploy ` +
            "the bundle's other YAML files as raw manifests, without the chart); unpack it into a directory and name that, or name the chart's URL or repository",
          { gitRepo: b.gitRepo, bundle: b.name, file: b.fleetYaml, field: "helm.chart" },
        );
      }
      throw new FleetError(`helm chart ${b.style.path} not found in the bundle (no ${chartYaml})`, {
        gitRepo: b.gitRepo,
        bundle: b.name,
        file: b.fleetYaml,
        field: "helm.chart",
      });
    }
    return true;
  }
  if (b.style.kind === "kustomize") return true;
  return rawManifestFiles(b.files).length > 0;
}

function cleanRel(p: string): string {
  return p.replace(/^\.\/+/, "").replace(/\/+$/, "") || ".";
}

/**
 * The warning for top-level valuesFiles Fleet does not read (no helm.chart or helm.repo), saying of each
 * file what Fleet's ignoreApplyConfigs does with it: a file whose path within the bundle is a listed
 * name as written, or the base name of one, is left out of the bundle; another (`./v/prod.yaml` is
 * neither `v/prod.yaml` nor `prod.yaml`) stays in it, as in Fleet.
 */
function unreadValuesFiles(listed: string[], exclude: string[]): string {
  const kept = listed.filter((vf) => !exclude.includes(path.posix.normalize(vf)));
  const leftOut = listed.filter((vf) => !kept.includes(vf));
  const fate = [
    ...(leftOut.length
      ? [
          `${leftOut.length === listed.length ? "the files are" : `${JSON.stringify(leftOut)} ${leftOut.length > 1 ? "are" : "is"}`} still left out of the bundle`,
        ]
      : []),
    ...(kept.length ? [`${JSON.stringify(kept)} ${kept.length > 1 ? "stay" : "stays"} in it (Fleet leaves out only a path as written or a base name)`] : []),
  ];
  return (
    `helm.valuesFiles: ${JSON.stringify(listed)} is not read, as in Fleet: Fleet reads top-level valuesFiles only when helm.chart or helm.repo is set, ` +
    `so their values are not merged, and ${fate.join("; ")} (set helm.chart: . to merge them)`
  );
}
