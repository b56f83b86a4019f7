/**
 * The bodies each webhook format posts. `json`: one event per request, the NotificationEvent schema as
 * is (for a team's own receiver). `slack` and `teams`: one chat message per run listing its events, so
 * a commit deployed to a hundred clusters is one message, not a hundred (both services rate-limit
 * incoming webhooks): Slack's incoming webhook `{text, blocks}` (mrkdwn), and the Teams message with an
 * Adaptive Card attachment that Teams' Workflows webhooks (and the older connectors) accept. Which
 * events a chat message lists is fair between GitRepos (fair.ts); every content-derived word goes
 * through its sink's escaping (slack-message.ts, teams-message.ts; chat-lines.ts holds their words).
 */
import { WebhookFormat } from "../../core/config/notifications";
import { NotificationEvent } from "./events";
import { selectForChat } from "./fair";
import { chatWords } from "./chat-lines";
import { slackMessage } from "./slack-message";
import { teamsMessage } from "./teams-message";

export { MAX_CHAT_EVENTS } from "./fair";

/** The request bodies for one webhook: one per event (json), or one for all of them (chat). */
export function payloadsFor(format: WebhookFormat, events: NotificationEvent[]): unknown[] {
  if (!events.length) return [];
  if (format === "slack") return [slackMessage(chatWords(events, selectForChat(events)))];
  if (format === "teams") return [teamsMessage(chatWords(events, selectForChat(events)))];
  return events;
}
