/**
 * `npm run plan -- --stack NAME [--desired [--json]]`: the plan of a stack without the engine: per
 * GitRepo its commit and bundles, per (bundle, cluster) the matched target and deploymentId. With
 * --desired, the desired state instead (core/desired/state.ts): every object per cluster as `up` would
 * register it. Reads stacks/Pulumi.<stack>.yaml directly (secrets stay encrypted, so it never needs the
 * passphrase).
 */
import { loadStackFile, planFleet } from "../core/plan/pipeline";
import { PROJECT_DIR } from "../core/base/project-dir";
import { describeDesired } from "../core/desired/describe";
import { offlineFacts } from "../core/desired/facts";
import { desiredState } from "../core/desired/state";
import { StackConfig } from "../core/config/stack";
import { DeploymentFailure } from "../core/plan/failures";
import { FleetError } from "../core/base/errors";
import { parseCommand, required, runMain, UsageError } from "./cli";

const SPEC = {
  usage: "npm run plan -- --stack NAME [--desired [--json]]",
  summary: "The plan of a stack without the engine: per GitRepo its commit and bundles, per (bundle, cluster) the target and deploymentId.",
  options: {
    stack: { type: "string" as const, value: "NAME", help: "the environment: stacks/Pulumi.NAME.yaml (required)" },
    desired: { type: "boolean" as const, help: "print the desired state instead: every object per cluster as `up` would apply it" },
    json: { type: "boolean" as const, help: "with --desired: the whole desired state as JSON (kubeconfigs left out)" },
  },
};

async function main(): Promise<void> {
  const { values } = parseCommand(process.argv.slice(2), SPEC);
  const stack = required(values.stack, "stack");
  if (values.json && !values.desired) throw new UsageError("--json goes with --desired");
  const config = loadStackFile(stack, PROJECT_DIR);
  if (values.desired) return printDesired(stack, config, !!values.json);
  const started = Date.now();
  const state = await planFleet(config);
  console.log(
    `stack ${stack}: ${config.clusters.length} clusters, ${config.gitRepos.length} GitRepos, ${state.plan.entries.length} bundle deployments (${Date.now() - started} ms)`,
  );
  for (const repo of config.gitRepos) {
    const src = state.sources.get(repo.name)!;
    const bundles = state.bundles.filter((b) => b.gitRepo === repo.name);
    console.log(`\ngitRepo ${repo.name} @ ${src.commit}`);
    for (const b of bundles) {
      const entries = state.plan.entries.filter((e) => e.bundle === b.name && e.gitRepo === repo.name);
      console.log(`  bundle ${b.name} (${b.style.kind}, ${b.path}) -> ${entries.length ? entries.map((e) => e.cluster).join(", ") : "no cluster"}`);
      for (const e of entries) {
        const custom = e.customizations.length ? ` +${e.customizations.join("+")}` : "";
        console.log(
          `    ${e.cluster.padEnd(12)} target=${e.target}${custom} namespace=${e.namespace} deploymentID=${e.deploymentId.slice(0, 14)}…${e.deploymentId.slice(-8)}`,
        );
      }
    }
  }
  for (const s of state.plan.skipped) console.log(`  skipped ${s.bundle} on ${s.cluster}: doNotDeploy (target ${s.target})`);
  failIfAny(state.failures.list());
}

/** Broken bundles fail alone: the plan of the rest is printed, then each failure, and the command fails. */
function failIfAny(failed: DeploymentFailure[]): void {
  for (const f of failed) console.log(`  failed: ${f.message}`);
  if (failed.length) throw new FleetError(`${failed.length} bundle deployment(s) failed (the plan of the others is above)`);
}

/**
 * Without the engine and without reading clusters: as for a new stack (no last outputs, so no emptied
 * guard and no comparePatches), no takeOwnership check and no fleet-default lookup. Said on stderr.
 */
async function printDesired(stack: string, config: StackConfig, json: boolean): Promise<void> {
  const clusters = new Set(config.clusters.map((c) => c.name));
  const state = await desiredState(config, offlineFacts(), { leftOut: clusters });
  console.error(
    `stack ${stack}: the desired state without the engine or the clusters (as for a new stack: no last outputs, no takeOwnership check, fleet-default not looked up)`,
  );
  if (!json) {
    for (const line of describeDesired(state)) console.log(line);
  } else {
    const { fleet: _fleet, ...rest } = state;
    console.log(JSON.stringify(rest, (key, value) => (key === "kubeconfig" ? "(redacted)" : value), 2));
  }
  failIfAny(state.failures);
}

runMain(SPEC, main);
