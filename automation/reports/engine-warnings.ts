/**
 * The warnings the program gives the engine (a setting not honoured, a content warning), printed by
 * us once each when the engine's own output is not shown: the engine repeats a warning per resource
 * that logs it, and once more in its closing "Diagnostics" section. Pure: which event is a warning to
 * print is decided here, the printing is the caller's.
 */
import { EngineEvent } from "@pulumi/pulumi/automation";

/** The engine's color markup (`<{%reset%}>`), which the event keeps even with colors off. */
const MARKUP = /<\{%[a-z]+%\}>/g;

/** A warning line the user has not seen yet, or undefined (not a warning, or one already printed). */
export class WarningsOnce {
  private readonly seen = new Set<string>();

  next(event: EngineEvent): string | undefined {
    const d = event.diagnosticEvent;
    if (!d || d.severity !== "warning" || d.ephemeral) return undefined;
    const text = d.message.replace(MARKUP, "").trim();
    if (!text || this.seen.has(text)) return undefined;
    this.seen.add(text);
    return text.startsWith("warning:") ? text : `warning: ${text}`;
  }
}
