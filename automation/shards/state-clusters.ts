/**
 * The clusters a stack's state deploys: its Cluster components and the clusters its bundle deployments
 * are named after ("<cluster>/<bundle>"). Read as recorded.ts reads a shard's inputs: a file backend's
 * checkpoint without the CLI, any other backend through `pulumi stack export`. A stack never created
 * deploys none; one that cannot be read is an error (never "none"). Asked of a removed shard, whose file
 * is out of date with the definition by then (the operations refuse to open such a stack): the export
 * opens it from a scratch copy holding only the file's secrets settings, as moves.ts does for a move.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { StackNotFoundError } from "@pulumi/pulumi/automation";
import { CONFIG_NAMESPACE } from "../../core/config/stack";
import { secretsSettingsOf, stackFilePath } from "../../core/config/shard-files";
import { CLUSTER_TYPE, BUNDLE_DEPLOYMENT_TYPE } from "../../core/desired/types";
import { BackendOptions, resolveBackend } from "../engine/backend";
import { openStack } from "../engine/stack";
import { nameOfUrn } from "../../core/model/keys";
import { checkpointInFiles, CheckpointResource } from "../engine/checkpoint-file";

/** `dir`: where the stack's file is (its secrets settings open the stack). */
export async function clustersInState(stack: string, dir: string, options: BackendOptions = {}): Promise<string[]> {
  const backend = resolveBackend(options);
  const inFiles = backend.fileDir ? checkpointInFiles(backend.fileDir, stack) : undefined;
  if (inFiles === "none") return [];
  if (inFiles) return clustersOf(inFiles);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pf-shard-state-"));
  try {
    // The file's secrets settings and a configuration the open accepts: nothing is deployed from it, only exported.
    const exportOnly = { ...secretsSettingsOf(dir, stack), config: { [`${CONFIG_NAMESPACE}:clusters`]: [] } };
    fs.writeFileSync(stackFilePath(scratch, stack), YAML.stringify(exportOnly));
    let opened;
    try {
      opened = await openStack({ ...options, stack, existing: true, stackConfigDir: scratch });
    } catch (err) {
      // Never created: a file backend's own words (stack.ts openStack), or the CLI's for any other backend.
      if (err instanceof StackNotFoundError || (err as Error).message === `stack ${stack} does not exist`) return [];
      throw err;
    }
    return clustersOf(((await opened.exportStack()).deployment?.resources ?? []) as CheckpointResource[]);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

export function clustersOf(resources: CheckpointResource[]): string[] {
  const names = new Set<string>();
  for (const r of resources) {
    if (!r.urn) continue;
    if (r.type === CLUSTER_TYPE) names.add(nameOfUrn(r.urn));
    else if (r.type === BUNDLE_DEPLOYMENT_TYPE) names.add(nameOfUrn(r.urn).split("/")[0]);
  }
  return [...names].sort();
}
