/**
 * The program body shared by index.ts (`pulumi up` with the Node.js language host) and the Automation
 * API inline programs (automation/): core computes the desired state (core/desired/state.ts), the Fleet
 * component registers it. The stack configuration comes from the engine's config, unless a caller (a
 * test, a script) hands over a StackConfig directly.
 */
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { checkShardStackFile } from "../core/config/shard-files";
import { compileHealthChecks } from "../core/config/health-check-compile";
import { StackConfig } from "../core/config/stack";
import { liveFacts } from "../core/desired/facts";
import { DEPLOYMENT_STATES_OUTPUT, DEPLOYMENTS_OUTPUT, PreviousDeployment, previousFromOutputs, RECORD_OUTPUT } from "../core/desired/previous";
import { applied, PairReport } from "../core/model/pair";
import { DeploymentRecord, FleetSummary } from "../core/desired/records";
import { desiredState } from "../core/desired/state";
import { DeployOptions } from "../core/desired/options";
import { sweepAndRecord } from "../core/desired/sweep";
import { configFromValues } from "../core/plan/pipeline";
import { PROJECT_DIR } from "../core/base/project-dir";
import { Fleet } from "./fleet";

/** The stack configuration as the engine hands it over: structured values arrive as JSON text. */
export function configFromPulumi(): StackConfig {
  return configFromValues((key) => pulumi.runtime.getConfig(key), pulumi.getStack());
}

/**
 * This stack's last outputs, read through a StackReference to itself. A new stack has none: undefined.
 * Any failure to read propagates: without the record the guards cannot run, so the update must stop.
 */
export async function readPreviousDeployment(): Promise<PreviousDeployment | undefined> {
  const self = selfReference();
  const summary = await self.getOutputDetails(RECORD_OUTPUT);
  if (!(summary.value ?? summary.secretValue)) return undefined;
  const deployments = await self.getOutputDetails(DEPLOYMENTS_OUTPUT);
  const states = await self.getOutputDetails(DEPLOYMENT_STATES_OUTPUT);
  return previousFromOutputs(summary.value ?? summary.secretValue, deployments.value ?? deployments.secretValue, states.value ?? states.secretValue);
}

/** The StackReference to this stack: a read resource every state of this program holds. */
function selfReference(): pulumi.StackReference {
  return new pulumi.StackReference(`${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`);
}

export interface FleetOutputs {
  summary: FleetSummary;
  deployments: pulumi.Output<Record<string, DeploymentRecord>>;
  /** Each BundleDeployment's state as its provider reported it. */
  deploymentStates: pulumi.Output<Record<string, PairReport>>;
  /** Each cluster's setup (its namespaces and agent) state, by cluster. */
  clusterSetupStates: pulumi.Output<Record<string, PairReport>>;
  /** Only when the shard runner gave one (DeployOptions.inputs), and every pair reached Ready. */
  inputs?: pulumi.Output<string | undefined>;
}

export async function fleetProgram(config?: StackConfig, options: DeployOptions = {}): Promise<FleetOutputs> {
  const started = performance.now();
  const early = options.early?.();
  if (early) selfReference(); // registered as when the last outputs are read through it, so the state does not change
  const previous = options.previous === undefined ? readPreviousDeployment : async () => options.previous ?? undefined;
  const facts = early?.facts ?? liveFacts(previous, options.journal, options.deployed, options.legacySetups);
  const desired = early ? await early.desired() : await desiredState(config ?? configFromPulumi(), facts, options);
  // Before anything is registered: a broken expression stops here, naming the stack file and field.
  compileHealthChecks(desired.fleet.config.file, desired.fleet.config.healthChecks);
  // The crash journal is swept and this update recorded before anything is registered (core/desired/sweep.ts).
  await sweepAndRecord(facts, desired, options.leftOut);
  const planned = performance.now();
  const fleet = new Fleet("fleet", desired, {}, options.carriedAccess ?? {});
  options.onProgramTimings?.({ planMs: planned - started, registerMs: performance.now() - planned });
  // With failed bundles or pairs the update is not done: no inputs fingerprint, so the shard runner runs it again next time.
  const done = pulumi
    .all([fleet.deploymentStates, fleet.clusterSetupStates])
    .apply((all) => all.flatMap((states) => Object.values(states)).every((s) => applied(s.state)));
  return {
    summary: desired.summary,
    deployments: fleet.deploymentRecords,
    deploymentStates: fleet.deploymentStates,
    clusterSetupStates: fleet.clusterSetupStates,
    ...(options.inputs && !desired.failures.length ? { inputs: done.apply((ok) => (ok ? options.inputs : undefined)) } : {}),
  };
}

/**
 * The program as `pulumi up` runs it on index.ts: a shard's stack file is first checked against its
 * definition, as the Automation API's openStack checks it before starting the engine.
 */
export async function cliProgram(): Promise<FleetOutputs> {
  checkShardStackFile(path.join(PROJECT_DIR, "stacks"), pulumi.getStack());
  return fleetProgram();
}
