/**
 * The one home for turning a failure into what the user reads: one clear line per failure, never a
 * stack trace, the SDK's `Unhandled exception`, the Automation API's command dump (`code: -2 stdout:
 * ... err?: Error: Command failed with exit code 1: <tool cache>/pulumi up ...`) or a tool-cache path.
 * Everything else (stack traces, the CLI's whole output, the chain of causes) goes to a log file under
 * the backend's local directory (automation/engine/backend.ts localDir, `logs/`, the newest MAX_LOGS kept),
 * whose path the user's text names.
 *
 * userText and engineFailureText are pure; writeFailureLog and reportFailure write the log.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { CommandError } from "@pulumi/pulumi/automation";
import type { FleetError } from "../../core/base/errors";
import { nameOfUrn } from "../engine/steps";

export interface FailureContext {
  /** "up", "preview", ... (the command's name when it is not an operation). */
  op?: string;
  stack?: string;
}

/** An error diagnostic the engine reported (automation/engine/step-recorder.ts StepRecorder keeps them). */
export interface EngineDiagnostic {
  urn?: string;
  message: string;
}

/** How many failure logs are kept; older ones are removed when a new one is written. */
export const MAX_LOGS = 20;
/** Each part of a log (an output, a stack trace) is cut to this many characters, head and tail kept. */
const MAX_PART = 100_000;

const PASSPHRASE = /incorrect passphrase|failed to decrypt/i;

/** The errors of a chain, outermost first (Error.cause, and OperationError's cause). */
function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && !out.includes(e) && out.length < 10; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

/**
 * What is kept of a failed CLI command: the Automation API's CommandError's commandResult (private in
 * its types), or the output Node's execFile attaches to its error (automation/engine/stack.ts runCli).
 */
interface CliResult {
  stdout: string;
  stderr: string;
  code: number | string;
}

function resultOf(err: unknown): CliResult | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as unknown as { commandResult?: CliResult; stderr?: unknown; stdout?: unknown; code?: number | string; cmd?: unknown };
  if (e.commandResult && typeof e.commandResult.stderr === "string") return e.commandResult;
  if (typeof e.stderr === "string" && typeof e.cmd === "string") return { stdout: String(e.stdout ?? ""), stderr: e.stderr, code: e.code ?? "?" };
  return undefined;
}

/** The CLI failure in an error's chain (a CommandError of this or another copy of the SDK, an execFile error). */
function commandErrorOf(err: unknown): CliResult | undefined {
  for (const e of chain(err)) if (e instanceof CommandError || resultOf(e)) return resultOf(e);
  return undefined;
}

/** A path into the tool cache (…/pulumi-fleet/tools/…), where the engine and its guard live, cut to its file name. */
export function withoutToolPaths(text: string): string {
  return text.replace(/(?:\/[^\s/:'"]+)*\/pulumi-fleet\/tools\/(?:[^\s/:'"]+\/)*([^\s/:'"]+)/g, "$1");
}

/** The engine's markup (colour tags, ANSI codes) out of a message. */
/** core's own errors (core/base/errors.ts), told by the name FleetError gives every one of them: reports import only types from core. */
function isFleetError(err: unknown): err is FleetError {
  return err instanceof Error && err.name === "FleetError";
}

function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/<\{%[^%]*%\}>/g, "").replace(/\x1b\[[0-9;]*m/g, "");
}

/** Each line of the text trimmed, empty ones dropped, the same line once. */
function lines(text: string): string[] {
  return [
    ...new Set(
      plain(text)
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l),
    ),
  ];
}

/** Whether a CLI failure is a passphrase that does not decrypt the stack's secrets. */
export function isWrongPassphrase(err: unknown): boolean {
  const cmd = commandErrorOf(err);
  return cmd !== undefined && PASSPHRASE.test(cmd.stderr);
}

const WRONG_PASSPHRASE = "wrong passphrase: PULUMI_CONFIG_PASSPHRASE (or the file PULUMI_CONFIG_PASSPHRASE_FILE names) does not decrypt this stack's secrets";

/** What the Pulumi CLI itself said went wrong: its `error:` lines, without the command line it was run with. */
export function cliErrorText(cmd: CliResult): string {
  const { stderr, code } = cmd;
  const all = lines(stderr).filter((l) => !/^Command failed\b/.test(l));
  const errors = all.filter((l) => l.startsWith("error:")).map((l) => l.slice("error:".length).trim());
  const said = errors.length ? errors : all.slice(-1);
  return said.length ? withoutToolPaths(said.join("\n")) : `the Pulumi CLI failed (exit code ${code})`;
}

/**
 * Why the engine failed, one line per failure: the program's own error if it threw one (the stack file,
 * a guard), else the errors the engine reported on resources, else what the CLI printed.
 */
