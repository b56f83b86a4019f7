/**
 * What every sink's escaping starts from: content's text made plain (no terminal escape sequences, no
 * control characters, one kind of line break) and bounded in length. Each sink (markdown.ts, ci-log.ts,
 * chat-slack.ts, chat-teams.ts, html.ts) adds its own syntax on top; none of them trusts content.
 */

/** The most characters of one content-derived text any sink shows; `status` and the JSON events have it whole. */
export const MAX_SINK_TEXT = 2000;

// ANSI/VT escape sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST, e.g. hyperlinks and window
// titles; one never runs past its line, so it cannot swallow the lines after it), and any other
// two-character ESC sequence. The 8-bit forms (U+009B, U+009D) are removed as
// control characters, alone: matching their parameters could swallow a JSON string's closing quote.
// eslint-disable-next-line no-control-regex -- control characters are what this removes
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\r\n]*(?:\x07|\x1b\\)?|\x1b[@-_]?/g;
// Every line break a renderer or a log viewer may honour: CR LF, CR, LF, VT, FF, NEL, LS, PS.
const LINE_BREAK = /\r\n|[\r\n\v\f\u0085\u2028\u2029]/g;
// Control characters left after line breaks are normalised (tab kept), and the bidirectional
// overrides that make text read in another order than it is stored (Trojan Source).
// eslint-disable-next-line no-control-regex -- control characters are what this removes
const CONTROL = /[\x00-\x08\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Content's text with escape sequences and control characters removed and every line break a "\n". */
export function plainLines(s: string): string {
  return String(s).replace(ANSI, "").replace(LINE_BREAK, "\n").replace(CONTROL, "");
}

/**
 * plainLines for a stream that also carries JSON (`status --json`, `shards --matrix`): JSON.stringify
 * escapes CR, LF, VT and FF but not U+2028, U+2029 and NEL, so those become spaces, not line breaks
 * (a CI runner splits lines on CR and LF only), and the JSON stays valid.
 */
export function plainStream(s: string): string {
  return String(s)
    .replace(ANSI, "")
    .replace(/\r\n|[\r\n\v\f]/g, "\n")
    .replace(/[\u0085\u2028\u2029]/g, " ")
    .replace(CONTROL, "");
}

/** plainLines on one line: every line break a space. */
export function plainLine(s: string): string {
  return plainLines(s).replace(/\n/g, " ");
}

/** At most `max` characters (whole code points), a cut said with "…". */
export function capped(s: string, max = MAX_SINK_TEXT): string {
  const points = Array.from(s);
  return points.length <= max ? s : points.slice(0, Math.max(0, max - 1)).join("") + "…";
}

/** U+200B: breaks a token a renderer would act on (an @-mention, a URL) without changing what is read. */
export const ZWSP = "\u200b";

/**
 * @-mentions (`@channel`, `@here`, `@user`, `@org/team`) and bare URLs (`https://`, `www.`) are acted on
 * by chat and GitHub renderers even in plain text: a zero-width space after `@` and in the scheme
 * keeps the words and drops the action. Issue references (`#12`, `GH-12`) would cross-link other threads.
 */
export function defused(s: string): string {
  return s
    .replace(/@/g, `@${ZWSP}`)
    .replace(/([a-z][a-z0-9+.-]*):\/\//gi, `$1${ZWSP}://`)
    .replace(/\bwww\./gi, `www${ZWSP}.`)
    .replace(/#(?=\d)/g, `#${ZWSP}`)
    .replace(/\bgh-(?=\d)/gi, (m) => `${m.slice(0, 2)}${ZWSP}-`);
}
