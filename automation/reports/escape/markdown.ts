/**
 * The pull-request summary's sink: GitHub-flavoured Markdown, which also renders HTML (an `<!--` hides
 * everything after it), autolinks URLs, turns `@name` into a mention and `#12` into a cross-reference.
 * Content reaches it only through these functions: as inline text (markdownText), as code
 * (markdownCode), or as a table cell (markdownCell).
 */
import { capped, defused, MAX_SINK_TEXT, plainLine } from "./text";

// Markdown's inline punctuation (emphasis, code, links and images (their `[`), tables, strikethrough, GitHub's math):
// each is escaped with a backslash, as CommonMark lets any ASCII punctuation be. `<`, `>` and `&` are
// HTML's and become entities.
const MARKDOWN_PUNCTUATION = /[\\`*_[\]!|~$]/g;
// What starts a block at a line's start (a heading, a list, a setext underline; a quote's `>` is an entity): escaped there.
const BLOCK_START = /^(\s*)([#+\-=]|\d+[.)])/;
const HTML = /[&<>]/g;
const ENTITY: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/** Content as inline Markdown text (a table cell too: its `|` is escaped): one line, nothing it holds is markup, a link, a mention or HTML. */
export function markdownText(s: string, max = MAX_SINK_TEXT): string {
  // Defused first: once escaped, `https\\://` would no longer look like a URL to defused, but would to GitHub.
  const text = defused(capped(plainLine(s), max));
  return text
    .replace(MARKDOWN_PUNCTUATION, (c) => `\\${c}`)
    .replace(BLOCK_START, (_, space: string, mark: string) => `${space}${mark.replace(/^(\d*)(.)$/, "$1\\$2")}`)
    .replace(HTML, (c) => ENTITY[c]);
}

/**
 * Content as an inline code span (names: bundles, GitRepos, clusters, files): nothing inside a code span
 * is markup, HTML, a link or a mention; its fence is longer than any run of backticks it holds.
 */
export function markdownCode(s: string, max = 256): string {
  const text = capped(plainLine(s), max);
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = "`".repeat(longest + 1);
  // A space on each side when the text starts or ends with a backtick or a space (CommonMark strips one).
  const pad = /^[` ]|[` ]$/.test(text) || !text ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** markdownCode for a table cell: a `|`, even inside a code span, would end the cell. */
export function markdownCell(s: string, max = 256): string {
  return markdownCode(s, max).replace(/\|/g, "\\|");
}
