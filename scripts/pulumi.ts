/**
 * `npm run pulumi -- <pulumi arguments>`: the Pulumi CLI built in tools/ (with its Node.js language
 * host, so it runs index.ts itself), in the project directory, with the same backend the operations
 * use (automation/engine/backend.ts) and the local stack's documented passphrase when that stack is named.
 * The arguments are the CLI's own and go through untouched: `npm run pulumi -- up -s dev --yes`.
 * Its output holds content's words (the program's warnings and errors): on a terminal it is the CLI's
 * own (prompts, colours); anywhere else (a CI log) it passes the CI log's guard, as every command's does.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { resolveBackend } from "../automation/engine/backend";
import { engineTempDir } from "../automation/engine/engine-tmp";
import { LOCAL_PASSPHRASE } from "../automation/engine/stack";
import { engineMemoryEnv } from "../automation/engine/cli-memory";
import { toolchain } from "../automation/engine/toolchain";
import { PROJECT_DIR } from "../core/base/project-dir";
import { guardCiLog } from "../automation/reports/escape/ci-log";

const args = process.argv.slice(2);
const tools = toolchain();
const backend = resolveBackend();
if (backend.fileDir) fs.mkdirSync(backend.fileDir, { recursive: true });
// Type checking is `npm run typecheck`'s job (and npm test's): the language host only transpiles, as run-ts.js does.
const env: NodeJS.ProcessEnv = {
  PULUMI_NODEJS_TRANSPILE_ONLY: "true",
  ...process.env,
  ...tools.env,
  ...engineMemoryEnv(),
  PULUMI_BACKEND_URL: backend.url,
  TMPDIR: engineTempDir(),
};
// The stack named by -s/--stack, if any; the local stack gets its passphrase as `npm start` does.
const named = args.flatMap((a, i) => (a === "-s" || a === "--stack" ? [args[i + 1]] : a.startsWith("--stack=") ? [a.slice(8)] : []));
if (args[0] === "stack" && ["select", "init"].includes(args[1])) named.push(...args.slice(2).filter((a) => !a.startsWith("-")));
if (named.includes("local") && env.PULUMI_CONFIG_PASSPHRASE === undefined && env.PULUMI_CONFIG_PASSPHRASE_FILE === undefined) {
  env.PULUMI_CONFIG_PASSPHRASE = LOCAL_PASSPHRASE;
}
const pulumi = path.join(tools.root, "bin", "pulumi");
if (process.stdout.isTTY && process.stderr.isTTY) {
  const r = spawnSync(pulumi, args, { cwd: PROJECT_DIR, env, stdio: "inherit" });
  if (r.error) throw r.error;
  process.exit(r.status ?? 1);
} else {
  guardCiLog(process.stdout);
  guardCiLog(process.stderr);
  const child = spawn(pulumi, args, { cwd: PROJECT_DIR, env, stdio: ["inherit", "pipe", "pipe"] });
  child.stdout.on("data", (c: Buffer) => process.stdout.write(c));
  child.stderr.on("data", (c: Buffer) => process.stderr.write(c));
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("error", (err) => {
    throw err;
  });
  child.on("close", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
