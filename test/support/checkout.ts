/**
 * Checkouts of this project in temporary directories, as team members have them: the working tree's
 * files (tracked and new, not ignored), node_modules linked, each with its own stacks/ and its own
 * .pulumi-fleet/. Commands run there exactly as a user runs them (`npm run X` = run-ts.js + script).
 */
import { execFileSync, spawn, spawnSync, SpawnSyncReturns } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { tempDir } from "./git-fixtures";

export class Checkout {
  readonly dir: string;

  constructor(
    readonly name: string,
    private readonly baseEnv: NodeJS.ProcessEnv = {},
  ) {
    this.dir = tempDir(`pf-checkout-${name}-`);
    const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: PROJECT_DIR, encoding: "utf8" })
      .split("\0")
      .filter((f) => f && fs.existsSync(path.join(PROJECT_DIR, f)));
    for (const f of files) {
      fs.mkdirSync(path.dirname(path.join(this.dir, f)), { recursive: true });
      fs.copyFileSync(path.join(PROJECT_DIR, f), path.join(this.dir, f));
    }
    fs.symlinkSync(path.join(PROJECT_DIR, "node_modules"), path.join(this.dir, "node_modules"));
  }

  env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    // Node 22 from node_modules first, as npm puts it; no state dir or backend leaks in from the caller.
    const { PULUMI_FLEET_STATE_DIR: _s, PULUMI_BACKEND_URL: _b, ...rest } = process.env;
    return { ...rest, PATH: `${path.join(PROJECT_DIR, "node_modules", ".bin")}:${process.env.PATH}`, ...this.baseEnv, ...extra };
  }

  /** `npm run <script> -- args` without npm's own start-up: the script's TypeScript entry point. */
  run(script: string, args: string[], extra: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
    return spawnSync(process.execPath, [path.join(this.dir, "scripts/run-ts.js"), path.join(this.dir, script), ...args], {
      cwd: this.dir,
      env: this.env(extra),
      encoding: "utf8",
      maxBuffer: 64 * 2 ** 20,
    });
  }

  fleet(args: string[], extra: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
    return this.run("scripts/fleet.ts", args, extra);
  }

  pulumi(args: string[], extra: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
    return this.run("scripts/pulumi.ts", args, extra);
  }

  /** The same, started in its own process group (so a test can kill it and everything it started). */
  start(script: string, args: string[], extra: NodeJS.ProcessEnv = {}) {
    const child = spawn(process.execPath, [path.join(this.dir, "scripts/run-ts.js"), path.join(this.dir, script), ...args], {
      cwd: this.dir,
      env: this.env(extra),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d) => {
      stdout += d;
    });
    child.stderr!.on("data", (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, exited, output: () => ({ stdout, stderr }) };
  }

  write(file: string, content: string): void {
    fs.mkdirSync(path.dirname(path.join(this.dir, file)), { recursive: true });
    fs.writeFileSync(path.join(this.dir, file), content);
  }

  read(file: string): string {
    return fs.readFileSync(path.join(this.dir, file), "utf8");
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Fails with the command's whole output when it did not exit 0. */
export function ok(r: SpawnSyncReturns<string>, what: string): string {
  if (r.status !== 0) throw new Error(`${what} exited ${r.status ?? r.signal}:\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  return r.stdout;
}
