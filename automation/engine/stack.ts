/**
 * The Automation API harness shared by the operations entry points and the end-to-end tests: a
 * LocalWorkspace on this project with an inline program (the same fleetProgram index.ts runs), the
 * engine from tools/, the user's backend (automation/engine/backend.ts), and nothing that reaches Pulumi Cloud
 * unless the user's backend is Pulumi Cloud.
 *
 * The inline program runs in this process, so the operations can watch the plan it computes; the
 * real CLI on index.ts (`npm run pulumi -- up -s <env>`) registers the same resources (tested).
 */
import { parseYamlFile } from "../../core/base/yaml-documents";
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { CONTENT_FILE_ENV, newContentFilePath } from "./content-handover";
import { LocalWorkspace, OutputMap, ProjectSettings, Stack, StackAlreadyExistsError, UpOptions } from "@pulumi/pulumi/automation";
import * as YAML from "yaml";
import { CONFIG_NAMESPACE, StackConfig } from "../../core/config/stack";
import { checkShardStackFile } from "../../core/config/shard-files";
import { ProgramInputs } from "../../components/program";
import { attachCaptured, Captured, capturedOutputsOf, inlineProgram, releaseRun } from "./inline-program";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { Backend, BackendOptions, resolveBackend } from "./backend";
import { engineTempDir } from "./engine-tmp";
import { engineMemoryEnv } from "./cli-memory";
import { pulumiCommand, toolchain } from "./toolchain";
import { stopSignal } from "../../core/base/stop-signal";
import { phase } from "./timings";

export const PROJECT_NAME = "pulumi-fleet";
/** The passphrase of the embedded local stack only (documented in docs/cli.md). */
export const LOCAL_PASSPHRASE = "local";

export interface StackOptions extends BackendOptions {
  stack: string;
  /** The stack configuration; default: the engine's config from stacks/Pulumi.<stack>.yaml. */
  config?: StackConfig;
  /** Directory holding Pulumi.<stack>.yaml (default <project>/stacks). */
  stackConfigDir?: string;
  deploy?: ProgramInputs;
  /** Extra environment for the engine (for example PULUMI_CONFIG_PASSPHRASE). */
  env?: Record<string, string>;
  /**
   * Only a stack that exists, never created: a reader (automation/shards/inputs.ts) must not run `stack init`,
   * which takes the stack's lock, where a signal would leave it held.
   */
  existing?: boolean;
}

/** Where the stack files are: stacks/, or PULUMI_FLEET_STACKS_DIR (tests, and a checkout that keeps them elsewhere). */
export function stacksDir(): string {
  return process.env.PULUMI_FLEET_STACKS_DIR ? path.resolve(process.env.PULUMI_FLEET_STACKS_DIR) : path.join(PROJECT_DIR, "stacks");
}

/** The stack's configuration file (Pulumi.<stack>.yaml in stackConfigDir, default stacksDir()). */
export function stackFileOf(options: Pick<StackOptions, "stack" | "stackConfigDir">): string {
  return path.join(options.stackConfigDir ?? stacksDir(), `Pulumi.${options.stack}.yaml`);
}

/**
 * Without a stack file (or with one the CLI created, holding only an encryption salt) the engine would
 * run with an empty configuration: zero clusters, so every deployed bundle would be pruned.
 */
function checkStackFile(options: StackOptions): void {
  const file = stackFileOf(options);
  const shown = path.relative(PROJECT_DIR, file);
  if (!fs.existsSync(file)) throw new Error(`stack ${options.stack}: ${shown} not found (one file per environment under stacks/)`);
  const config = (parseYamlFile(fs.readFileSync(file, "utf8"), shown) as { config?: Record<string, unknown> } | null)?.config ?? {};
  if (!Object.keys(config).some((k) => k.startsWith(`${CONFIG_NAMESPACE}:`))) {
    throw new Error(`stack ${options.stack}: ${shown} has no ${CONFIG_NAMESPACE}: configuration`);
  }
  checkShardStackFile(path.dirname(file), options.stack);
}

