/**
 * No process outlives its operation. The Pulumi CLI starts its plugins (the Kubernetes provider, the
 * Node.js language host) in process groups of their own, so a `kill -9` of an operation's process
 * group used to leave them running. On Linux every engine CLI an operation runs, and every shard's
 * fleet.ts of a sharded run, therefore runs under proc-guard (tools/proc-guard, built by
 * tools/build-guard.sh into the tool cache): a child subreaper in a process group of its own that runs
 * the program back in the caller's group, passes signals on, and ends everything the program started
 * when the program ends or when the caller dies (SIGTERM to the program, SIGKILL to the rest).
 *
 * The CLI is guarded through a root of its own (`guardedCliRoot`): bin/pulumi there is proc-guard
 * itself, running the real CLI named in bin/pulumi.target, so the Automation API (PulumiCommand) and
 * `npm run pulumi` run it as they ran the CLI, with the same arguments, output and exit status.
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { builtToolPath, defaultCacheRoot } from "../../core/base/tool-build";

const SOURCE_DIR = path.join(PROJECT_DIR, "tools", "proc-guard");

/** Whether programs run under proc-guard here (it needs Linux's prctl). */
export function guardSupported(): boolean {
  return process.platform === "linux";
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

let binary: string | undefined;

/**
 * The proc-guard binary: found by the hash of its sources, as tools/build-guard.sh names its cache
 * directory (a few small files read, no process started), else built by that script.
 */
export function guardBinary(): string {
  if (binary) return binary;
  const hash = crypto.createHash("sha256");
  for (const f of fs
    .readdirSync(SOURCE_DIR)
    .filter((f) => f === "go.mod" || f === "go.sum" || f.endsWith(".go"))
    .sort()) {
    hash.update(fs.readFileSync(path.join(SOURCE_DIR, f)));
  }
  const expected = path.join(defaultCacheRoot(), "tools", `proc-guard-${hash.digest("hex").slice(0, 16)}`, "proc-guard");
  if (isExecutable(expected)) return (binary = expected);
  binary = builtToolPath("build-guard.sh", "proc-guard");
  return binary;
}

/** `file args` to run under proc-guard (as they are where it is not supported). */
export function guarded(file: string, args: string[]): [string, string[]] {
  return guardSupported() ? [guardBinary(), ["--", file, ...args]] : [file, args];
}

/**
 * A root whose bin/pulumi runs `cli` (a path) under proc-guard: next to the guard binary, one per CLI
 * path, made once (atomically: a complete directory is renamed into place) and reused.
 */
export function guardedCliRoot(cli: string): string {
  const guard = guardBinary();
  const key = crypto.createHash("sha256").update(cli).digest("hex").slice(0, 12);
  const root = path.join(path.dirname(guard), `cli-${key}`);
  const wrapper = path.join(root, "bin", "pulumi");
  const target = `${cli}\n`;
  try {
    if (isExecutable(wrapper) && fs.readFileSync(`${wrapper}.target`, "utf8") === target) return root;
  } catch {
    // not made yet
  }
  const tmp = fs.mkdtempSync(path.join(path.dirname(guard), ".cli-"));
  try {
    fs.mkdirSync(path.join(tmp, "bin"));
    try {
      fs.linkSync(guard, path.join(tmp, "bin", "pulumi"));
    } catch {
      fs.copyFileSync(guard, path.join(tmp, "bin", "pulumi"));
      fs.chmodSync(path.join(tmp, "bin", "pulumi"), 0o755);
    }
    fs.writeFileSync(path.join(tmp, "bin", "pulumi.target"), target);
    try {
      fs.renameSync(tmp, root); // only ever in whole: a root is complete or absent
    } catch (err) {
      if (!isExecutable(wrapper)) throw err; // else another process made it meanwhile
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return root;
}
