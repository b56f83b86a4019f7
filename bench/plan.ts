/**
 * `npm run bench -- plan [--clusters N --bundles M]` (also `npm run bench:plan`): the targeting stage
 * alone (no git, no engine): N clusters x M bundles, each bundle with 3 GitRepo targets and 2
 * customizations, helm values templated per cluster. Prints wall time, heap and peak RSS, and writes
 * bench/results/plan.json.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { buildPlan } from "../core/targeting/plan";
import { Bundle } from "../core/bundles/types";
import { ClusterConfig, ClusterGroupConfig } from "../core/config/stack";
import { TargetCriteria } from "../core/config/target-criteria";
import { arg } from "./support";

const num = (name: string, dflt: number): number => Number(arg(name) ?? dflt);

function fixture(nClusters: number, nBundles: number) {
  const envs = ["dev", "staging", "prod"];
  const clusters: ClusterConfig[] = Array.from({ length: nClusters }, (_, i) => ({
    name: `c-${i}`,
    labels: { env: envs[i % 3], region: `r${i % 7}`, shard: String(i % 10) },
    annotations: {},
    templateValues: { replicas: i % 5 },
    deleteUnreachable: false,
  }));
  const groups: ClusterGroupConfig[] = envs.map((e) => ({ name: e, labels: { env: e }, selector: { matchLabels: { env: e } } }));
  const bundles: Bundle[] = Array.from({ length: nBundles }, (_, b) => {
    const restrictions: TargetCriteria[] = [
      { name: "dev", clusterGroup: "dev" },
      { name: "staging", clusterSelector: { matchLabels: { env: "staging" } } },
      { name: "prod", clusterGroup: "prod", clusterSelector: { matchExpressions: [{ key: "shard", operator: "NotIn", values: [String(b % 10)] }] } },
    ];
    return {
      name: `bundle-${b}`,
      gitRepo: "bench",
      path: `b${b}`,
      dir: "/nonexistent",
      labels: {},
      options: {
        defaultNamespace: `ns-${b}`,
        helm: { chart: "chart", values: { cluster: "${ .ClusterName }", region: "global.fleet.clusterLabels.region", size: { memory: "128Mi" } } },
      },
      targets: [
        { name: "eu", clusterSelector: { matchLabels: { region: "r1" } }, helm: { values: { size: { memory: "256Mi" } } } },
        { name: "prod", clusterGroup: "prod", yaml: { overlays: ["prod"] } },
        ...restrictions.map((t) => ({ ...t, name: t.name! })),
      ],
      restrictions,
      targetCustomizationMode: "FirstMatch",
      dependsOn: [],
      paused: false,
      style: { kind: "helm", path: "chart" },
      files: [],
      manifestId: `s-${b}`,
    };
  });
  return { clusters, groups, bundles };
}

async function run(nClusters: number, nBundles: number) {
  const { clusters, groups, bundles } = fixture(nClusters, nBundles);
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = process.hrtime.bigint();
  const plan = await buildPlan(bundles, clusters, groups);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const heapMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  return {
    clusters: nClusters,
    bundles: nBundles,
    entries: plan.entries.length,
    ms: Math.round(ms),
    usPerEntry: +((ms * 1000) / plan.entries.length).toFixed(2),
    heapDeltaMiB: Math.round(heapMiB),
    rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
  };
}

export async function planBench(): Promise<void> {
  const sizes: [number, number][] =
    arg("clusters") !== undefined
      ? [[num("clusters", 1000), num("bundles", 50)]]
      : [
          [100, 50],
          [1000, 50],
          [1000, 100],
          [5000, 100],
        ];
  await run(50, 10); // warm-up (JIT)
  const results = [];
  for (const [c, b] of sizes) results.push(await run(c, b));
  console.log("clusters x bundles | plan entries | wall ms | us/entry | heap delta MiB | rss MiB");
  for (const r of results) console.log(`${r.clusters} x ${r.bundles} | ${r.entries} | ${r.ms} | ${r.usPerEntry} | ${r.heapDeltaMiB} | ${r.rssMiB}`);
  const goal = results.find((r) => r.clusters === 1000 && r.bundles === 50);
  if (goal) console.log(`goal 1,000 x 50 under 1,000 ms: ${goal.ms} ms (${(goal.ms / 1000).toFixed(2)}x of the budget)`);
  console.log(`peak RSS of the process: ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB`);
  fs.mkdirSync(path.join(__dirname, "results"), { recursive: true });
  fs.writeFileSync(
    path.join(__dirname, "results", "plan.json"),
    JSON.stringify({ node: process.version, results, peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) }, null, 2),
  );
}
