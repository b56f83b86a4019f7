/** A run's events as one Slack incoming-webhook message `{text, blocks}` (mrkdwn), every content word escaped for Slack. */
import { slackCode, slackText } from "../reports/escape/chat-slack";
import { ChatWords } from "./chat-lines";

export function slackMessage(w: ChatWords): unknown {
  const lines = w.listed.map((l) => `${l.icon} *${slackText(l.headline)}*${slackText(l.commit)}` + (l.message ? `\n\`\`\`${slackCode(l.message)}\`\`\`` : ""));
  const summary = w.leftOut.map((l) => (l.gitRepo !== undefined ? `GitRepo *${slackText(l.gitRepo)}*${slackText(l.text)}` : slackText(l.text)));
  return {
    text: slackText(w.title), // the notification's text, and what clients without blocks show
    unfurl_links: false,
    unfurl_media: false,
    blocks: [
      { type: "header", text: { type: "plain_text", text: w.title.slice(0, 150) } },
      // A section's text is at most 3000 characters.
      ...lines.map((t) => ({ type: "section", text: { type: "mrkdwn", text: t.slice(0, 3000) } })),
      ...(summary.length ? [{ type: "context", elements: summary.slice(0, 10).map((t) => ({ type: "mrkdwn", text: t.slice(0, 3000) })) }] : []),
      // A context block holds at most 10 elements.
      ...(summary.length > 10 ? [{ type: "section", text: { type: "mrkdwn", text: summary.slice(10).join("\n").slice(0, 3000) } }] : []),
    ],
  };
}
