/**
 * The CI log's sink: every line the CLI prints (warnings, errors, progress, reports) goes to a CI
 * runner that acts on lines starting with a workflow command (GitHub's `::error::`, `::add-mask::`,
 * `::stop-commands::`, `##[group]`; Azure's `##vso[`), and to terminals that act on escape sequences.
 * Content's words are in many of those lines, so the escaping is done once where they leave: the
 * process's stdout and stderr (guardCiLog, installed by every entry point through scripts/cli.ts),
 * line by line, whatever printed them.
 */
import { plainStream } from "./text";

// A line a runner takes as a command: GitHub reads `::` and `##[` after leading whitespace.
const COMMAND_START = /^(\s*)(::|##\[|##vso\[)/i;
// The start of a line that may still become a command with the next write.
const COMMAND_PREFIX = /^\s*(:|#|##|##v|##vs|##vso)?$/i;

/** One line of the log: a workflow command at its start gets a backslash before it, and is printed, not run. */
export function ciLogLine(line: string): string {
  return line.replace(COMMAND_START, "$1\\$2");
}

/**
 * Text for the CI log: every line break a runner splits on (CR, LF) a "\n" and U+2028 and its kind a
 * space (plainStream), escape sequences and control characters removed, and no line a workflow command.
 */
export function ciLogText(s: string): string {
  return plainStream(s).split("\n").map(ciLogLine).join("\n");
}

interface Writable {
  // Any stream's write (Node's overloads included): only ever called with a string or bytes here.
  write: (chunk: never, ...rest: never[]) => unknown;
}

const RAW = Symbol.for("pulumi-fleet.ci-log.raw");
type Guarded = Writable & { [RAW]?: (text: string) => unknown };

/**
 * Routes every write to `stream` through ciLogLine. A command can be split over two writes (`:` then
 * `:error::`), so the start of a line that could still become one is held until the next write (or
 * exit). Idempotent. The progress display's own cursor movements go through writeRaw.
 */
export function guardCiLog(stream: Writable, onExit: (flush: () => void) => void = (f) => process.once("exit", f)): void {
  const s = stream as Guarded;
  if (s[RAW]) return;
  type AnyWrite = (chunk: unknown, ...rest: unknown[]) => unknown;
  const original = s.write.bind(stream) as AnyWrite;
  let held = ""; // a line's start not written yet
  let midLine = false; // the current line has text written already: it is no longer at a line start
  s[RAW] = (text: string) => {
    const h = held;
    held = "";
    return original(h + text);
  };
  const guardedWrite: AnyWrite = (chunk, ...rest) => {
    if (typeof chunk !== "string" && !(chunk instanceof Uint8Array)) return original(chunk, ...rest);
    const lines = plainStream(held + (typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))).split("\n");
    held = "";
    const last = lines.pop()!;
    const out = lines.map((l, i) => (i === 0 && midLine ? l : ciLogLine(l)));
    if (lines.length) midLine = false;
    let text = out.length ? out.join("\n") + "\n" : "";
    if (midLine) text += last;
    else if (COMMAND_PREFIX.test(last)) held = last;
    else {
      text += ciLogLine(last);
      midLine = true;
    }
    if (!text) {
      const done = rest.find((r): r is () => void => typeof r === "function");
      if (done) process.nextTick(done);
      return true;
    }
    return original(text, ...rest.filter((r) => typeof r === "function"));
  };
  s.write = guardedWrite as Writable["write"];
  onExit(() => {
    if (held) original(ciLogLine(held));
    held = "";
  });
}

/** Writes to a guarded stream as is: for escape sequences this program makes itself (the progress display). */
export function writeRaw(stream: Writable, text: string): unknown {
  const raw = (stream as Guarded)[RAW];
  return raw ? raw(text) : (stream.write as (chunk: string) => unknown)(text);
}
