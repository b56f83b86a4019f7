/**
 * The bodies each webhook format posts. `json`: one event per request, the NotificationEvent schema as
 * is (for a team's own receiver). `slack` and `teams`: one chat message per run listing its events, so
 * a commit deployed to a hundred clusters is one message, not a hundred (both services rate-limit
 * incoming webhooks): Slack's incoming webhook `{text, blocks}` (mrkdwn), and the Teams message with an
 * Adaptive Card attachment that Teams' Workflows webhooks (and the older connectors) accept.
 */
import { WebhookFormat } from "../../core/config/notifications";
import { NotificationEvent } from "./events";

/** The most events one chat message lists; the rest are counted (every one is in the JSON format and the CI log). */
export const MAX_CHAT_EVENTS = 20;

const ICON: Record<NotificationEvent["type"], string> = { deployed: "✅", failed: "❌", held: "⏸️", drift: "⚠️", pruned: "🗑️" };

/** The request bodies for one webhook: one per event (json), or one for all of them (chat). */
export function payloadsFor(format: WebhookFormat, events: NotificationEvent[]): unknown[] {
  if (!events.length) return [];
  if (format === "slack") return [slackMessage(events)];
  if (format === "teams") return [teamsMessage(events)];
  return events;
}

/** One line of plain text per event. */
export function headline(e: NotificationEvent): string {
  const what = { deployed: "deployed to", failed: "failed on", held: "held on", drift: "drifted on", pruned: "pruned from" }[e.type];
  const from = e.previousState && e.previousState !== e.state ? ` (was ${e.previousState})` : "";
  return `${e.gitRepo}/${e.bundle} ${what} ${e.cluster}: ${e.state}${from}`;
}

function title(events: NotificationEvent[]): string {
  const counts = new Map<string, number>();
  for (const e of events) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
  return `pulumi-fleet, stack ${events[0].stack}: ${[...counts].map(([t, n]) => `${n} ${t}`).join(", ")}`;
}

/** Slack's mrkdwn treats &, < and > as markup: escaped as Slack asks. */
function slackEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const shortCommit = (c: string) => (c ? ` commit ${c.slice(0, 12)}` : "");

function slackMessage(events: NotificationEvent[]): unknown {
  const shown = events.slice(0, MAX_CHAT_EVENTS);
  const more = events.length - shown.length;
  const line = (e: NotificationEvent) =>
    `${ICON[e.type]} *${slackEscape(headline(e))}*${shortCommit(e.commit)}` +
    (e.message ? `\n\`\`\`${slackEscape(e.message.replace(/```/g, "'''"))}\`\`\`` : "");
  const text = slackEscape(title(events));
  return {
    text, // the notification's text, and what clients without blocks show
    blocks: [
      { type: "header", text: { type: "plain_text", text: title(events).slice(0, 150) } },
      // A section's text is at most 3000 characters.
      ...shown.map((e) => ({ type: "section", text: { type: "mrkdwn", text: line(e).slice(0, 3000) } })),
      ...(more ? [{ type: "context", elements: [{ type: "mrkdwn", text: `and ${more} more event(s): see \`npm run status\`` }] }] : []),
    ],
  };
}

function teamsMessage(events: NotificationEvent[]): unknown {
  const shown = events.slice(0, MAX_CHAT_EVENTS);
  const more = events.length - shown.length;
  const body: unknown[] = [{ type: "TextBlock", text: title(events), weight: "Bolder", size: "Medium", wrap: true }];
  for (const e of shown) {
    body.push({ type: "TextBlock", text: `${ICON[e.type]} ${headline(e)}${shortCommit(e.commit)}`, weight: "Bolder", wrap: true, separator: true });
    if (e.message) body.push({ type: "TextBlock", text: e.message, wrap: true, fontType: "Monospace", isSubtle: true });
  }
  if (more) body.push({ type: "TextBlock", text: `and ${more} more event(s): see npm run status`, wrap: true, isSubtle: true });
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
