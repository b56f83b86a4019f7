/**
 * Remote charts, fetched when the bundle is read, as `fleet apply` does (rancher/fleet
 * internal/bundlereader addRemoteCharts): the bundle's helm options and each targetCustomization's
 * that name a chart by `repo` (Helm repository or `oci://`), or a chart that is not a directory of the
 * bundle (an archive URL), are pulled by fleet-render with Helm's downloader. The chart's files join the
 * bundle under Fleet's `.chart/<sha256 of chart:repo:version>/`, so they count in the manifestID and
 * a newer chart matching a version range redeploys, as in Fleet.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { FleetError } from "../errors";
import { GitRepoConfig } from "../config/stack";
import { HelmAuth, PullJob, runRenderer } from "../render/fleet-render";
import { BundleFile, HelmOptions } from "./types";

export interface ChartSource { helm: HelmOptions; field: string }

export interface PulledCharts { files: BundleFile[]; warnings: string[] }

/** Whether Fleet fetches this chart instead of reading it from the bundle directory. */
export function isRemoteChart(bundleDir: string, helm: HelmOptions): boolean {
  if (!helm.chart && !helm.repo) return false;
  return !!helm.repo || !fs.existsSync(path.join(bundleDir, helm.chart ?? ""));
}

export interface ChartRequest { bundleDir: string; sources: ChartSource[]; ctx: { gitRepo: string; bundle: string; file?: string } }

/** The pulled charts of each bundle, in order: one fleet-render batch, each distinct chart pulled once. */
export function pullRemoteCharts(requests: ChartRequest[], repo: GitRepoConfig): PulledCharts[] {
  const jobs = new Map<string, PullJob>(); // by chart:repo:version
  const wanted = requests.map(({ bundleDir, sources }) => {
    const keys = new Map<string, string>(); // chart key -> field, first one naming it
    for (const { helm, field } of sources) {
      if (!isRemoteChart(bundleDir, helm)) continue;
      const key = `${helm.chart ?? ""}:${helm.repo ?? ""}:${helm.version ?? ""}`;
      if (!keys.has(key)) keys.set(key, field);
      if (!jobs.has(key)) {
        jobs.set(key, { id: String(jobs.size), chart: helm.chart, repo: helm.repo, version: helm.version, auth: helmAuth(repo), credentialsRegex: repo.helmRepoURLRegex });
      }
    }
    return keys;
  });
  const results = jobs.size ? runRenderer({ pulls: [...jobs.values()] }).pulls : {};
  return requests.map(({ ctx }, i) => {
    const pulled: PulledCharts = { files: [], warnings: [] };
    for (const [key, field] of wanted[i]) {
      const job = jobs.get(key)!;
      const r = results[job.id];
      if (!r || r.error) {
        throw new FleetError(r?.error ?? "fleet-render returned no result for this chart", { ...ctx, field: `${field}.${job.repo ? "repo" : "chart"}` });
      }
      pulled.files.push(...(r.files ?? []));
      pulled.warnings.push(...(r.warnings ?? []).map((w) => `${field}: ${w}`));
    }
    return pulled;
  });
}

function helmAuth(repo: GitRepoConfig): HelmAuth | undefined {
  const s = repo.helmSecret;
  if (!s) return undefined;
  return { username: s.username, password: s.password, caBundle: s.cacerts, insecureSkipVerify: s.insecureSkipVerify, basicHTTP: s.basicHTTP };
}