/** Render mode (no cluster to read): the given config's renderDir, else the stack file's. */
export function isRenderMode(options: Pick<StackOptions, "stack" | "stackConfigDir" | "config">): boolean {
  if (options.config) return options.config.renderDir !== undefined;
  const doc = YAML.parse(fs.readFileSync(stackFileOf(options), "utf8"));
  return doc?.config?.[`${CONFIG_NAMESPACE}:renderDir`] !== undefined;
}

/**
 * The backend and passphrase settings every engine process of a stack gets (Automation API and the
 * `npm run pulumi` wrapper alike): the local stack's documented passphrase, else the user's.
 */
export function engineEnv(stack: string, backend: Backend, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PULUMI_BACKEND_URL: backend.url, ...extra };
  if (env.PULUMI_CONFIG_PASSPHRASE === undefined && env.PULUMI_CONFIG_PASSPHRASE_FILE === undefined) {
    const fromEnv = process.env.PULUMI_CONFIG_PASSPHRASE ?? (stack === "local" ? LOCAL_PASSPHRASE : undefined);
    if (fromEnv === undefined && !process.env.PULUMI_CONFIG_PASSPHRASE_FILE) {
      throw new Error(`stack ${stack}: set PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE) to the stack's passphrase`);
    }
    if (fromEnv !== undefined) env.PULUMI_CONFIG_PASSPHRASE = fromEnv;
  }
  return env;
}

export async function openStack(options: StackOptions): Promise<Stack> {
  if (!options.config) checkStackFile(options);
  const tools = toolchain();
  const backend = resolveBackend(options);
  if (backend.fileDir) fs.mkdirSync(backend.fileDir, { recursive: true });
  const env: Record<string, string> = {
    ...tools.env,
    TMPDIR: engineTempDir(),
    // The engine diffs resources in parallel instead of one by one on its step generator: a preview of
    // 1,293 resources 7.3-8.1 s instead of 8.4-9.5 s (BENCHMARKS.md). The user's own setting wins.
    PULUMI_PARALLEL_DIFF: process.env.PULUMI_PARALLEL_DIFF ?? "true",
    ...engineMemoryEnv(),
    ...backupsOff(),
    // Where a refresh finds the contents its pairs compare with: a file of this open's own, there while a command needs it (content-handover.ts).
    [CONTENT_FILE_ENV]: newContentFilePath(),
    ...engineEnv(options.stack, backend, options.env),
  };
  phase("toolchain found");
  const command = await pulumiCommand(tools);
  phase("CLI version checked");
  // One per stack: the workspace writes Pulumi.yaml on every open, and shard stacks open at once (a
  // shared file was read half-written: "expected project to be an object").
  const workDir = path.join(backend.localDir, "workspace", options.stack);
  fs.mkdirSync(workDir, { recursive: true });
  const captured: Captured = {};
  const ws = await LocalWorkspace.create({
    program: inlineProgram(options.config, options.deploy, captured),
    workDir,
    pulumiCommand: command,
    envVars: env,
    // stackConfigDir is a Pulumi.yaml key the CLI honours; this SDK's ProjectSettings type lacks it.
    projectSettings: {
      name: PROJECT_NAME,
      runtime: "nodejs",
      backend: { url: backend.url },
      stackConfigDir: path.relative(workDir, options.stackConfigDir ?? stacksDir()),
    } as ProjectSettings,
  });
  const found = inFileBackend(backend, options.stack);
  if (options.existing && found === false) throw new Error(`stack ${options.stack} does not exist`);
  const stack =
    found === true
      ? await selectedWithoutCli(ws, options.stack)
      : options.existing
        ? await Stack.select(options.stack, ws)
        : // A file backend without the stack's file: created at once (no `stack select` that fails first).
          // A stack file already written (the operator's config) is rewritten whole by the CLI when it adds
          // the secrets salt, which can change a folded YAML value: `stack init` does that before anything
          // reads the config. Without a stack file there is nothing to rewrite, and no CLI start is needed.
          found === false
          ? await (fs.existsSync(stackFileOf(options)) ? createdByCli(ws, options.stack) : createdWithoutCli(ws, backend.fileDir!, options.stack))
          : await Stack.createOrSelect(options.stack, ws);
  attachCaptured(stack, captured);
  releasedAfterEachCommand(stack, captured);
  return stack;
}

