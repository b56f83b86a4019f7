/**
 * Posting to the webhooks, bounded in every direction: a timeout per attempt, a few attempts with a
 * growing pause, a deadline per webhook for all it is sent, and a few webhooks at a time. A webhook that
 * does not take its events costs a warning naming it (never its URL, which is the credential), never the
 * operation: `up` and `status` exit as they would have without notifications.
 */
import { RequestOutcome, requestWithRetries, RetryPolicy } from "../http-request";

export interface DeliveryPolicy extends RetryPolicy {
  /** All of one webhook's requests of one run: what is left when it passes is not sent. */
  webhookDeadlineMs: number;
  /** Webhooks sent to at once. */
  parallel: number;
}

/** 3 attempts, 1 s then 2 s apart (4 s if the policy is given more), 10 s each, 60 s per webhook in all. */
export const DELIVERY_POLICY: DeliveryPolicy = { attempts: 3, backoffMs: [1000, 2000, 4000], attemptTimeoutMs: 10_000, webhookDeadlineMs: 60_000, parallel: 4 };

export interface Target {
  name: string;
  url: string;
  payloads: unknown[];
}

/** What became of one webhook's payloads. */
export interface Delivery {
  name: string;
  sent: number;
  total: number;
  /** Why the first payload not sent was not (absent: everything was sent). */
  problem?: string;
}

/** One payload, retried on 429, 5xx and network errors within the deadline; other 4xx are final (http-request.ts). */
export function postWithRetries(url: string, body: unknown, policy: RetryPolicy, deadline: number): Promise<RequestOutcome> {
  return requestWithRetries(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }, policy, deadline);
}

/** Each target's payloads in order (a receiver sees a pair's events as they happened); targets side by side, a few at a time. */
export async function deliver(targets: Target[], policy: DeliveryPolicy = DELIVERY_POLICY): Promise<Delivery[]> {
  const out: Delivery[] = new Array(targets.length);
  let next = 0;
  const worker = async () => {
    while (next < targets.length) {
      const i = next++;
      out[i] = await deliverOne(targets[i], policy);
    }
  };
  await Promise.all(Array.from({ length: Math.min(policy.parallel, targets.length) }, worker));
  return out;
}

async function deliverOne(t: Target, policy: DeliveryPolicy): Promise<Delivery> {
  const deadline = Date.now() + policy.webhookDeadlineMs;
  let sent = 0;
  for (const body of t.payloads) {
    const r = await postWithRetries(t.url, body, policy, deadline);
    if (!r.ok) {
      // The receiver refused or is down: the rest would fare no better, and the run must end.
      return { name: t.name, sent, total: t.payloads.length, problem: `${r.why} after ${r.attempts} attempt(s)` };
    }
    sent++;
  }
  return { name: t.name, sent, total: t.payloads.length };
}
