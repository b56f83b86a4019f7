/**
 * A refresh runs no program, so no BundleContent's Check hands the provider the manifests its pairs'
 * Read compares with the cluster (components/content.ts). The operation hands them over instead: the
 * contents of the state it read, in a file of its private engine temp directory whose path the engine's
 * environment names (PULUMI_FLEET_CONTENT_FILE, set for every engine process of the stack: stack.ts),
 * read by the provider when a pair's Read first needs one (tools/fleet-provider content.go). A content
 * is named by its digest, so one read before the stack's lock is still right after it; a pair whose
 * content is not there (a plain `pulumi refresh`) checks only that its objects exist, and says so.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { engineTempDir } from "./engine-tmp";
import { ContentManifests } from "../../core/model/pair";

export const CONTENT_FILE_ENV = "PULUMI_FLEET_CONTENT_FILE";

/** Where a stack's contents are handed over (its name made a file name). */
export function contentFilePath(stack: string): string {
  return path.join(engineTempDir(), `content-${stack.replace(/[^A-Za-z0-9._-]/g, "_")}.json`);
}

/** Writes the contents of the state (deployed-objects.ts contentsIn) for the provider of the refresh that follows. */
export function handContentOver(stack: string, contents: ReadonlyMap<string, ContentManifests>): void {
  const file = contentFilePath(stack);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(Object.fromEntries(contents)), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
}
