/**
 * Remote charts, fetched when the bundle is read, as `fleet apply` does (rancher/fleet
 * internal/bundlereader addRemoteCharts): the bundle's helm options and each targetCustomization's
 * that name a chart by `repo` (Helm repository or `oci://`), or a chart that is not a directory of the
 * bundle (an archive URL), are pulled by fleet-render with Helm's downloader. The chart's files join the
 * bundle under Fleet's `.chart/<sha256 of chart:repo:version>/`, so they count in the manifestID and
 * a newer chart matching a version range redeploys, as in Fleet.
 */
import { FleetError } from "../base/errors";
import { positiveNumber } from "../base/operator-env";
import { GitRepoConfig } from "../config/git-repo";
import { runRenderer } from "../renderer/fleet-render";
import { HelmAuth, PullJob, Renderer } from "../model/renderer-protocol";
import { Checkout, joinRel } from "./checkout";
import { BundleFile, HelmOptions } from "./types";

export interface ChartSource {
  helm: HelmOptions;
  field: string;
}

export interface PulledCharts {
  files: BundleFile[];
  warnings: string[];
}

/**
 * Whether Fleet fetches this chart instead of reading it from the bundle directory. Asked of the
 * checkout (checkout.ts): a chart path that leaves the repository is an error, never a look at the
 * runner's files.
 */
export function isRemoteChart(checkout: Checkout, bundleRel: string, helm: HelmOptions): boolean {
  if (!helm.chart && !helm.repo) return false;
  return !!helm.repo || checkout.kindOf(joinRel(bundleRel, helm.chart ?? "")) === undefined;
}

export interface ChartRequest {
  bundleRel: string;
  sources: ChartSource[];
  ctx: { gitRepo: string; bundle: string; file?: string };
}

/** The pulled charts of each bundle, in order: one fleet-render batch, each distinct chart pulled once. The first failure is thrown. */
export async function pullRemoteCharts(
  checkout: Checkout,
  requests: ChartRequest[],
  repo: GitRepoConfig,
  render: Renderer = runRenderer,
): Promise<PulledCharts[]> {
  return (await pullRemoteChartsEach(checkout, requests, repo, render)).map((r) => {
    if (r instanceof FleetError) throw r;
    return r;
  });
}

/** As pullRemoteCharts, but each request's failure is returned in its place: one bundle's chart does not stop the others. */
export async function pullRemoteChartsEach(
  checkout: Checkout,
  requests: ChartRequest[],
  repo: GitRepoConfig,
  render: Renderer = runRenderer,
): Promise<(PulledCharts | FleetError)[]> {
  const jobs = new Map<string, PullJob>(); // by chart:repo:version
  const base = pullJobBase(repo);
  const wanted = requests.map(({ bundleRel, sources, ctx }): Map<string, string> | FleetError => {
    const keys = new Map<string, string>(); // chart key -> field, first one naming it
    for (const { helm, field } of sources) {
      let remote: boolean;
      try {
        remote = isRemoteChart(checkout, bundleRel, helm);
      } catch (err) {
        return new FleetError(`${field}.chart ${JSON.stringify(helm.chart)}: ${(err as FleetError).reason ?? String(err)}`, {
          ...ctx,
          field: `${field}.chart`,
        });
      }
      if (!remote) continue;
      const key = `${helm.chart ?? ""}:${helm.repo ?? ""}:${helm.version ?? ""}`;
      if (!keys.has(key)) keys.set(key, field);
      if (!jobs.has(key)) {
        jobs.set(key, { id: String(jobs.size), chart: helm.chart, repo: helm.repo, version: helm.version, ...base });
      }
    }
    return keys;
  });
  const results = jobs.size ? (await render({ pulls: [...jobs.values()] })).pulls : {};
  return requests.map(({ ctx }, i) => {
    const keys = wanted[i];
    if (keys instanceof FleetError) return keys;
    const pulled: PulledCharts = { files: [], warnings: [] };
    for (const [key, field] of keys) {
      const job = jobs.get(key)!;
      const r = results[job.id];
      if (!r || r.error) {
        return new FleetError(inSourceWords(repo, r?.error ?? "fleet-render returned no result for this chart"), {
          ...ctx,
          field: `${field}.${job.repo ? "repo" : "chart"}`,
        });
      }
      pulled.files.push(...(r.files ?? []));
      pulled.warnings.push(...(r.warnings ?? []).map((w) => `${field}: ${inSourceWords(repo, w)}`));
    }
    return pulled;
  });
}

/** What every pull job of this GitRepo carries: its Helm credentials, helmRepoURLRegex, the operator's allowedChartURLs and pull time limit. */
export function pullJobBase(repo: GitRepoConfig): Pick<PullJob, "auth" | "credentialsRegex" | "allowedURLs" | "timeoutSeconds"> {
  return { auth: helmAuth(repo), credentialsRegex: repo.helmRepoURLRegex, allowedURLs: repo.allowedChartURLs ?? [], timeoutSeconds: pullTimeoutSeconds() };
}

/** The operator's time limit of one chart pull, every request of it (unset: fleet-render's 300 s). */
function pullTimeoutSeconds(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const n = positiveNumber(env, "PULUMI_FLEET_CHART_PULL_TIMEOUT_SECONDS", 0);
  return n || undefined;
}

function helmAuth(repo: GitRepoConfig): HelmAuth | undefined {
  const s = repo.helmSecret;
  if (!s) return undefined;
  return { username: s.username, password: s.password, caBundle: s.cacerts, insecureSkipVerify: s.insecureSkipVerify, basicHTTP: s.basicHTTP };
}

/** fleet-render's words name a GitRepo's settings; a HelmOp's are the same settings under helmOps[]. */
export function inSourceWords(repo: GitRepoConfig, message: string): string {
  if (!repo.helmOp) return message;
  return message
    .replace(/\bgitRepos\[\]/g, "helmOps[]")
    .replace(/\bthe GitRepo's\b/g, "the HelmOp's")
    .replace(/\ba GitRepo's content\b/g, "a HelmOp");
}
