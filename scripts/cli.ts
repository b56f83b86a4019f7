/**
 * The one command-line parser of every entry point: Node's util.parseArgs in strict mode, so an
 * unknown option, a missing value or a stray positional is an error with the usage line (exit 2),
 * `--opt=value` works as well as `--opt value`, and `--help` prints the command's help (exit 0).
 */
import * as path from "node:path";
import { parseArgs } from "node:util";
import type { FailureContext } from "../automation/reports/error-report";
import { stoppedCode } from "../core/base/stop-signal";
import { guardCiLog } from "../automation/reports/escape/ci-log";

export interface OptionSpec {
  type: "string" | "boolean";
  /** One line for --help; a string option's value is named by `value`. */
  help: string;
  value?: string;
  multiple?: boolean;
}

export interface CommandSpec<O extends Record<string, OptionSpec>> {
  /** For example "npm run plan -- --stack NAME". */
  usage: string;
  /** What the command does, for --help. */
  summary: string;
  options: O;
  /** Names of the positionals, in order ("OPERATION", "REPO"); more than these is an error. */
  positionals?: string[];
  /** How many positionals are required (default: all of them). */
  requiredPositionals?: number;
}

type Values<O extends Record<string, OptionSpec>> = {
  [K in keyof O]?: O[K]["type"] extends "boolean" ? boolean : O[K]["multiple"] extends true ? string[] : string;
};

export interface Parsed<O extends Record<string, OptionSpec>> {
  values: Values<O>;
  positionals: string[];
}

/** Wrong usage: printed with the usage line, exit code 2. */
export class UsageError extends Error {}

export function helpText(spec: CommandSpec<Record<string, OptionSpec>>): string {
  const rows = Object.entries(spec.options).map(([name, o]) => [
    `--${name}${o.type === "string" ? ` ${o.value ?? "VALUE"}` : ""}`,
    o.help + (o.multiple ? " (repeatable)" : ""),
  ]);
  rows.push(["--help", "print this help"]);
  const width = Math.max(...rows.map(([l]) => l.length));
  return `usage: ${spec.usage}\n\n${spec.summary}\n\noptions:\n${rows.map(([l, h]) => `  ${l.padEnd(width)}  ${h}`).join("\n")}\n`;
}

/** Parses argv (without node and script) or throws UsageError; prints help and exits on --help. */
export function parseCommand<O extends Record<string, OptionSpec>>(argv: string[], spec: CommandSpec<O>): Parsed<O> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(helpText(spec));
    process.exit(0);
  }
  const options = Object.fromEntries(Object.entries(spec.options).map(([k, o]) => [k, { type: o.type, multiple: o.multiple === true }]));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split("\n")[0]);
  }
  const names = spec.positionals ?? [];
  const required = spec.requiredPositionals ?? names.length;
  if (parsed.positionals.length > names.length) {
    throw new UsageError(`unexpected argument '${parsed.positionals[names.length]}'${names.length ? "" : " (this command takes options only)"}`);
  }
  if (parsed.positionals.length < required) throw new UsageError(`missing ${names[parsed.positionals.length]}`);
  return { values: parsed.values as Values<O>, positionals: parsed.positionals };
}

/** A required string option, as a UsageError when absent. */
export function required(value: string | undefined, option: string, why = ""): string {
  if (value === undefined || value === "") throw new UsageError(`--${option} is required${why ? ` (${why})` : ""}`);
  return value;
}

/**
 * Runs an entry point: usage errors exit 2 with the usage line; any other failure exits 1, 3 when only
 * clusters could not be read (automation/reports/exit-codes.ts), or 130/143 when a signal stopped the
 * operation (core/base/stop-signal.ts), with one clear text and the path of a log
 * that holds its details (automation/reports/error-report.ts, the one place that words failures).
 * @param context what was running when it failed (the operation and stack, once parsed)
 */
export function runMain(spec: CommandSpec<Record<string, OptionSpec>>, main: () => Promise<void>, context: () => FailureContext = () => ({})): void {
  // Content's words (bundle names, a template's `fail`, an API server's answer) are in what every
  // command prints: no line of it may be a CI runner's workflow command or a terminal escape sequence.
  guardCiLog(process.stdout);
  guardCiLog(process.stderr);
  main().catch(async (err: Error) => {
    if (err instanceof UsageError) {
      console.error(`error: ${err.message}\nusage: ${spec.usage}\n(--help for the options)`);
      process.exit(2);
    }
    // Loaded only now: the backend's module reads the project's settings.
    const { resolveBackend } = await import("../automation/engine/backend");
    const { reportFailure } = await import("../automation/reports/error-report");
    const { exitCodeOf } = await import("../automation/reports/exit-codes");
    console.error(reportFailure(err, context(), path.join(resolveBackend().localDir, "logs")));
    process.exit(stoppedCode() ?? exitCodeOf(err));
  });
}
