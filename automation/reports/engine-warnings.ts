/**
 * The warnings the program gives the engine (a setting not honoured, a content warning), printed by
 * us once each when the engine's own output is not shown: the engine repeats a warning per resource
 * that logs it, and once more in its closing "Diagnostics" section. They are printed together at the
 * end, without those that restate a failure the error already names (a pair that failed and keeps what
 * it had), at most MAX_PRINTED of them. Which lines to print is decided here, the printing is the caller's.
 */
import { EngineEvent } from "@pulumi/pulumi/automation";

/** The engine's color markup (`<{%reset%}>`), which the event keeps even with colors off. */
const MARKUP = /<\{%[a-z]+%\}>/g;

/** How many warnings are printed; content decides how many there are (one per bundle, say). */
export const MAX_PRINTED = 50;

/** The distinct warnings of a run, in order. */
export class WarningsOnce {
  private readonly seen = new Set<string>();
  private readonly kept: string[] = [];
  private more = 0;

  /** Feed every engine event. */
  add(event: EngineEvent): void {
    const line = this.next(event);
    if (line === undefined) return;
    if (this.kept.length < MAX_PRINTED * 4) this.kept.push(line);
    else this.more++;
  }

  /** The lines to print: each once, none that contains a failure's words (`restated`: the failures' messages). */
  lines(restated: string[] = []): string[] {
    const own = this.kept.filter((w) => !restated.some((m) => m && w.includes(m)));
    const extra = Math.max(0, own.length - MAX_PRINTED) + this.more;
    return [...own.slice(0, MAX_PRINTED), ...(extra ? [`… and ${extra} more warning(s) (--verbose shows the engine's own output)`] : [])];
  }

  next(event: EngineEvent): string | undefined {
    const d = event.diagnosticEvent;
    if (!d || d.severity !== "warning" || d.ephemeral) return undefined;
    const text = d.message.replace(MARKUP, "").trim();
    if (!text || this.seen.has(text)) return undefined;
    this.seen.add(text);
    return text.startsWith("warning:") ? text : `warning: ${text}`;
  }
}
