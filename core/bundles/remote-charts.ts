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

export function pullRemoteCharts(
  bundleDir: string, sources: ChartSource[], repo: GitRepoConfig, ctx: { gitRepo: string; bundle: string; file?: string },
): PulledCharts {
  const jobs: (PullJob & { field: string })[] = [];
  const seen = new Set<string>();
  for (const { helm, field } of sources) {
    if (!isRemoteChart(bundleDir, helm)) continue;
    const key = `${helm.chart ?? ""}:${helm.repo ?? ""}:${helm.version ?? ""}`;
    if (seen.has(key)) continue;
    seen.add(key);
    jobs.push({ id: String(jobs.length), chart: helm.chart, repo: helm.repo, version: helm.version, auth: helmAuth(repo), credentialsRegex: repo.helmRepoURLRegex, field });
  }
  if (!jobs.length) return { files: [], warnings: [] };
  const results = runRenderer({ pulls: jobs.map(({ field: _f, ...job }) => job) }).pulls;
  const files: BundleFile[] = [];
  const warnings: string[] = [];
  for (const job of jobs) {
    const r = results[job.id];
    if (!r || r.error) {
      throw new FleetError(r?.error ?? "fleet-render returned no result for this chart", { ...ctx, field: `${job.field}.${job.repo ? "repo" : "chart"}` });
    }
    for (const f of r.files ?? []) files.push(f.encoding ? { name: f.name, content: f.content, encoding: f.encoding } : { name: f.name, content: f.content });
    warnings.push(...(r.warnings ?? []).map((w) => `${job.field}: ${w}`));
  }
  return { files, warnings };
}

function helmAuth(repo: GitRepoConfig): HelmAuth | undefined {
  const s = repo.helmSecret;
  if (!s) return undefined;
  return { username: s.username, password: s.password, caBundle: s.cacerts, insecureSkipVerify: s.insecureSkipVerify, basicHTTP: s.basicHTTP };
}
