/**
 * `npm run bench -- render [--clusters N]`: the render stage alone (fleet-render: Helm's dry-run
 * install, kustomize, raw YAML) for the example repository (examples/: a helm chart with values
 * templated per cluster, a kustomize bundle with per-target overlays, raw YAML with an overlay) on N
 * clusters. Renders are de-duplicated across clusters (same bundle, same options, same values), so
 * the cost grows with distinct renders, not with clusters. Prints both, per render and per cluster.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { readBundles } from "../core/bundles/read";
import { loadStackFile } from "../core/plan/pipeline";
import { PROJECT_DIR } from "../core/base/project-dir";
import { buildPlan } from "../core/targeting/plan";
import { renderDeployments } from "../core/render/deployments";
import { runRenderer } from "../core/renderer/fleet-render";
import { ClusterConfig } from "../core/config/stack";
import { stableJson } from "../core/base/hash";
import { arg, RESULTS_DIR } from "./support";

async function run(nClusters: number) {
  const local = loadStackFile("local", PROJECT_DIR);
  const repo = local.gitRepos[0];
  const bundles = await readBundles(path.join(PROJECT_DIR, "examples"), { ...repo, repo: path.join(PROJECT_DIR, "examples") });
  const envs = ["dev", "prod"];
  // Half the clusters carry a templateValues replicas of their own: distinct helm values, distinct renders.
  const clusters: ClusterConfig[] = Array.from({ length: nClusters }, (_, i) => ({
    name: `c-${i}`,
    labels: { env: envs[i % 2], region: `r${i % 4}` },
    annotations: {},
    templateValues: i % 2 ? { replicas: i % 7 } : {},
    deleteUnreachable: false,
  }));
  const plan = await buildPlan(bundles, clusters, local.clusterGroups);
  const distinct = new Set(plan.entries.map((e) => stableJson([e.bundle, e.options, e.namespace, e.releaseName]))).size;
  const t0 = process.hrtime.bigint();
  const rendered = await renderDeployments(plan.entries, bundles, () => "0123456789abcdef0123456789abcdef01234567", runRenderer);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const objects = [...rendered.values()].reduce((n, r) => n + r.objects.length, 0);
  return {
    clusters: nClusters,
    deployments: plan.entries.length,
    distinctRenders: distinct,
    objects,
    ms: Math.round(ms),
    msPerRender: +(ms / distinct).toFixed(2),
    msPerCluster: +(ms / nClusters).toFixed(2),
  };
}

export async function renderBench(): Promise<void> {
  const sizes = arg("clusters") !== undefined ? [Number(arg("clusters"))] : [10, 100, 1000];
  await run(4); // warm-up: builds or finds fleet-render, JIT
  const results = [];
  for (const n of sizes) results.push(await run(n));
  console.log("clusters | bundle deployments | distinct renders | objects | wall ms | ms per distinct render | ms per cluster");
  for (const r of results)
    console.log(`${r.clusters} | ${r.deployments} | ${r.distinctRenders} | ${r.objects} | ${r.ms} | ${r.msPerRender} | ${r.msPerCluster}`);
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(path.join(RESULTS_DIR, "render.json"), JSON.stringify({ node: process.version, results }, null, 2));
}
