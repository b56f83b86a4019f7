/**
 * `npm run bench -- large [--clusters 50] [--per-cluster]`: a kube-prometheus-stack-sized bundle (test/fixtures/large-chart:
 * prometheus-operator's CRDs plus templated workloads, dashboards and rules, about 5 MB rendered) from
 * a real git repository to N clusters in render mode, through the real engine: the first `up` and a
 * no-op `up` (wall time; peak resident memory of the program, run inline in the bench's process, the
 * Pulumi CLI, the provider and fleet-render, and the CPU time of the program and of the
 * processes it started, which a shared machine's load changes less than wall time), the state's size after each, and what one cluster's render holds.
 * --per-cluster templates the cluster's name into the chart's values, so each cluster is a render of its own
 * (the GitRepo's render budget, PULUMI_FLEET_GITREPO_RENDER_SECONDS, then bounds how many fit).
 * Writes bench/results/large.json (large-per-cluster.json).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as ops from "../automation/operations";
import { toolchain } from "../automation/engine/toolchain";
import { parseStackConfig } from "../core/config/stack";
import { PROJECT_DIR } from "../core/base/project-dir";
import { samplePeaks } from "./process-peaks";
import { LARGE_CHART, largeChartRepo } from "../test/support/large-chart";
import { arg, bytesUnder, engineEnvArg, flag, mib, printTable, seconds, stateSizes, syntheticClusters, writeResult } from "./support";

export async function largeBench(): Promise<void> {
  toolchain();
  const clusters = Number(arg("clusters") ?? 50);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-large-"));
  const renderDir = path.join(work, "render");
  // --per-cluster: values that name the cluster, so every cluster is a distinct render (one otherwise).
  const perCluster = flag("per-cluster");
  const repo = largeChartRepo(path.join(work, "repo"), "large-monitoring", perCluster);
  const raw = {
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    renderDir,
    clusters: syntheticClusters(clusters).map(({ name, labels }) => ({ name, labels })),
    gitRepos: [{ name: "large", repo, branch: "main", paths: ["large"], targets: [{ clusterSelector: { matchLabels: { env: "bench" } } }] }],
  };
  const options: ops.OperationOptions = {
    stack: "large",
    stateDir: path.join(work, "state"),
    stackConfigDir: work,
    config: parseStackConfig(raw, "bench large (synthetic)", PROJECT_DIR),
    deploy: { cacheRoot: path.join(work, "git") },
    env: { PULUMI_CONFIG_PASSPHRASE: "bench", ...engineEnvArg() },
    onProgramTimings: (t) => {
      program = t;
    },
  };
  let program = { planMs: 0, registerMs: 0 };
  const rows = [];
  try {
    for (const step of ["first up", "no-op up"] as const) {
      console.log(`large bundle, render mode: ${clusters} clusters, ${perCluster ? "a render per cluster" : "one render for all"}, ${step}...`);
      const peaks = samplePeaks();
      const t = performance.now();
      const result = await ops.up({ ...options, expectNoChanges: step === "no-op up" });
      const ms = performance.now() - t;
      const { peakMiB: peak, cpuS } = peaks.stop();
      const state = stateSizes(options.stateDir!, options.stack);
      rows.push({
        step,
        s: seconds(ms),
        changes: result.changes,
        peakMiB: peak,
        cpuS,
        programMs: { plan: Math.round(program.planMs), register: Math.round(program.registerMs) },
        stateMiB: mib(state.checkpoint),
        historyAndBackupsMiB: mib(state.historyAndBackups),
      });
    }
    const one = path.join(renderDir, fs.readdirSync(renderDir).sort()[0]);
    const rendered = {
      oneClusterMiB: mib(bytesUnder(one)),
      files: fs.readdirSync(one, { recursive: true }).length,
      allClustersMiB: mib(bytesUnder(renderDir)),
    };
    printTable(
      rows.map((r) => ({
        step: r.step,
        "wall s": r.s,
        "program MiB": r.peakMiB.program,
        "pulumi MiB": r.peakMiB.pulumi,
        "provider MiB": r.peakMiB.provider,
        "fleet-render MiB": r.peakMiB["fleet-render"],
        "CPU s: program, children": `${r.cpuS.program}, ${r.cpuS.children}`,
        "program plan + register ms": `${r.programMs.plan} + ${r.programMs.register}`,
        "state MiB": r.stateMiB,
        "history+backups MiB": r.historyAndBackupsMiB,
      })),
    );
    console.log(
      `rendered: ${rendered.oneClusterMiB} MiB per cluster (${rendered.files} entries), ${rendered.allClustersMiB} MiB for ${clusters} clusters; chart archive ${mib(fs.statSync(LARGE_CHART).size)} MiB`,
    );
    console.log(`written ${writeResult(perCluster ? "large-per-cluster" : "large", { clusters, perCluster, rendered, results: rows, load: os.loadavg() })}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
