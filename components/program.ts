/**
 * The program body shared by index.ts (`pulumi up` with the Node.js language host) and the Automation
 * API inline programs (automation/): the stack configuration comes from the engine's config, unless a
 * caller (a test, a script) hands over a StackConfig directly.
 */
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { checkShardStackFile } from "../core/config/shard-files";
import { CONFIG_NAMESPACE, parseStackConfig, StackConfig, stackFileFor, TOP_LEVEL_KEYS } from "../core/config/stack";
import { PROJECT_DIR } from "../core/pipeline";
import { DeploymentRecord, deployFleet, DeployOptions, FleetSummary } from "./index";

/** The stack configuration as the engine hands it over: structured values arrive as JSON text. */
export function configFromPulumi(): StackConfig {
  return configFromValues((key) => pulumi.runtime.getConfig(key), pulumi.getStack());
}

/** The stack configuration from `<namespace>:<key>` values as the engine stores them (JSON text for structures). */
export function configFromValues(get: (key: string) => string | undefined, stack: string): StackConfig {
  const raw: Record<string, unknown> = {};
  for (const key of TOP_LEVEL_KEYS) {
    const text = get(`${CONFIG_NAMESPACE}:${key}`);
    if (text === undefined) continue;
    try {
      raw[key] = JSON.parse(text);
    } catch {
      raw[key] = text;
    }
  }
  return parseStackConfig(raw, stackFileFor(stack), PROJECT_DIR);
}

export interface FleetOutputs {
  summary: FleetSummary;
  deployments: pulumi.Output<Record<string, DeploymentRecord>>;
  /** Only when the shard runner gave one (DeployOptions.inputs). */
  inputs?: string;
}

export async function fleetProgram(config?: StackConfig, options: DeployOptions = {}): Promise<FleetOutputs> {
  const fleet = await deployFleet(config ?? configFromPulumi(), options);
  return { summary: fleet.summary, deployments: fleet.deploymentRecords, ...(options.inputs ? { inputs: options.inputs } : {}) };
}

/**
 * The program as `pulumi up` runs it on index.ts: a shard's stack file is first checked against its
 * definition, as the Automation API's openStack checks it before starting the engine.
 */
export async function cliProgram(): Promise<FleetOutputs> {
  checkShardStackFile(path.join(PROJECT_DIR, "stacks"), pulumi.getStack());
  return fleetProgram();
}
