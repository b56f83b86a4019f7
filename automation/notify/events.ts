/**
 * Which (bundle, cluster) pairs changed state, as events for the team's webhooks: a pure decision of
 * what was last said about each pair (the memory, notify-memory.ts) and what is observed now. A pair
 * that stays as it was sends nothing: no "deployed" on a no-op `up` (unlike Fleet's "Deployed bundle"
 * on every reconcile, fleet#2856), no second "failed" while it fails for the same reason, no second
 * "drift" from each scheduled `status` while the same objects stay edited.
 */
import { NotificationType } from "../../core/config/notifications";
import { compare } from "../reports/deploy-events";
import type { PairCondition } from "../reports/vocabulary";
import type { RunRef } from "../runs/runs";

/** A pair as this run saw it: Fleet's state and the words that go with it. */
export interface PairObservation {
  key: string;
  gitRepo: string;
  bundle: string;
  cluster: string;
  /** Fleet's BundleDeployment state: Ready, NotReady, ErrApplied, WaitApplied, Modified, OutOfSync. */
  state: string;
  /** Why, beside the state (reports/vocabulary.ts): Stalled, Offline, Paused, OffSchedule, Held. */
  condition?: PairCondition;
  message: string;
  deploymentId: string;
  commit: string;
}

/** What was last said about a pair (or, before any event, what the stack last recorded). */
export interface Remembered {
  state: string;
  message: string;
}

export type Memory = Record<string, Remembered>;

/** One event, the schema every webhook format is made from (the `json` format sends it as is). */
export interface NotificationEvent {
  type: NotificationType;
  stack: string;
  gitRepo: string;
  bundle: string;
  cluster: string;
  state: string;
  /** The state last said or recorded; null for a pair never seen before. */
  previousState: string | null;
  /** Why, beside the state (reports/vocabulary.ts); null when nothing but the state is to say. */
  condition: PairCondition | null;
  deploymentId: string;
  commit: string;
  /** The server's words for a failure, the objects for drift, what changed for a deploy; redacted (redact.ts). */
  message: string;
  /** ISO 8601. */
  time: string;
  /** After an up: the run (automation/runs/runs.ts), so a rollback's or a redeploy's events are told apart from an ordinary up's. */
  run?: string;
  runKind?: RunRef["kind"];
}

/** The event type of a state: Fleet's states grouped as a team reads them. */
export function typeOfState(state: string): NotificationType {
  if (state === "Ready") return "deployed";
  if (state === "Modified") return "drift";
  if (state === "WaitApplied" || state === "OutOfSync") return "held";
  return "failed";
}

export interface Decision {
  events: NotificationEvent[];
  /** The memory to keep for the next run. */
  memory: Memory;
}

interface Context {
  stack: string;
  time: string;
  run?: RunRef;
}

/**
 * After an `up`: one event per pair whose state changed (a failure's changing words are not news: sameEvent), or whose
 * objects this update actually changed (`deployed`: its deploy event's words, automation/reports/deploy-events.ts),
 * and one per pair pruned. Pairs not observed and not pruned are forgotten (no longer in the stack).
 */
export function decideAfterUp(memory: Memory, observed: PairObservation[], deployed: Map<string, string>, pruned: PairObservation[], ctx: Context): Decision {
  const events: NotificationEvent[] = [];
  const next: Memory = {};
  for (const o of observed) {
    const before = memory[o.key];
    const deployedNow = o.state === "Ready" && deployed.has(o.key);
    // `up` without --refresh does not read the clusters: drift `status` found is still there unless this update re-applied the pair.
    if (before?.state === "Modified" && o.state === "Ready" && !deployedNow) {
      next[o.key] = before;
      continue;
    }
    next[o.key] = remembered(o);
    const changed = before ? !sameEvent(before, o) : o.state !== "Ready";
    if (!changed && !deployedNow) continue;
    events.push(eventOf(o, before, ctx, deployedNow ? deployed.get(o.key)! : o.message || (before ? `${before.state} -> Ready` : "Ready")));
  }
  for (const p of pruned) {
    if (next[p.key]) continue; // pruned under one name, deployed under another in the same update: the deploy is the news
    events.push({ ...eventOf(p, memory[p.key], ctx, p.message), type: "pruned", state: "Pruned" });
  }
  return { events: sorted(events), memory: next };
}

/**
 * After `status`: drift only (Modified, with the objects edited by hand). A pair remembered as drifted
 * and now seen without drift is remembered as it is now, silently, so that its next drift is news;
 * every other pair's memory is left to the next `up`.
 */
export function decideAfterStatus(memory: Memory, observed: PairObservation[], ctx: Context): Decision {
  const events: NotificationEvent[] = [];
  const next: Memory = { ...memory };
  for (const o of observed) {
    const before = memory[o.key];
    if (o.state === "Modified") {
      next[o.key] = remembered(o);
      if (!before || !sameEvent(before, o)) events.push(eventOf(o, before, ctx, o.message));
    } else if (before?.state === "Modified") {
      next[o.key] = remembered(o);
    }
  }
  return { events: sorted(events), memory: next };
}

/**
 * Whether what is observed is what was last said. A failure (ErrApplied, NotReady) or a hold is one
 * event per pair and reason (its state): its words are content's (a template's `fail`, an API server
 * quoting an object) and may change on every run, and each change must not be a new event that crowds
 * out other teams'. Drift is said again when other objects drift: its words are the objects edited by
 * hand on the cluster, not content.
 */
export function sameEvent(before: Remembered, now: { state: string; message: string }): boolean {
  if (before.state !== now.state) return false;
  return now.state !== "Modified" || before.message === rememberedMessage(now.message);
}

/** What is kept of a pair's words (they are content's): at most this many characters, and how many there were. */
export const REMEMBERED_CHARS = 2000;

export function rememberedMessage(message: string): string {
  return message.length <= REMEMBERED_CHARS ? message : `${message.slice(0, REMEMBERED_CHARS)}… (${message.length} characters)`;
}

const remembered = (o: { state: string; message: string }): Remembered => ({ state: o.state, message: rememberedMessage(o.message) });

function eventOf(o: PairObservation, before: Remembered | undefined, ctx: Context, message: string): NotificationEvent {
  return {
    type: typeOfState(o.state),
    stack: ctx.stack,
    gitRepo: o.gitRepo,
    bundle: o.bundle,
    cluster: o.cluster,
    state: o.state,
    previousState: before?.state ?? null,
    condition: o.condition ?? null,
    deploymentId: o.deploymentId,
    commit: o.commit,
    message,
    time: ctx.time,
    ...(ctx.run ? { run: ctx.run.id, runKind: ctx.run.kind } : {}),
  };
}

function sorted(events: NotificationEvent[]): NotificationEvent[] {
  return events.sort((a, b) => compare(`${a.gitRepo}/${a.bundle}/${a.cluster}`, `${b.gitRepo}/${b.bundle}/${b.cluster}`));
}

/** Only the event types a webhook asked for. */
export function eventsFor(events: NotificationEvent[], types: readonly NotificationType[]): NotificationEvent[] {
  return events.filter((e) => types.includes(e.type));
}
