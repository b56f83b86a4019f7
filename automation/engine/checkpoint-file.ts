/**
 * A file backend's latest checkpoint of a stack, read from its folder without the CLI: what
 * `pulumi stack export` prints as the deployment, secrets still encrypted. Each CLI start is a few
 * tenths of a second of every operation and of a shard decision. A layout this code does not read
 * (before project folders, zstd, the state in two forms) is the CLI's to read: undefined.
 */
import * as fs from "node:fs";
import { fileBackendPath, projectLayout } from "./stack";
import { readJson } from "./history-mark";

export interface CheckpointResource {
  urn?: string;
  type?: string;
  outputs?: Record<string, unknown>;
}

/**
 * A file backend's latest checkpoint of the stack, its deployment: "none" when it has no state file (never
 * created, or removed), undefined when this code does not read that layout (before project folders, zstd,
 * the state in two forms): the CLI's to answer.
 */
export function deploymentInFiles(fileDir: string, stack: string): CheckpointDeployment | "none" | undefined {
  const stateBase = fileBackendPath(fileDir, "stacks", stack);
  if (!stateBase || !projectLayout(fileDir) || fs.existsSync(`${stateBase}.json.zst`)) return undefined;
  const states = [".json", ".json.gz"].map((ext) => stateBase + ext).filter((f) => fs.existsSync(f));
  if (states.length === 0) return "none";
  if (states.length > 1) return undefined;
  const state = readJson(states[0]) as { checkpoint?: { latest?: CheckpointDeployment | null } } | undefined;
  if (!state?.checkpoint) return undefined;
  return state.checkpoint.latest ?? {};
}

/** What a checkpoint's deployment holds that is read here. */
export interface CheckpointDeployment {
  resources?: CheckpointResource[];
  pending_operations?: { type: string; resource: { urn: string } }[];
}

/** The latest checkpoint's resources: "none" without a state file, undefined when the CLI must read it. */
export function checkpointInFiles(fileDir: string, stack: string): CheckpointResource[] | "none" | undefined {
  const d = deploymentInFiles(fileDir, stack);
  return d === undefined || d === "none" ? d : (d.resources ?? []);
}