/** Each engine command of the stack lets its program run's resources go once it has returned (inline-program.ts releaseRun). */
function releasedAfterEachCommand(stack: Stack, captured: Captured): void {
  const s = stack as unknown as Record<"up" | "preview" | "refresh" | "destroy", (...args: unknown[]) => Promise<unknown>>;
  for (const name of ["up", "preview", "refresh", "destroy"] as const) {
    const command = s[name].bind(stack);
    s[name] = (...args) => command(...args).finally(() => releaseRun(captured));
  }
}

/**
 * The CLI's backups off (PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS) unless the user set it or its
 * older name: every update's full state copy in .pulumi/backups is byte for byte the checkpoint copy the
 * same update leaves in its history, which the retention keeps instead (state-retention.ts): one full
 * copy written per update, not two.
 */
function backupsOff(): Record<string, string> {
  const set = ["PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS", "PULUMI_DISABLE_CHECKPOINT_BACKUPS"].some((k) => process.env[k] !== undefined);
  return set ? {} : { PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS: "true" };
}

/**
 * Whether a file backend holds the stack: its state file, as Pulumi's DIY backend lays it out per
 * project. Undefined when that cannot be told: another backend, a stack name with an organization or
 * project, or a backend of the older layout (stacks not under their project).
 */
function inFileBackend(backend: Backend, stack: string): boolean | undefined {
  const { fileDir } = backend;
  const base = fileDir && fileBackendPath(fileDir, "stacks", stack);
  if (!fileDir || !base) return undefined;
  if ([".json", ".json.gz", ".json.zst"].some((ext) => fs.existsSync(base + ext))) return true;
  return projectLayout(fileDir) ? false : undefined;
}

/**
 * Where a file backend keeps one of this project's stacks, as Pulumi's DIY backend lays them out per
 * project: the base name of its state file ("stacks"), its history folder ("history") or its backups folder ("backups"). Undefined for
 * a stack name with an organization or project.
 */
export function fileBackendPath(fileDir: string, kind: "stacks" | "history" | "backups", stack: string): string | undefined {
  return /^[A-Za-z0-9_.-]+$/.test(stack) ? path.join(fileDir, ".pulumi", kind, PROJECT_NAME, stack) : undefined;
}

/**
 * A new stack of a file backend, without a stack file yet, without `pulumi stack init` (a CLI start
 * and the passphrase's key derivation, 0.26 s, paid again by the first `up`): its state file, an empty checkpoint in the
 * format `pulumi stack import` reads (version 3). The first operation's CLI creates the stack's
 * secrets salt in Pulumi.<stack>.yaml, as `stack init` would have. Written exclusively: a stack another
 * process created meanwhile is selected, never overwritten.
 */
async function createdWithoutCli(ws: LocalWorkspace, fileDir: string, name: string): Promise<Stack> {
  const base = fileBackendPath(fileDir, "stacks", name)!; // inFileBackend told it is a file backend's plain name
  fs.mkdirSync(path.dirname(base), { recursive: true });
  const meta = path.join(fileDir, ".pulumi", "meta.yaml");
  if (!fs.existsSync(meta)) writeExclusive(meta, "version: 1\n"); // stacks kept per project, as this CLI lays them out
  const checkpoint = { version: 3, checkpoint: { stack: `organization/${PROJECT_NAME}/${name}`, latest: null } };
  const created = writeExclusive(`${base}.json`, JSON.stringify(checkpoint));
  const stack = await selectedWithoutCli(ws, name);
  if (created) createdNow.add(stack);
  return stack;
}

