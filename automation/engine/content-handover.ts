/**
 * A refresh runs no program, so no BundleContent's Check hands the provider the manifests its pairs'
 * Read compares with the cluster (components/content.ts). The operation hands them over instead: the
 * contents of the state it read, in a file of its private engine temp directory whose path the engine's
 * environment names (PULUMI_FLEET_CONTENT_FILE, fixed when the stack is opened: stack.ts), read by the
 * provider when a pair's Read first needs one (tools/fleet-provider content.go). A content is named by
 * its digest, so one read before the stack's lock is still right after it; a pair whose content is not
 * there (a plain `pulumi refresh`) checks only that its objects exist, and says so. Each opened stack has
 * a file name of its own (two operations of one stack in one process, a watcher's and a status, do not
 * overwrite each other's), and the file lives only while the engine command that reads it runs.
 */
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { LocalWorkspace, Stack } from "@pulumi/pulumi/automation";
import { engineTempDir } from "./engine-tmp";
import { ContentManifests } from "../../core/model/pair";

export const CONTENT_FILE_ENV = "PULUMI_FLEET_CONTENT_FILE";

/** Where an opened stack's contents are handed over: a new name per open, no stack name in it (none collide). */
export function newContentFilePath(): string {
  return path.join(engineTempDir(), `content-${randomUUID()}.json`);
}

/** The hand-over file the stack's engine processes are told of (stack.ts openStack sets it). */
export function contentFileOf(stack: Stack): string {
  const file = (stack.workspace as LocalWorkspace).envVars?.[CONTENT_FILE_ENV];
  if (!file) throw new Error(`stack ${stack.name}: its workspace names no ${CONTENT_FILE_ENV} (not opened by openStack)`);
  return file;
}

/**
 * Runs an engine command that refreshes with the contents of the state (deployed-objects.ts contentsIn)
 * handed over, and removes them when it ends, however it ends.
 */
export async function withContentHandedOver<T>(file: string, contents: ReadonlyMap<string, ContentManifests>, command: () => Promise<T>): Promise<T> {
  try {
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(Object.fromEntries(contents)), { mode: 0o600 });
    fs.renameSync(`${file}.tmp`, file);
    return await command();
  } finally {
    fs.rmSync(`${file}.tmp`, { force: true });
    fs.rmSync(file, { force: true });
  }
}
