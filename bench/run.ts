/**
 * `npm run bench [-- plan|render|engine|live|page|startup|shards|rollout|fleet|watch|stalled|large|hooks ...] [options]` (`--help` lists them): the benchmarks (default: the
 * first eight, in that order; `fleet` and `hooks`, which build Rancher Fleet itself, `watch`, `stalled` and `large`, only when named). Each prints a table and writes bench/results/<name>.json; BENCHMARKS.md has the figures,
 * the machine and the commands. Options: plan: --clusters N --bundles M; render: --clusters N; engine: --clusters 10,50,200
 * --bundles 10 --objects 10; live: --runs 3; page: --clusters 200 --bundles 50 --runs 3.
 */
import { planBench } from "./plan";
import { renderBench } from "./render";
import { engineBench } from "./engine";
import { liveBench } from "./live";
import { pageBench } from "./page";
import { startupBench } from "./startup";
import { shardsBench } from "./shards";
import { rolloutBench } from "./rollout";
import { fleetBench } from "./fleet";
import { watchBench } from "./watch";
import { stalledBench } from "./stalled";
import { largeBench } from "./large";
import { hooksBench } from "./hooks";
import { decisionBench } from "./decision";
import { setBenchOptions } from "./support";
import { parseCommand, runMain, UsageError } from "../scripts/cli";

const DEFAULT = {
  plan: planBench,
  render: renderBench,
  engine: engineBench,
  live: liveBench,
  page: pageBench,
  startup: startupBench,
  shards: shardsBench,
  rollout: rolloutBench,
} as const;
const ALL = { ...DEFAULT, fleet: fleetBench, watch: watchBench, stalled: stalledBench, large: largeBench, hooks: hooksBench, decision: decisionBench } as const;
type Name = keyof typeof ALL;

const SPEC = {
  usage: "npm run bench -- [plan] [render] [engine] [live] [page] [startup] [shards] [rollout] [fleet] [watch] [stalled] [large] [hooks] [decision] [options]",
  summary:
    "The benchmarks (default: the first eight, in that order; fleet, side by side with Rancher Fleet built from its Go module, watch, commit to cluster through npm run watch, and stalled, an up with one Stalled pair vs without, large, a 5 MB chart to N clusters, hooks, Helm hooks as Fleet's own agent runs them beside pulumi-fleet, and decision, a sharded environment's decision alone at 1,000 to 10,000 clusters, only when named); each prints a table and writes bench/results/<name>.json.",
  positionals: ["PART", "PART", "PART", "PART", "PART", "PART", "PART", "PART", "PART", "PART", "PART", "PART", "PART"],
  requiredPositionals: 0,
  options: {
    clusters: {
      type: "string" as const,
      value: "N|N,N",
      help: "plan, render, shards, stalled, large: clusters (shards and stalled default 200, large 50); decision: comma-separated (default 1000,5000,10000); engine: comma-separated cluster counts (default 10,50); page: clusters (default 200)",
    },
    bundles: {
      type: "string" as const,
      value: "N",
      help: "plan, engine, stalled, shards: bundles per cluster (stalled default 5); page: bundles (default 50)",
    },
    objects: { type: "string" as const, value: "N", help: "engine: objects per bundle (default 10); stalled: (default 5)" },
    "default-only": { type: "boolean" as const, help: "shards: not the full passes of --all-shards" },
    "skip-one-stack": { type: "boolean" as const, help: "shards: measure only the shards (a fleet too large for one stack here)" },
    "shard-by": { type: "boolean" as const, help: "shards, with --per-shard: clusters labelled by region, shardBy: region, the edit one region's" },
    "skip-checkpoints-only": {
      type: "boolean" as const,
      help: "engine: measure only the default (state written once at the end), not also a checkpoint per step",
    },
    runs: {
      type: "string" as const,
      value: "N",
      help: "live: runs per measurement; page: page loads; startup: no-op ups; rollout: updates per variant (default 3); stalled: rounds (default 2)",
    },
    "engine-env": {
      type: "string" as const,
      value: "K=V,K=V",
      help: "engine, live: extra environment for the engine (e.g. PULUMI_PARALLEL=32,PULUMI_PARALLEL_DIFF=true), to measure its settings",
    },
    "node-options": {
      type: "string" as const,
      value: "OPTS",
      help: "engine: NODE_OPTIONS of each phase's process instead of scripts/node-options.sh's (--node-options= for none), to measure what they buy",
    },
    "cpu-profile": { type: "string" as const, value: "DIR", help: "engine: write a CPU profile of each phase's process into DIR (node --cpu-prof)" },
    shards: { type: "string" as const, value: "N", help: "shards: how many shards (default 4)" },
    parallel: { type: "string" as const, value: "N", help: "shards: shards run at a time (default 2)" },
    "per-shard": {
      type: "string" as const,
      value: "N",
      help: "shards: shards chosen automatically, clustersPerShard N (instead of --shards); decision: clustersPerShard (default 50)",
    },
    parts: { type: "string" as const, value: "LIST", help: "live: which of prune,apply,churn (default all)" },
    commits: { type: "string" as const, value: "N", help: "watch: commits pushed, each deployed before the next (default 10)" },
    "per-cluster": { type: "boolean" as const, help: "large: values that name the cluster, so each cluster is a render of its own" },
  },
};

async function main(): Promise<void> {
  const { values, positionals } = parseCommand(process.argv.slice(2), SPEC);
  const unknown = positionals.find((p) => !(p in ALL));
  if (unknown) throw new UsageError(`unknown benchmark '${unknown}' (one of ${Object.keys(ALL).join(", ")})`);
  setBenchOptions(values);
  const chosen = positionals as Name[];
  for (const name of chosen.length ? chosen : (Object.keys(DEFAULT) as Name[])) {
    console.log(`\n== bench ${name}`);
    await ALL[name]();
  }
}

runMain(SPEC, main);
