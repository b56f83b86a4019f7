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
import { ClusterAccess, DesiredState } from "../core/desired/types";
import { DeployOptions } from "../core/desired/options";
import { configFromValues } from "../core/plan/pipeline";
import { PROJECT_DIR } from "../core/base/project-dir";
import { Fleet } from "./fleet";
import { FleetError } from "../core/base/errors";
import { outputsShowEarlierLayout } from "../core/migrate/layouts";
import { Adoptions } from "../core/migrate/adoptions";
import { Registrations, registrationsOf } from "../core/desired/registrations";
import { PruneOnly } from "../core/desired/prune-only";

/** The stack configuration as the engine hands it over: structured values arrive as JSON text. */
export function configFromPulumi(): StackConfig {
  return configFromValues((key) => pulumi.runtime.getConfig(key), pulumi.getStack());
}

/**
 * This stack's last outputs, read through a StackReference to itself. A new stack has none: undefined.
 * Any failure to read propagates: without the record the guards cannot run, so the update must stop.
 * Outputs of an earlier version's layout stop it too: only the operations' `up` migrates the state
 * (core/migrate), and a plain `pulumi up` on it would delete and recreate every object.
 */
export async function readPreviousDeployment(file?: string): Promise<PreviousDeployment | undefined> {
  const self = selfReference();
  const summary = await self.getOutputDetails(RECORD_OUTPUT);
  if (!(summary.value ?? summary.secretValue)) return undefined;
  const deployments = await self.getOutputDetails(DEPLOYMENTS_OUTPUT);
  const states = await self.getOutputDetails(DEPLOYMENT_STATES_OUTPUT);
  if (outputsShowEarlierLayout(deployments.value ?? deployments.secretValue, states.value ?? states.secretValue)) {
    throw new FleetError(
      "this stack was deployed by an earlier version of pulumi-fleet, whose state `npm run up` migrates (core/migrate) without touching the clusters " +
        "(a plain `pulumi up` cannot: it would delete and recreate every object). Run it once, then `pulumi up` works as before",
      { ...(file ? { file } : {}) },
    );
  }
  return previousFromOutputs(summary.value ?? summary.secretValue, deployments.value ?? deployments.secretValue);
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
  /** What was registered, as digests (core/desired/registrations.ts): only when the operation gave the code's digest and no cluster was left out. */
  registrations?: Registrations;
}

/**
 * What the program is given: values. The operations hand it the desired state they computed
 * (automation/operation/desired.ts); without one (a plain `pulumi up`, tests) it computes its own from
 * the settings, reading the last outputs through a StackReference to itself.
 */
export interface ProgramInputs extends DeployOptions {
  /** The desired state, as the operation computed it; the program registers it as it is. */
  desired?: DesiredState;
  /** The access of clusters no longer in the stack whose pairs the state still holds through the stack's provider (automation/engine/deployed-objects.ts carriedAccessOf). */
  carriedAccess?: Record<string, ClusterAccess>;
  /**
   * The name the stack's state still holds a BundleDeployment under, by its key: while an earlier
   * version's state is not migrated yet (a preview or status: core/migrate Migration.aliases), an alias.
   */
  namesInState?: Record<string, string>;
  /** What the ClusterSetups take over of an earlier version's resources (core/migrate/adoptions.ts), while the state holds them. */
  adoptions?: Adoptions;
  /** The code's digest (automation/engine/program-code.ts), for the `registrations` output the next update compares with. */
  registeredBy?: string;
  /** This update only removes pairs (core/desired/prune-only.ts): the engine targets them; the rest is not registered. */
  pruneOnly?: PruneOnly;
}

export async function fleetProgram(config?: StackConfig, options: ProgramInputs = {}): Promise<FleetOutputs> {
  // The reference reading the last outputs registers, registered whoever read them, so the state does not change.
  if (options.desired && options.previous === undefined) selfReference();
  const desired = options.desired ?? (await ownDesiredState(config, options));
  const fleet = new Fleet(
    "fleet",
    desired,
    {},
    { carried: options.carriedAccess, namesInState: options.namesInState, adoptions: options.adoptions, pruneOnly: options.pruneOnly },
  );
  // With failed bundles or pairs, or a cluster left out (unreachable), the update is not done: no inputs fingerprint,
  // so the next up runs it again (automation/shards/inputs.ts) rather than be left out with that cluster not deployed.
  const done = pulumi
    .all([fleet.deploymentStates, fleet.clusterSetupStates])
    .apply((all) => all.flatMap((states) => Object.values(states)).every((s) => applied(s.state)));
  return {
    summary: desired.summary,
    deployments: fleet.deploymentRecords,
    deploymentStates: fleet.deploymentStates,
    clusterSetupStates: fleet.clusterSetupStates,
    // Not when a cluster was left out: its pairs kept their earlier inputs, which the digests of this desired state would not describe.
    ...(options.registeredBy && !options.leftOut?.size ? { registrations: registrationsOf(desired, options.registeredBy) } : {}),
    ...(options.inputs && !desired.failures.length && !options.leftOut?.size ? { inputs: done.apply((ok) => (ok ? options.inputs : undefined)) } : {}),
  };
}

/** The desired state computed in the program, with the last outputs read from the stack itself. */
async function ownDesiredState(config: StackConfig | undefined, options: DeployOptions): Promise<DesiredState> {
  const stack = config ?? configFromPulumi();
  const previous = options.previous === undefined ? () => readPreviousDeployment(stack.file) : async () => options.previous ?? undefined;
  const desired = await desiredState(stack, liveFacts(previous), options);
  // Before anything is registered: a broken expression stops here, naming the stack file and field.
  compileHealthChecks(desired.fleet.config.file, desired.fleet.config.healthChecks);
  return desired;
}

/**
 * The program as `pulumi up` runs it on index.ts: a shard's stack file is first checked against its
 * definition, as the Automation API's openStack checks it before starting the engine.
 */
export async function cliProgram(): Promise<FleetOutputs> {
  checkShardStackFile(path.join(PROJECT_DIR, "stacks"), pulumi.getStack());
  return fleetProgram();
}
