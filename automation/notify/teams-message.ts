/** A run's events as one Teams message with an Adaptive Card (Workflows webhooks and the older connectors), every content word a TextRun. */
import { teamsRichText, teamsRun } from "../reports/escape/chat-teams";
import { ChatWords } from "./chat-lines";

export function teamsMessage(w: ChatWords): unknown {
  const body: unknown[] = [teamsRichText([teamsRun(w.title, { weight: "Bolder" })])];
  for (const l of w.listed) {
    body.push(teamsRichText([teamsRun(l.line, { weight: "Bolder" })], true));
    if (l.message) body.push(teamsRichText([teamsRun(l.message, { fontType: "Monospace", isSubtle: true }, true)]));
  }
  for (const l of w.leftOut) body.push(teamsRichText([teamsRun(l.gitRepo !== undefined ? `GitRepo ${l.gitRepo}${l.text}` : l.text, { isSubtle: true })]));
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: { $schema: "http://adaptivecards.io/schemas/adaptive-card.json", type: "AdaptiveCard", version: "1.4", body },
      },
    ],
  };
}
