/**
 * The project's Go tools are built from pinned modules by their tools/build-*.sh script, into a cache
 * outside the repository, and found by its `--path` output. A failed build is an error naming the
 * script to run for its output, never a fallback.
 */
import { execFileSync } from "node:child_process";
import * as os from "node:os";
import * as path from "node:path";
import { PROJECT_DIR } from "./project-dir";

/** The path `tools/<script> --path [...args]` prints after building or reusing `what`. */
export function builtToolPath(script: string, what: string, args: string[] = []): string {
  try {
    return execFileSync("bash", [path.join(PROJECT_DIR, "tools", script), "--path", ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
  } catch (err) {
    throw new Error(
      `${what} could not be built (tools/${script} failed: ${(err as Error).message.split("\n")[0]}); ` +
        `run \`bash tools/${script}${args.length ? ` ${args.join(" ")}` : ""}\` to see the build output`,
    );
  }
}

/** The cache root of git trees and built tools: PULUMI_FLEET_CACHE, else the XDG cache (as tools/lib.sh). */
export function defaultCacheRoot(): string {
  if (process.env.PULUMI_FLEET_CACHE) return path.resolve(process.env.PULUMI_FLEET_CACHE);
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "pulumi-fleet");
}
