/**
 * A HelmOp's chart version, resolved to an exact version before anything deploys, as Fleet's HelmOp
 * controller does (rancher/fleet internal/bundlereader ChartVersion): an `oci://` repository's highest
 * tag matching the constraint (an exact tag first), a Helm repository's newest index.yaml entry
 * matching it, or without a repository (an archive URL) the version as given. fleet-render resolves it
 * with pull jobs that download nothing (resolveOnly), under the same allow-list, credentials and time
 * limit as a chart pull (remote-charts.ts).
 */
import { FleetError } from "../base/errors";
import { GitRepoConfig } from "../config/git-repo";
import { runRenderer } from "../renderer/fleet-render";
import { PullJob, Renderer } from "../model/renderer-protocol";
import { inSourceWords, pullJobBase } from "./remote-charts";

export interface ChartVersionRequest {
  chart?: string;
  repo?: string;
  version?: string;
  ctx: { gitRepo: string; bundle?: string; field?: string };
}

/**
 * Each request's exact version, or its failure in its place: one fleet-render batch, each distinct chart
 * resolved once. `deadlineMs`: the caller's own bound (the watcher's poll), when shorter than the operator's.
 */
export async function resolveChartVersions(
  requests: ChartVersionRequest[],
  repo: GitRepoConfig,
  render: Renderer = runRenderer,
  deadlineMs?: number,
): Promise<(string | FleetError)[]> {
  const jobs = new Map<string, PullJob>(); // by chart:repo:version
  const base = pullJobBase(repo);
  if (deadlineMs !== undefined) base.timeoutSeconds = Math.min(base.timeoutSeconds ?? Infinity, deadlineMs / 1000);
  const keys = requests.map(({ chart, repo: chartRepo, version }) => {
    const key = `${chart ?? ""}:${chartRepo ?? ""}:${version ?? ""}`;
    if (!jobs.has(key)) jobs.set(key, { id: String(jobs.size), chart, repo: chartRepo, version, resolveOnly: true, ...base });
    return key;
  });
  const results = jobs.size ? (await render({ pulls: [...jobs.values()] })).pulls : {};
  return requests.map(({ ctx }, i) => {
    const r = results[jobs.get(keys[i])!.id];
    if (!r || r.error) return new FleetError(inSourceWords(repo, r?.error ?? "fleet-render returned no version for this chart"), ctx);
    return r.version ?? "";
  });
}
