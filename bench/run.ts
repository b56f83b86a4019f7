/**
 * `npm run bench [-- plan|engine|live ...] [options]`: the benchmarks (default: all three, in that
 * order). Each prints a table and writes bench/results/<name>.json; BENCHMARKS.md has the figures,
 * the machine and the commands. Options: plan: --clusters N --bundles M; engine: --clusters 10,50,200
 * --bundles 10 --objects 10; live: --runs 3.
 */
import { planBench } from "./plan";
import { engineBench } from "./engine";
import { liveBench } from "./live";

const ALL = { plan: async () => planBench(), engine: engineBench, live: liveBench } as const;
type Name = keyof typeof ALL;

async function main(): Promise<void> {
  const chosen = process.argv.slice(2).filter((a): a is Name => a in ALL);
  for (const name of chosen.length ? chosen : (Object.keys(ALL) as Name[])) {
    console.log(`\n== bench ${name}`);
    await ALL[name]();
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
