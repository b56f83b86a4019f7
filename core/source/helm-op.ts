/**
 * A HelmOp's source (core/config/helm-op.ts): the chart version it deploys, resolved as Fleet's HelmOp
 * controller resolves it (bundlereader.ChartVersion, by fleet-render: core/bundles/chart-version.ts),
 * and a bundle directory holding only the fleet.yaml its spec makes, with that exact version. The chart
 * itself is pulled when the bundle is read, as any remote chart (core/bundles/remote-charts.ts: the
 * operator's allowedChartURLs, helmSecret, helmRepoURLRegex). The "commit" of this source is the version.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { FleetError } from "../base/errors";
import { sha256Hex } from "../base/hash";
import { defaultCacheRoot } from "../base/tool-build";
import { resolveChartVersions } from "../bundles/chart-version";
import { GitRepoConfig } from "../config/git-repo";
import { versionIsFixed } from "../config/helm-op";
import { HelmOpSource } from "../config/git-repo";
import { parseFleetYaml } from "../bundles/fleetyaml";
import { Renderer } from "../model/renderer-protocol";
import { Source } from "./types";

type HelmOpRepo = GitRepoConfig & { helmOp: HelmOpSource };

export function isHelmOp(repo: GitRepoConfig): repo is HelmOpRepo {
  return repo.helmOp !== undefined;
}

/**
 * The version this HelmOp deploys now: a pinned one (`revision`: a paused HelmOp's or a rollback's, or
 * the one the record keeps: core/desired/previous.ts), an exact version or an archive as given, else
 * the newest the repository or registry offers within the constraint.
 */
export async function helmOpVersion(repo: HelmOpRepo, render?: Renderer, deadlineMs?: number): Promise<string> {
  if (repo.revision) return repo.revision;
  const { chart } = repo.helmOp;
  if (versionIsFixed(chart)) return chart.version ?? "";
  const [resolved] = await resolveChartVersions([{ ...chart, ctx: { gitRepo: repo.name, field: "helm.version" } }], repo, render, deadlineMs);
  if (resolved instanceof FleetError) throw resolved;
  return resolved;
}

/** The HelmOp's bundle directory, with the version it deploys. */
export async function resolveHelmOpSource(repo: HelmOpRepo, cacheRoot = defaultCacheRoot(), render?: Renderer): Promise<Source> {
  checkSpec(repo);
  const version = await helmOpVersion(repo, render);
  const fleetYaml = helmOpFleetYaml(repo.helmOp, version);
  const text = JSON.stringify(fleetYaml, null, 2) + "\n";
  // By content: a run reading it while another writes the next version reads a whole file either way.
  const dir = path.join(cacheRoot, "helmops", sha256Hex(`${repo.name}\n${text}`).slice(0, 24));
  if (!fs.existsSync(path.join(dir, "fleet.yaml"))) {
    fs.mkdirSync(dir, { recursive: true });
    const tmp = path.join(dir, `.fleet.yaml.${process.pid}`);
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, path.join(dir, "fleet.yaml"));
  }
  // An archive URL's chart has no version: its URL stands for it (a new URL is a new "commit").
  const commit = version || `url-${sha256Hex(repo.helmOp.chart.chart ?? "").slice(0, 12)}`;
  return { gitRepo: repo.name, commit, dir, fetched: false, warnings: [] };
}

/** The generated fleet.yaml: the spec as written, the chart at the exact version (an archive's stays empty). */
export function helmOpFleetYaml(source: HelmOpSource, version: string): Record<string, unknown> {
  const helm = { ...(source.fleetYaml.helm as Record<string, unknown>) };
  if (version && !version.startsWith("url-")) helm.version = version;
  else delete helm.version;
  return { ...source.fleetYaml, helm };
}

/**
 * The spec as fleet.yaml's reader reads it, strictly: a key Fleet would ignore, or match by case alone,
 * is an error naming the stack file and `helmOps[i]...` (fleet.yaml's own reader would only warn).
 */
export function checkSpec(repo: HelmOpRepo): void {
  const { file, field } = repo.helmOp.origin;
  const at = (inner: string | undefined) => `${field}${inner ? `.${inner.replace(/^targetCustomizations/, "targets")}` : ""}`;
  let unhonoured: string[];
  try {
    ({ unhonoured } = parseFleetYaml(structuredClone(repo.helmOp.fleetYaml), "fleet.yaml"));
  } catch (err) {
    if (!(err instanceof FleetError)) throw err;
    throw new FleetError(err.reason, { gitRepo: repo.name, file, field: at(err.context.field) });
  }
  for (const w of unhonoured) {
    const m = /^([^:]*): (unknown field, ignored as Fleet ignores it|read as .*)$/.exec(w);
    if (m) throw new FleetError(m[2].startsWith("unknown") ? "unknown field" : m[2], { gitRepo: repo.name, file, field: at(m[1]) });
  }
}
