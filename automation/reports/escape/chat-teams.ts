/**
 * Microsoft Teams' sink (an Adaptive Card): a TextBlock's text is Markdown (links, emphasis, lists),
 * so content is never a TextBlock's: it is a TextRun of a RichTextBlock, which Adaptive Cards render
 * as plain text. Bare URLs and @-mentions are defused as well, for clients that link them anyway.
 */
import { capped, defused, MAX_SINK_TEXT, plainLine, plainLines } from "./text";

export interface TextRun {
  type: "TextRun";
  text: string;
  weight?: "Bolder";
  fontType?: "Monospace";
  isSubtle?: boolean;
}

/** Content as a TextRun: plain text on one line (a headline) or, with `multiline`, its lines kept. */
export function teamsRun(s: string, style: Omit<TextRun, "type" | "text"> = {}, multiline = false, max = MAX_SINK_TEXT): TextRun {
  const text = multiline ? plainLines(s) : plainLine(s);
  return { type: "TextRun", text: defused(capped(text, max)), ...style };
}

/** A RichTextBlock of runs: the card element whose text is never read as Markdown. */
export function teamsRichText(runs: TextRun[], separator = false): Record<string, unknown> {
  return { type: "RichTextBlock", inlines: runs, ...(separator ? { separator: true } : {}) };
}
