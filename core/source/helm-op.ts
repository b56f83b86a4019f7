/**
 * A HelmOp's source (core/config/helm-op.ts): the chart version it deploys, resolved as Fleet's HelmOp
 * controller resolves it (bundlereader.ChartVersion, by fleet-render: core/bundles/chart-version.ts),
 * and a bundle directory holding only the fleet.yaml its spec makes, with that exact version. The chart
 * itself is pulled when the bundle is read, as any remote chart (core/bundles/remote-charts.ts: the
 * operator's allowedChartURLs, helmSecret, helmRepoURLRegex). The "commit" of this source is the version.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { FleetError } from "../base/errors";
import { sha256Hex } from "../base/hash";
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
 * The "commit" this HelmOp deploys now: a pinned one (`revision`: a paused HelmOp's, a rollback's, or
 * the one its record keeps: core/desired/previous.ts), an exact version as given, an archive URL's
 * chart as `url-<hash of the URL>` (it has no version), else the newest version the repository or
 * registry offers within the constraint. What `up`, the watcher and a pinned stack's check all ask.
 */
export async function helmOpVersion(repo: HelmOpRepo, render?: Renderer, deadlineMs?: number): Promise<string> {
  if (repo.revision) return repo.revision;
  const { chart, origin } = repo.helmOp;
  if ((chart.chart ?? "").toLowerCase().endsWith(".tgz") && !chart.repo) return `url-${sha256Hex(chart.chart ?? "").slice(0, 12)}`;
  if (versionIsFixed(chart)) return chart.version ?? "";
  const ctx = { gitRepo: repo.name, file: origin.file, field: `${origin.field}.helm.version` };
  const [resolved] = await resolveChartVersions([{ ...chart, ctx }], repo, render, deadlineMs);
  if (resolved instanceof FleetError) throw resolved;
  return resolved;
}

/**
 * The HelmOp's bundle directory, with the version it deploys: this run's alone, private (it holds the
 * spec's values, which may be the stack's secrets), removed by `dispose` once the bundle is read.
 */
export async function resolveHelmOpSource(repo: HelmOpRepo, render?: Renderer): Promise<Source> {
  checkSpec(repo);
  const version = await helmOpVersion(repo, render);
  const text = JSON.stringify(helmOpFleetYaml(repo.helmOp, version), null, 2) + "\n";
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-helmop-")); // mode 0700
  fs.writeFileSync(path.join(dir, "fleet.yaml"), text, { mode: 0o600 });
  return {
    gitRepo: repo.name,
    commit: version,
    dir,
    fetched: false,
    warnings: constraintWarnings(repo, version),
    dispose: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Where Fleet would deploy another version than the one resolved: it hands a target with helm options of
 * its own the spec's version *constraint* (propagateHelmOpProperties), which its agent resolves again at
 * deploy time; here every cluster deploys the resolved one. Said, never silent.
 */
function constraintWarnings(repo: HelmOpRepo, version: string): string[] {
  const { chart, fleetYaml, origin } = repo.helmOp;
  if (versionIsFixed(chart)) return [];
  const targets = (fleetYaml.targetCustomizations ?? []) as { helm?: { version?: string } }[];
  return targets.flatMap((t, i) =>
    t.helm && !t.helm.version
      ? [
          `${origin.field}.targets[${i}].helm: Fleet's agent would resolve the version constraint ${JSON.stringify(chart.version ?? "")} again for this target when it deploys (a newer chart may be there by then); here it deploys ${version}, the version resolved for the HelmOp`,
        ]
      : [],
  );
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
