/**
 * The clusters a stack's state deploys: its Cluster components and the clusters its bundle deployments
 * are named after ("<cluster>/<bundle>"). Read as recorded.ts reads a shard's inputs: a file backend's
 * checkpoint without the CLI, any other backend through `pulumi stack export`. A stack never created
 * deploys none; one that cannot be read is an error (never "none").
 */
import { StackNotFoundError } from "@pulumi/pulumi/automation";
import { CLUSTER_TYPE, BUNDLE_DEPLOYMENT_TYPE } from "../../core/desired/types";
import { BackendOptions, resolveBackend } from "../engine/backend";
import { openStack } from "../engine/stack";
import { urnName } from "../engine/steps";
import { checkpointInFiles, CheckpointResource } from "./recorded";

export async function clustersInState(stack: string, options: BackendOptions = {}): Promise<string[]> {
  const backend = resolveBackend(options);
  const inFiles = backend.fileDir ? checkpointInFiles(backend.fileDir, stack) : undefined;
  if (inFiles === "none") return [];
  if (inFiles) return clustersOf(inFiles);
  let opened;
  try {
    opened = await openStack({ ...options, stack, existing: true });
  } catch (err) {
    // Never created: a file backend's own words (stack.ts openStack), or the CLI's for any other backend.
    if (err instanceof StackNotFoundError || (err as Error).message === `stack ${stack} does not exist`) return [];
    throw err;
  }
  return clustersOf(((await opened.exportStack()).deployment?.resources ?? []) as CheckpointResource[]);
}

export function clustersOf(resources: CheckpointResource[]): string[] {
  const names = new Set<string>();
  for (const r of resources) {
    if (!r.urn) continue;
    if (r.type === CLUSTER_TYPE) names.add(urnName(r.urn));
    else if (r.type === BUNDLE_DEPLOYMENT_TYPE) names.add(urnName(r.urn).split("/")[0]);
  }
  return [...names].sort();
}
