/**
 * The Automation API harness shared by the operations entry points and the end-to-end tests: a
 * LocalWorkspace on this project with an inline program (the same fleetProgram index.ts runs), the
 * engine from tools/, a local file backend, and nothing that reaches the network or Pulumi Cloud.
 *
 * Inline programs are used because the Go module proxy does not serve the Node.js language host
 * (see tools/pulumi/go.mod); with a regular Pulumi install, `pulumi up` on index.ts runs the same code.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { LocalWorkspace, ProjectSettings, PulumiCommand, Stack } from "@pulumi/pulumi/automation";
import * as YAML from "yaml";
import { CONFIG_NAMESPACE, StackConfig } from "../core/config/stack";
import { fleetProgram } from "../components/program";
import { DeployOptions } from "../components";
import { PROJECT_DIR } from "../core/pipeline";
import { toolchain } from "./toolchain";

export const PROJECT_NAME = "pulumi-fleet";
/** The passphrase of the embedded local stack only (documented in the README). */
export const LOCAL_PASSPHRASE = "local";

export interface StackOptions {
  stack: string;
  /** Where the file backend keeps state (default $PULUMI_FLEET_STATE_DIR, else <project>/.pulumi-fleet/state). */
  stateDir?: string;
  /** The stack configuration; default: the engine's config from stacks/Pulumi.<stack>.yaml. */
  config?: StackConfig;
  /** Directory holding Pulumi.<stack>.yaml (default <project>/stacks). */
  stackConfigDir?: string;
  deploy?: DeployOptions;
  /** Extra environment for the engine (for example PULUMI_CONFIG_PASSPHRASE). */
  env?: Record<string, string>;
}

export function stateDirOf(options: Pick<StackOptions, "stateDir">): string {
  return options.stateDir ?? process.env.PULUMI_FLEET_STATE_DIR ?? path.join(PROJECT_DIR, ".pulumi-fleet", "state");
}

/** The stack's configuration file (Pulumi.<stack>.yaml in stackConfigDir, default stacks/). */
export function stackFileOf(options: Pick<StackOptions, "stack" | "stackConfigDir">): string {
  return path.join(options.stackConfigDir ?? path.join(PROJECT_DIR, "stacks"), `Pulumi.${options.stack}.yaml`);
}

/**
 * Without a stack file (or with one the CLI created, holding only an encryption salt) the engine would
 * run with an empty configuration: zero clusters, so every deployed bundle would be pruned.
 */
function checkStackFile(options: StackOptions): void {
  const file = stackFileOf(options);
  const shown = path.relative(PROJECT_DIR, file);
  if (!fs.existsSync(file)) throw new Error(`stack ${options.stack}: ${shown} not found (one file per environment under stacks/)`);
  const config = YAML.parse(fs.readFileSync(file, "utf8"))?.config ?? {};
  if (!Object.keys(config).some((k) => k.startsWith(`${CONFIG_NAMESPACE}:`))) {
    throw new Error(`stack ${options.stack}: ${shown} has no ${CONFIG_NAMESPACE}: configuration`);
  }
}

/** Render mode (no cluster to read): the given config's renderDir, else the stack file's. */
export function isRenderMode(options: Pick<StackOptions, "stack" | "stackConfigDir" | "config">): boolean {
  if (options.config) return options.config.renderDir !== undefined;
  const doc = YAML.parse(fs.readFileSync(stackFileOf(options), "utf8"));
  return doc?.config?.[`${CONFIG_NAMESPACE}:renderDir`] !== undefined;
}

export async function openStack(options: StackOptions): Promise<Stack> {
  if (!options.config) checkStackFile(options);
  const tools = toolchain();
  const stateDir = stateDirOf(options);
  fs.mkdirSync(stateDir, { recursive: true });
  const env: Record<string, string> = { ...tools.env, PULUMI_BACKEND_URL: `file://${stateDir}`, ...options.env };
  if (env.PULUMI_CONFIG_PASSPHRASE === undefined && env.PULUMI_CONFIG_PASSPHRASE_FILE === undefined) {
    const fromEnv = process.env.PULUMI_CONFIG_PASSPHRASE ?? (options.stack === "local" ? LOCAL_PASSPHRASE : undefined);
    if (fromEnv === undefined && !process.env.PULUMI_CONFIG_PASSPHRASE_FILE) {
      throw new Error(`stack ${options.stack}: set PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE) to the stack's passphrase`);
    }
    if (fromEnv !== undefined) env.PULUMI_CONFIG_PASSPHRASE = fromEnv;
  }
  const pulumiCommand = await PulumiCommand.get({ root: tools.root });
  const workDir = path.join(stateDir, "..", "workspace");
  fs.mkdirSync(workDir, { recursive: true });
  return LocalWorkspace.createOrSelectStack({
    stackName: options.stack,
    projectName: PROJECT_NAME,
    program: async () => fleetProgram(options.config, options.deploy),
  }, {
    workDir,
    pulumiCommand,
    envVars: env,
    // stackConfigDir is a Pulumi.yaml key the CLI honours; this SDK's ProjectSettings type lacks it.
    projectSettings: {
      name: PROJECT_NAME,
      runtime: "nodejs",
      backend: { url: `file://${stateDir}` },
      stackConfigDir: path.relative(workDir, options.stackConfigDir ?? path.join(PROJECT_DIR, "stacks")),
    } as ProjectSettings,
  });
}
