/** What an operation reads of the stack's outputs (components/program.ts writes them): pure. */
import { OutputMap } from "@pulumi/pulumi/automation";
import { DeploymentRecord } from "../../core/desired/records";
import { CLUSTER_SETUP_STATES_OUTPUT, DEPLOYMENT_STATES_OUTPUT, DEPLOYMENTS_OUTPUT } from "../../core/desired/previous";
import { applied, PairReport } from "../../core/model/pair";
import { AgentInfo } from "../reports/status";

/** The records by deployment key (an earlier version's keys are renamed by the state's migration: core/migrate). */
export function deploymentsOutput(outputs: OutputMap): Record<string, DeploymentRecord> {
  return (outputs[DEPLOYMENTS_OUTPUT]?.value ?? {}) as Record<string, DeploymentRecord>;
}

/** Each BundleDeployment's state as its provider reported it (components/fleet.ts deploymentStates). */
export function statesOutput(outputs: OutputMap): Record<string, PairReport> {
  return (outputs[DEPLOYMENT_STATES_OUTPUT]?.value ?? {}) as Record<string, PairReport>;
}

/** Each cluster whose setup (its namespaces and agent, core/desired/setup.ts) did not reach Ready, with the provider's words. */
export function setupFailures(outputs: OutputMap): string[] {
  const states = (outputs[CLUSTER_SETUP_STATES_OUTPUT]?.value ?? {}) as Record<string, PairReport>;
  return Object.entries(states)
    .filter(([, r]) => !applied(r.state))
    .map(([cluster, r]) => `cluster ${cluster}: ${r.state}: ${r.messages.length ? r.messages.join("; ") : "no message"}`)
    .sort();
}

/** Each cluster's agent image and config hash as the last update deployed them (`summary.agents`). */
export function agentsOutput(outputs: OutputMap): Record<string, AgentInfo> {
  return (outputs.summary?.value?.agents ?? {}) as Record<string, AgentInfo>;
}
