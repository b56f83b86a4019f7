/**
 * Slack's sink (incoming webhooks, mrkdwn): `&`, `<` and `>` are its markup (`<!here>`, `<!channel>`,
 * `<@U123>`, `<https://x|text>` are mentions and links), bare URLs are linked and unfurled, `*_~` and
 * backticks format, and a code block ends at the next ```. Content reaches a message only through
 * these functions.
 */
import { capped, defused, MAX_SINK_TEXT, plainLine, plainLines } from "./text";

const SLACK: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
// Slack has no backslash escape for its formatting characters: a lookalike keeps the words.
const FORMATTING: Record<string, string> = { "*": "∗", _: "ˍ", "~": "∼", "`": "ˋ" };

function slackEntities(s: string): string {
  return s.replace(/[&<>]/g, (c) => SLACK[c]);
}

/** Content as mrkdwn text on one line (a headline): no mention, link, or formatting of its own. */
export function slackText(s: string, max = 300): string {
  return slackEntities(defused(capped(plainLine(s), max))).replace(/[*_~`]/g, (c) => FORMATTING[c]);
}

/** Content inside a ``` code block (several lines): it cannot end the block, mention or link. */
export function slackCode(s: string, max = MAX_SINK_TEXT): string {
  return slackEntities(defused(capped(plainLines(s), max)).replace(/`/g, FORMATTING["`"]));
}
