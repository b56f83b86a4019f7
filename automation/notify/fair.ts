/**
 * Which events one chat message lists, fairly between GitRepos (each GitRepo is a team's boundary):
 * each GitRepo's events are capped on their own and the rest of them summarised on their own line, and
 * the GitRepos take turns (failures first in each), so one team's volume never pushes another team's
 * failure out of the message. A pure decision: events in, what to list and what to count out.
 */
import { compare } from "../reports/deploy-events";
import { NotificationEvent } from "./events";

/** The most events one chat message lists (every one is in the JSON format and the CI log). */
export const MAX_CHAT_EVENTS = 20;
/** The most events of one GitRepo a chat message lists. */
export const MAX_CHAT_EVENTS_PER_GITREPO = 5;
/** The most GitRepos whose left-out events get a line of their own; the others share one. */
export const MAX_SUMMARY_LINES = 20;

// What a reader needs first: a failure before drift, before a hold, before a prune, before a deploy.
const URGENCY: Record<NotificationEvent["type"], number> = { failed: 0, drift: 1, held: 2, pruned: 3, deployed: 4 };

export interface LeftOut {
  gitRepo: string;
  count: number;
  /** How many of them by type, for the summary line ("3 failed, 1 deployed"). */
  byType: Partial<Record<NotificationEvent["type"], number>>;
}

export interface ChatSelection {
  listed: NotificationEvent[];
  /** One entry per GitRepo with events not listed, at most MAX_SUMMARY_LINES; the rest in `otherGitRepos`. */
  leftOut: LeftOut[];
  otherGitRepos: { gitRepos: number; events: number };
}

export interface ChatLimits {
  total: number;
  perGitRepo: number;
  summaryLines: number;
}

const LIMITS: ChatLimits = { total: MAX_CHAT_EVENTS, perGitRepo: MAX_CHAT_EVENTS_PER_GITREPO, summaryLines: MAX_SUMMARY_LINES };

/**
 * Round-robin over GitRepos (those with a failure first, then by name), each GitRepo's events in order
 * of urgency, until the message's limit; each GitRepo gives at most `perGitRepo`.
 */
export function selectForChat(events: NotificationEvent[], limits: ChatLimits = LIMITS): ChatSelection {
  const byRepo = new Map<string, NotificationEvent[]>();
  for (const e of events) byRepo.set(e.gitRepo, [...(byRepo.get(e.gitRepo) ?? []), e]);
  for (const list of byRepo.values()) list.sort((a, b) => URGENCY[a.type] - URGENCY[b.type] || compare(`${a.bundle}/${a.cluster}`, `${b.bundle}/${b.cluster}`));
  const repos = [...byRepo.keys()].sort((a, b) => URGENCY[byRepo.get(a)![0].type] - URGENCY[byRepo.get(b)![0].type] || compare(a, b));
  const taken = new Map(repos.map((r) => [r, 0]));
  const listed: NotificationEvent[] = [];
  for (let round = 0; round < limits.perGitRepo && listed.length < limits.total; round++) {
    for (const r of repos) {
      if (listed.length >= limits.total) break;
      const next = byRepo.get(r)![round];
      if (!next) continue;
      listed.push(next);
      taken.set(r, round + 1);
    }
  }
  const leftOut: LeftOut[] = [];
  for (const r of repos) {
    const rest = byRepo.get(r)!.slice(taken.get(r));
    if (!rest.length) continue;
    const byType: LeftOut["byType"] = {};
    for (const e of rest) byType[e.type] = (byType[e.type] ?? 0) + 1;
    leftOut.push({ gitRepo: r, count: rest.length, byType });
  }
  // The summary's own lines go first to GitRepos whose failures were left out.
  const rank = (l: LeftOut) => Math.min(...(Object.keys(l.byType) as NotificationEvent["type"][]).map((t) => URGENCY[t]));
  leftOut.sort((a, b) => rank(a) - rank(b) || compare(a.gitRepo, b.gitRepo));
  const beyond = leftOut.slice(limits.summaryLines);
  return {
    listed,
    leftOut: leftOut.slice(0, limits.summaryLines),
    otherGitRepos: { gitRepos: beyond.length, events: beyond.reduce((n, l) => n + l.count, 0) },
  };
}

/** "3 failed, 1 deployed" */
export function countsText(byType: LeftOut["byType"]): string {
  return (Object.keys(URGENCY) as NotificationEvent["type"][])
    .filter((t) => byType[t])
    .map((t) => `${byType[t]} ${t}`)
    .join(", ");
}
