/**
 * The large chart of test/fixtures/large-chart (prometheus-operator's CRDs plus templated workloads,
 * dashboards and rules: about 5 MB rendered, kube-prometheus-stack's size) as a real git repository
 * with one bundle, `large/`, for the large-bundle e2e and `npm run bench -- large`.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_DIR } from "../../core/base/project-dir";

export const LARGE_CHART = path.join(PROJECT_DIR, "test", "fixtures", "large-chart", "large-monitoring-0.1.0.tgz");

/** The CRDs the chart's crds/ holds (prometheus-operator's, as kube-prometheus-stack vendors them). */
export const LARGE_CHART_CRDS = [
  "alertmanagerconfigs",
  "alertmanagers",
  "podmonitors",
  "probes",
  "prometheusagents",
  "prometheuses",
  "prometheusrules",
  "scrapeconfigs",
  "servicemonitors",
  "thanosrulers",
].map((plural) => `${plural}.monitoring.coreos.com`);

/**
 * Creates a git repository in `dir` (branch main) whose bundle `large/` is the chart, deployed to
 * `namespace`; returns its file:// URL. `perCluster`: the chart's values name the cluster (Fleet's
 * `${ .ClusterName }`), so each cluster is a render of its own, as a chart with per-cluster values is.
 */
export function largeChartRepo(dir: string, namespace: string, perCluster = false): string {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync("tar", ["-xzf", LARGE_CHART, "-C", dir]);
  fs.renameSync(path.join(dir, "large-monitoring"), path.join(dir, "large"));
  const values = perCluster ? "helm:\n  values:\n    cluster: ${ .ClusterName }\n" : "";
  fs.writeFileSync(path.join(dir, "large", "fleet.yaml"), `defaultNamespace: ${namespace}\n${values}`);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "large chart");
  return `file://${dir}`;
}
