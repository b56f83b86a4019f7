/**
 * `npm run plan -- --stack NAME`: the plan of a stack without the engine: per GitRepo its commit and
 * bundles, per (bundle, cluster) the matched target and deploymentId. Reads stacks/Pulumi.<stack>.yaml
 * directly (secrets stay encrypted, so it never needs the passphrase).
 */
import { loadStackFile, planFleet, PROJECT_DIR } from "../core/pipeline";
import { FleetError } from "../core/errors";
import { parseCommand, required, runMain } from "./cli";

const SPEC = {
  usage: "npm run plan -- --stack NAME",
  summary: "The plan of a stack without the engine: per GitRepo its commit and bundles, per (bundle, cluster) the target and deploymentId.",
  options: { stack: { type: "string" as const, value: "NAME", help: "the environment: stacks/Pulumi.NAME.yaml (required)" } },
};

async function main(): Promise<void> {
  const stack = required(parseCommand(process.argv.slice(2), SPEC).values.stack, "stack");
  const config = loadStackFile(stack, PROJECT_DIR);
  const started = Date.now();
  const state = await planFleet(config);
  console.log(`stack ${stack}: ${config.clusters.length} clusters, ${config.gitRepos.length} GitRepos, ${state.plan.entries.length} bundle deployments (${Date.now() - started} ms)`);
  for (const repo of config.gitRepos) {
    const src = state.sources.get(repo.name)!;
    const bundles = state.bundles.filter((b) => b.gitRepo === repo.name);
    console.log(`\ngitRepo ${repo.name} @ ${src.commit}`);
    for (const b of bundles) {
      const entries = state.plan.entries.filter((e) => e.bundle === b.name && e.gitRepo === repo.name);
      console.log(`  bundle ${b.name} (${b.style.kind}, ${b.path}) -> ${entries.length ? entries.map((e) => e.cluster).join(", ") : "no cluster"}`);
      for (const e of entries) {
        const custom = e.customizations.length ? ` +${e.customizations.join("+")}` : "";
        console.log(`    ${e.cluster.padEnd(12)} target=${e.target}${custom} namespace=${e.namespace} deploymentID=${e.deploymentId.slice(0, 14)}…${e.deploymentId.slice(-8)}`);
      }
    }
  }
  for (const s of state.plan.skipped) console.log(`  skipped ${s.bundle} on ${s.cluster}: doNotDeploy (target ${s.target})`);
}

runMain(SPEC, main, (err) => (err instanceof FleetError ? `error: ${err.message}` : String(err.stack ?? err)));
