/**
 * The Pulumi program. Thin by design: the Fleet component (components/) does the work; this file only
 * exports its readable summary and one record per BundleDeployment.
 */
import { cliProgram } from "./components/program";

// This process only runs the program: skip the SDK's per-promise stack capture (automation/engine/stack-traces.ts).
if (process.env.PULUMI_FLEET_STACK_TRACES !== "1") Error.stackTraceLimit = 0;
const outputs = cliProgram();

/** Per GitRepo: commit, bundles, clusters matched; per cluster: bundles deployed. Also read back by the safety guard. */
export const summary = outputs.then((o) => o.summary);
/** Per BundleDeployment: deploymentId, commit, namespace, object count, paused. */
export const deployments = outputs.then((o) => o.deployments);
export const deploymentStates = outputs.then((o) => o.deploymentStates);