/** A new stack by `pulumi stack init`; one another process created meanwhile is selected. */
function createdByCli(ws: LocalWorkspace, name: string): Promise<Stack> {
  return Stack.create(name, ws).then(
    (created) => {
      createdNow.add(created);
      return created;
    },
    (err) => (err instanceof StackAlreadyExistsError ? Stack.select(name, ws) : Promise.reject(err)),
  );
}

/** Writes a file that must not exist yet; false when it does (another process wrote it first). */
function writeExclusive(file: string, text: string): boolean {
  try {
    fs.writeFileSync(file, text, { flag: "wx" });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

/** A file backend that keeps its stacks per project (meta.yaml version 1, what this CLI writes), or a new one. */
export function projectLayout(dir: string): boolean {
  const meta = path.join(dir, ".pulumi", "meta.yaml");
  if (!fs.existsSync(meta)) return !fs.existsSync(path.join(dir, ".pulumi", "stacks"));
  return Number(YAML.parse(fs.readFileSync(meta, "utf8"))?.version) >= 1;
}

/**
 * The stack without `pulumi stack select` (one CLI start, 0.12 s of every operation): every command
 * the operations run names its stack (--stack), so selecting only tells whether it exists, which the
 * caller knows. Any other stack is created or selected by the SDK as usual.
 */
function selectedWithoutCli(ws: LocalWorkspace, name: string): Promise<Stack> {
  return withMethods(ws, { selectStack: async () => undefined }, () => Stack.select(name, ws));
}

/**
 * Runs `run` with some of the SDK object's methods replaced by the given ones (own properties shadowing
 * its prototype's), and its own methods back afterwards, whatever happens.
 */
async function withMethods<T>(target: object, methods: Record<string, (...args: never[]) => Promise<unknown>>, run: () => Promise<T>): Promise<T> {
  Object.assign(target, methods);
  try {
    return await run();
  } finally {
    for (const name of Object.keys(methods)) delete (target as Record<string, unknown>)[name];
  }
}

/** Stacks this process has just created: their state is known to be empty, so it is not read. */
const createdNow = new WeakSet<Stack>();

/** Whether openStack created the stack and nothing ran on it since (asked once: it holds no state yet). */
export function isNewStack(stack: Stack): boolean {
  return createdNow.delete(stack);
}

/**
 * The SDK's `up` followed by nothing: its own up() reads the outputs and the update's history entry back
 * with three CLI calls once the engine has exited (0.4 to 0.5 s of every `up`). The outputs are the
 * program's own (captured as they resolved); the summary is the engine's summary event, which the
 * caller's onEvent sees. Only when the outputs were not captured does the SDK read them back.
 */
export async function upWithoutReadBack(stack: Stack, opts: UpOptions): Promise<OutputMap> {
  const outputs = async () => capturedOutputsOf(stack) ?? Stack.prototype.outputs.call(stack);
  return withMethods(stack, { outputs, info: async () => undefined }, async () => (await stack.up(opts)).outputs);
}

const execFileAsync = promisify(execFile);

/**
 * A CLI command the SDK has no call for (or makes in two), run as the workspace runs its own: the
 * stack's CLI, work directory and environment. Resolves to its standard output.
 */
export async function runCli(stack: Stack, args: string[]): Promise<string> {
  const ws = stack.workspace as LocalWorkspace;
  const { stdout } = await execFileAsync(ws.pulumiCommand.command, args, {
    cwd: ws.workDir,
    env: { ...process.env, ...(ws.pulumiHome ? { PULUMI_HOME: ws.pulumiHome } : {}), ...ws.envVars },
    maxBuffer: 1 << 30,
    signal: stopSignal,
    killSignal: "SIGINT", // the CLI's own cancellation
  });
  return stdout;
}
