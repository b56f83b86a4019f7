/**
 * `notifications`: where `up` and `status` tell a team what changed (automation/notify/). A webhook's
 * URL is a credential (a Slack or Teams incoming webhook's URL is all it takes to post), so the stack
 * file never holds it: each webhook names the environment variable the runner gets it from (a CI secret).
 */
import { Field } from "./reader";
import { keysOf, tableOf } from "./field-table";
import { NOTIFICATION_TYPES, NOTIFICATIONS_FIELDS, WEBHOOK_FORMATS } from "./stack-fields";

export { NOTIFICATION_TYPES, WEBHOOK_FORMATS };
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export interface WebhookConfig {
  /** Names the webhook in warnings (its URL never appears anywhere). */
  name: string;
  /** The environment variable holding the URL, read when an event is sent. */
  urlFromEnv: string;
  format: WebhookFormat;
  /** The event types it receives (default: all). */
  events: NotificationType[];
}

export interface NotificationsConfig {
  webhooks: WebhookConfig[];
  /** A Kubernetes Event on each cluster when a pair's state changes, posted by the provider (tools/fleet-provider events.go). */
  kubernetesEvents?: true;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function readNotifications(f: Field): NotificationsConfig | undefined {
  if (!f.present) return undefined;
  f.object(keysOf(NOTIFICATIONS_FIELDS));
  const webhooks = f.child("webhooks").items().map(readWebhook);
  const seen = new Map<string, number>();
  webhooks.forEach((w, i) => {
    const first = seen.get(w.name);
    if (first !== undefined)
      f.child("webhooks")
        .index(i)
        .child("name")
        .fail(`duplicate name ${JSON.stringify(w.name)} (also at index ${first})`);
    seen.set(w.name, i);
  });
  return { webhooks, ...(f.child("kubernetesEvents").bool(false) ? { kubernetesEvents: true as const } : {}) };
}

/**
 * A pair's `kubernetesEvents` input: where its Events go (the bundle's namespace) and what they name.
 * Only when the operator turned Events on, so a stack without them registers what it did before.
 */
export function kubernetesEventsInput(
  n: NotificationsConfig | undefined,
  e: { namespace: string; gitRepo: string; bundle: string },
): { kubernetesEvents?: { namespace: string; gitRepo: string; bundle: string } } {
  return n?.kubernetesEvents ? { kubernetesEvents: { namespace: e.namespace, gitRepo: e.gitRepo, bundle: e.bundle } } : {};
}

function readWebhook(f: Field): WebhookConfig {
  f.object(keysOf(tableOf(NOTIFICATIONS_FIELDS.webhooks)));
  if (f.child("url").present) {
    f.child("url").fail(
      "a webhook URL is a credential and is never kept in the stack file: put it in an environment variable of the runner (a CI secret) and name that variable in urlFromEnv",
    );
  }
  const name = f.child("name").string();
  const urlFromEnv = f.child("urlFromEnv").string();
  if (!ENV_NAME.test(urlFromEnv))
    f.child("urlFromEnv").fail(`must be the name of an environment variable (letters, digits and _; got ${JSON.stringify(urlFromEnv)})`);
  const format = f.child("format").oneOf(WEBHOOK_FORMATS, "json");
  const events = f.child("events").present
    ? f
        .child("events")
        .items()
        .map((e) => e.oneOf(NOTIFICATION_TYPES))
    : [...NOTIFICATION_TYPES];
  if (!events.length) f.child("events").fail(`lists no event type: leave it out for all of them (${NOTIFICATION_TYPES.join(", ")}), or remove the webhook`);
  return { name, urlFromEnv, format, events: [...new Set(events)] };
}