export function engineFailureText(err: unknown, diagnostics: EngineDiagnostic[] = [], programError?: Error): string {
  if (isWrongPassphrase(err)) return WRONG_PASSPHRASE;
  if (programError) return withoutToolPaths(plain(programError.message).trim());
  const said = new Set<string>();
  for (const d of diagnostics) {
    const text = lines(d.message)
      .join("; ")
      .replace(/^Unhandled exception: (?:\w*Error: )?/, "");
    if (!text || /^(update|preview|refresh|destroy) failed$/.test(text)) continue;
    const name = d.urn && !d.urn.includes("::pulumi:pulumi:Stack::") ? `${nameOfUrn(d.urn)}: ` : "";
    said.add(withoutToolPaths(`${name}${text}`));
  }
  if (said.size) return [...said].join("\n");
  const cmd = commandErrorOf(err);
  if (cmd) return cliErrorText(cmd);
  return withoutToolPaths(err instanceof Error ? err.message : String(err));
}

/** A failure of the Pulumi CLI, worded (engineFailureText); the CLI's own error, whole, is its cause (for the log). */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly cause: unknown,
  ) {
    super(message);
    this.name = "CliFailure";
  }
}

/**
 * The error to throw for a failure of `what` ("stack NAME", "preview of stack NAME failed"): a CLI
 * failure worded for the user, any other error as it is.
 */
export function worded(err: unknown, what: string, diagnostics: EngineDiagnostic[] = [], programError?: Error): unknown {
  if (err instanceof CliFailure || (!programError && !commandErrorOf(err))) return err;
  return new CliFailure(`${what}: ${engineFailureText(err, diagnostics, programError)}`, err);
}

const UNEXPECTED = [TypeError, RangeError, ReferenceError, SyntaxError, EvalError];

/**
 * The user's text for any failure of a command (pure): one line per failure, prefixed "error: ".
 * Our own errors (FleetError, an operation's) say what they say; a CLI failure says what the CLI said;
 * anything else is named an unexpected error, with its first line only.
 */
export function userText(err: unknown, context: FailureContext = {}): string {
  let text: string;
  if (isWrongPassphrase(err) && !(err instanceof CliFailure)) text = `${context.stack ? `stack ${context.stack}: ` : ""}${WRONG_PASSPHRASE}`;
  else if (isFleetError(err)) text = err.message;
  else if (resultOf(err)) text = cliErrorText(resultOf(err)!);
  else if (!(err instanceof Error) || UNEXPECTED.some((t) => err instanceof t)) {
    const first = err instanceof Error ? `${err.name}: ${err.message.split("\n")[0]}` : String(err);
    text = `unexpected error${context.op ? ` in ${context.op}${context.stack ? ` of stack ${context.stack}` : ""}` : ""}: ${first}`;
  } else text = err.message;
  return `error: ${withoutToolPaths(plain(text).trim())}`;
}

function bounded(text: string): string {
  if (text.length <= MAX_PART) return text;
  const half = MAX_PART / 2;
  return `${text.slice(0, half)}\n[… ${text.length - MAX_PART} characters left out …]\n${text.slice(-half)}`;
}

/** The log's text: what the user saw, then every error of the chain with its stack and the CLI's output. */
export function failureLogText(err: unknown, context: FailureContext, now: Date): string {
  const parts = [
    `time: ${now.toISOString()}`,
    `command: ${process.argv.slice(1).join(" ")}`,
    `directory: ${process.cwd()}`,
    ...(context.op ? [`operation: ${context.op}`] : []),
    ...(context.stack ? [`stack: ${context.stack}`] : []),
    "",
    userText(err, context),
    "",
  ];
  for (const [i, e] of chain(err).entries()) {
    parts.push(`--- ${i ? `cause ${i}` : "error"} ---`);
    if (e instanceof Error) {
      parts.push(bounded(e.stack && e.stack.includes(e.message) ? e.stack : `${e.name}: ${e.message}\n${e.stack ?? ""}`));
      const result = resultOf(e);
      if (result) parts.push(`exit code: ${result.code}`, "stdout:", bounded(result.stdout), "stderr:", bounded(result.stderr));
    } else parts.push(String(e));
  }
  return parts.join("\n") + "\n";
}

/** Writes the log into dir (created if missing), removes all but the newest MAX_LOGS, returns its path. */
export function writeFailureLog(dir: string, err: unknown, context: FailureContext = {}, now = new Date()): string {
  fs.mkdirSync(dir, { recursive: true });
  const what = [context.op ?? path.basename(process.argv[1] ?? "command").replace(/\.[jt]s$/, ""), context.stack]
    .filter((s) => s)
    .join("-")
    .replace(/[^A-Za-z0-9_.-]/g, "_");
  const file = path.join(dir, `${now.toISOString().replace(/[:.]/g, "-")}-${what}-${process.pid}.log`);
  fs.writeFileSync(file, failureLogText(err, context, now), { mode: 0o600 });
  // The names start with the time, so they sort oldest first.
  const logs = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".log"))
    .sort();
  for (const old of logs.slice(0, Math.max(0, logs.length - MAX_LOGS))) fs.rmSync(path.join(dir, old), { force: true });
  return file;
}

/** What a command prints when it fails: the user's text and the log that holds the details. */
export function reportFailure(err: unknown, context: FailureContext, logDir: string): string {
  let where: string;
  try {
    where = `details: ${writeFailureLog(logDir, err, context)}`;
  } catch (e) {
    where = `(the details could not be written to ${logDir}: ${(e as Error).message})`;
  }
  return `${userText(err, context)}\n${where}`;
}
