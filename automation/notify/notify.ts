/**
 * The operations' one call into notifications (gather, decide, act): after `up` and after `status`,
 * the pairs whose state changed are sent to the stack's webhooks (core/config/notifications.ts).
 * Nothing here fails the operation: every problem is a warning naming the webhook.
 */
import { NotificationsConfig } from "../../core/config/notifications";
import { DeploymentFailure } from "../../core/plan/failures";
import { PairReport } from "../../core/model/pair";
import { DeploymentRecord } from "../../core/desired/records";
import { Backend } from "../engine/backend";
import { DeployEvent } from "../reports/deploy-events";
import { PROJECT_NAME } from "../engine/stack";
import { DeploymentStatus } from "../reports/status";
import { DELIVERY_POLICY, deliver, DeliveryPolicy, Target } from "./deliver";
import { decideAfterStatus, decideAfterUp, Decision, eventsFor, Memory, NotificationEvent } from "./events";
import { payloadsFor } from "./formats";
import { memoryStore } from "./memory-store";
import { deploysOf, observedAfterUp, observedByStatus, OfflinePairs, recordedStates } from "./observe";
import { redactMessage } from "./redact";
import type { RunRef } from "../runs/runs";

export interface NotifyOptions {
  stack: string;
  config: NotificationsConfig | undefined;
  backend: Backend;
  warn: (message: string) => void;
  /** Where the webhooks' URLs are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
  policy?: DeliveryPolicy;
}

export interface UpFacts {
  /** The stack's `deploymentStates` output before and after the update. */
  statesBefore: Record<string, PairReport>;
  statesAfter: Record<string, PairReport>;
  /** The `deployments` output before and after it. */
  before: Record<string, DeploymentRecord>;
  after: Record<string, DeploymentRecord>;
  /** The desired state's failures (broken bundles, pairs a rollout holds), decided before the engine. */
  failures: DeploymentFailure[];
  /** The update's deploy and prune events (deploy-events.ts). */
  deploys: DeployEvent[];
  /** The pairs left out because their cluster did not answer. */
  offline?: OfflinePairs;
  /** The run the update was (automation/runs/runs.ts). */
  run?: RunRef;
}

/** After an `up` (successful or with pairs that failed alone): the events sent, for the caller to show. */
export async function notifyAfterUp(o: NotifyOptions, facts: UpFacts): Promise<NotificationEvent[]> {
  return run(o, facts.statesBefore, (memory, time) => {
    const { deployed, pruned } = deploysOf(facts.deploys);
    return decideAfterUp(memory, observedAfterUp(facts.statesAfter, facts.after, facts.failures, facts.offline), deployed, pruned, {
      stack: o.stack,
      time,
      ...(facts.run ? { run: facts.run } : {}),
    });
  });
}

/** After `status`: drift it found that was not said yet. */
export async function notifyAfterStatus(
  o: NotifyOptions,
  deployments: DeploymentStatus[],
  records: Record<string, DeploymentRecord>,
  states: Record<string, PairReport>,
): Promise<NotificationEvent[]> {
  return run(o, states, (memory, time) => decideAfterStatus(memory, observedByStatus(deployments, records), { stack: o.stack, time }));
}

async function run(o: NotifyOptions, recorded: Record<string, PairReport>, decide: (memory: Memory, time: string) => Decision): Promise<NotificationEvent[]> {
  if (!o.config?.webhooks.length) return [];
  const warn = (m: string) => o.warn(`warning: stack ${o.stack}: notifications: ${m}`);
  try {
    const store = memoryStore(o.backend, PROJECT_NAME, o.stack);
    const memory = { ...recordedStates(recorded), ...(await store.read()) };
    const decision = decide(memory, new Date().toISOString());
    const env = o.env ?? process.env;
    const urls = new Map(o.config.webhooks.map((w) => [w.name, env[w.urlFromEnv] ?? ""]));
    const known = [...urls.values()].filter((u) => u);
    const events = decision.events.map((e) => ({ ...e, message: redactMessage(e.message, known) }));
    const targets: Target[] = [];
    for (const w of o.config.webhooks) {
      const payloads = payloadsFor(w.format, eventsFor(events, w.events));
      if (!payloads.length) continue;
      if (!urls.get(w.name)) {
        warn(`webhook ${JSON.stringify(w.name)}: environment variable ${w.urlFromEnv} is not set; ${payloads.length} message(s) not sent`);
        continue;
      }
      targets.push({ name: w.name, url: urls.get(w.name)!, payloads });
    }
    for (const d of await deliver(targets, o.policy ?? DELIVERY_POLICY)) {
      if (d.problem) warn(`webhook ${JSON.stringify(d.name)}: not delivered (${d.problem}); ${d.total - d.sent} of ${d.total} message(s) not sent`);
    }
    // What was decided is said, delivered or not: a webhook that was down does not get a burst later.
    await store.write(decision.memory);
    return events;
  } catch (err) {
    warn(`not sent: ${redactMessage((err as Error).message ?? String(err))}`);
    return [];
  }
}
