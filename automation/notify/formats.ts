/**
 * The bodies each webhook format posts. `json`: one event per request, the NotificationEvent schema as
 * is (for a team's own receiver). `slack` and `teams`: one chat message per run listing its events, so
 * a commit deployed to a hundred clusters is one message, not a hundred (both services rate-limit
 * incoming webhooks): Slack's incoming webhook `{text, blocks}` (mrkdwn), and the Teams message with an
 * Adaptive Card attachment that Teams' Workflows webhooks (and the older connectors) accept. Which
 * events a chat message lists is fair between GitRepos (fair.ts); every content-derived word goes
 * through its sink's escaping (automation/reports/escape/chat-slack.ts, chat-teams.ts).
 */
import { WebhookFormat } from "../../core/config/notifications";
import { slackCode, slackText } from "../reports/escape/chat-slack";
import { teamsRichText, teamsRun } from "../reports/escape/chat-teams";
import { NotificationEvent } from "./events";
import { ChatSelection, countsText, selectForChat } from "./fair";

export { MAX_CHAT_EVENTS } from "./fair";

const ICON: Record<NotificationEvent["type"], string> = { deployed: "✅", failed: "❌", held: "⏸️", drift: "⚠️", pruned: "🗑️" };

/** The request bodies for one webhook: one per event (json), or one for all of them (chat). */
export function payloadsFor(format: WebhookFormat, events: NotificationEvent[]): unknown[] {
  if (!events.length) return [];
  if (format === "slack") return [slackMessage(events, selectForChat(events))];
  if (format === "teams") return [teamsMessage(events, selectForChat(events))];
  return events;
}

/** One line of plain text per event (content unescaped: each sink escapes it). */
export function headline(e: NotificationEvent): string {
  const what = { deployed: "deployed to", failed: "failed on", held: "held on", drift: "drifted on", pruned: "pruned from" }[e.type];
  const from = e.previousState && e.previousState !== e.state ? ` (was ${e.previousState})` : "";
  return `${e.gitRepo}/${e.bundle} ${what} ${e.cluster}: ${e.state}${from}`;
}

/** Counts only, and the stack's name: the one line a notification preview shows. */
function title(events: NotificationEvent[]): string {
  const counts = new Map<string, number>();
  for (const e of events) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
  return `pulumi-fleet, stack ${events[0].stack}: ${[...counts].map(([t, n]) => `${n} ${t}`).join(", ")}`;
}

/** The summary lines of what a chat message leaves out: one per GitRepo, then one for the GitRepos beyond. */
function leftOutLines(s: ChatSelection): { gitRepo?: string; text: string }[] {
  const lines: { gitRepo?: string; text: string }[] = s.leftOut.map((l) => ({
    gitRepo: l.gitRepo,
    text: ` — and ${l.count} more (${countsText(l.byType)}): see npm run status`,
  }));
  if (s.otherGitRepos.events)
    lines.push({ text: `and ${s.otherGitRepos.events} more event(s) of ${s.otherGitRepos.gitRepos} other GitRepo(s): see npm run status` });
  return lines;
}

const shortCommit = (c: string) => (c ? ` commit ${c.slice(0, 12)}` : "");

function slackMessage(events: NotificationEvent[], s: ChatSelection): unknown {
  const line = (e: NotificationEvent) =>
    `${ICON[e.type]} *${slackText(headline(e))}*${slackText(shortCommit(e.commit))}` + (e.message ? `\n\`\`\`${slackCode(e.message)}\`\`\`` : "");
  const summary = leftOutLines(s).map((l) => (l.gitRepo !== undefined ? `GitRepo *${slackText(l.gitRepo)}*${slackText(l.text)}` : slackText(l.text)));
  const text = slackText(title(events));
  return {
    text, // the notification's text, and what clients without blocks show
    unfurl_links: false,
    unfurl_media: false,
    blocks: [
      { type: "header", text: { type: "plain_text", text: title(events).slice(0, 150) } },
      // A section's text is at most 3000 characters.
      ...s.listed.map((e) => ({ type: "section", text: { type: "mrkdwn", text: line(e).slice(0, 3000) } })),
      ...(summary.length ? [{ type: "context", elements: summary.slice(0, 10).map((t) => ({ type: "mrkdwn", text: t.slice(0, 3000) })) }] : []),
      // A context block holds at most 10 elements.
      ...(summary.length > 10 ? [{ type: "section", text: { type: "mrkdwn", text: summary.slice(10).join("\n").slice(0, 3000) } }] : []),
    ],
  };
}

function teamsMessage(events: NotificationEvent[], s: ChatSelection): unknown {
  const body: unknown[] = [teamsRichText([teamsRun(title(events), { weight: "Bolder" })])];
  for (const e of s.listed) {
    body.push(teamsRichText([teamsRun(`${ICON[e.type]} ${headline(e)}${shortCommit(e.commit)}`, { weight: "Bolder" })], true));
    if (e.message) body.push(teamsRichText([teamsRun(e.message, { fontType: "Monospace", isSubtle: true }, true)]));
  }
  for (const l of leftOutLines(s)) body.push(teamsRichText([teamsRun(l.gitRepo !== undefined ? `GitRepo ${l.gitRepo}${l.text}` : l.text, { isSubtle: true })]));
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
