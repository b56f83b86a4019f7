/**
 * The words of a chat message, as plain text (content unescaped: each message's format escapes them,
 * slack-message.ts and teams-message.ts): an event's headline, the message's title, and the lines of
 * what it leaves out (fair.ts chooses which events it lists).
 */
import { NotificationEvent } from "./events";
import { stateWords } from "../reports/status";
import { ChatSelection, countsText } from "./fair";

const ICON: Record<NotificationEvent["type"], string> = { deployed: "✅", failed: "❌", held: "⏸️", drift: "⚠️", pruned: "🗑️" };

/** One line of plain text per event (content unescaped: each sink escapes it). */
export function headline(e: NotificationEvent): string {
  const what = { deployed: "deployed to", failed: "failed on", held: "held on", drift: "drifted on", pruned: "pruned from" }[e.type];
  const from = e.previousState && e.previousState !== e.state ? ` (was ${e.previousState})` : "";
  return `${e.gitRepo}/${e.bundle} ${what} ${e.cluster}: ${stateWords(e)}${from}`;
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

/** A chat message's words, decided once as plain text: what each format lays out and escapes. */
export interface ChatWords {
  title: string;
  /** Each event the message lists: its line (icon, headline, short commit) and its message, for a code block. */
  listed: { line: string; headline: string; icon: string; commit: string; message?: string }[];
  leftOut: { gitRepo?: string; text: string }[];
}

export function chatWords(events: NotificationEvent[], s: ChatSelection): ChatWords {
  return {
    title: title(events),
    listed: s.listed.map((e) => ({
      icon: ICON[e.type],
      headline: headline(e),
      commit: shortCommit(e.commit),
      line: `${ICON[e.type]} ${headline(e)}${shortCommit(e.commit)}`,
      ...(e.message ? { message: e.message } : {}),
    })),
    leftOut: leftOutLines(s),
  };
}
