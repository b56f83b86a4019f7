/**
 * What a template's `lookup` returns from a Secret stays a secret (issue 41): the deployment's objects
 * are registered as a Pulumi secret (a template may transform the value any way, so no search of the
 * objects could be complete), and its error messages and warnings, which reach the preview, the PR
 * summary, the status page and the logs, have the values replaced by `[secret]`.
 */
import { LookupAnswer } from "../model/renderer-protocol";

export const REDACTED = "[secret]";

/**
 * Shorter values are not searched for in messages: "1", "yes" or "443" would be replaced in every
 * message of the deployment, and a secret that short is no secret. The objects are secret whatever
 * the length.
 */
export const MIN_REDACTED_LENGTH = 4;

/** What the lookups of one deployment read from Secrets: whether any, and the strings to redact. */
export interface LookedUpSecrets {
  /** Some answer is a Secret, or a list holding one: the deployment's objects are registered as a secret. */
  any: boolean;
  /** Each value as read (base64) and decoded, and each long line of a multi-line value, longest first. */
  values: string[];
}

/** The Secrets among the answers (a Get of one, or a list of them) and the strings their values give. */
export function lookedUpSecrets(answers: readonly LookupAnswer[]): LookedUpSecrets {
  const values = new Set<string>();
  let any = false;
  for (const a of answers) {
    for (const obj of secretsIn(a)) {
      any = true;
      for (const v of Object.values(asRecord(obj.data))) if (typeof v === "string") addValue(values, Buffer.from(v, "base64").toString("utf8"), v);
      for (const v of Object.values(asRecord(obj.stringData))) if (typeof v === "string") addValue(values, v, Buffer.from(v, "utf8").toString("base64"));
    }
  }
  return { any, values: redactionOrder(values) };
}

/** Distinct values, longest first (a value inside a longer one is replaced after it), as redactSecrets wants them. */
export function redactionOrder(values: Iterable<string>): string[] {
  return [...new Set(values)].sort((x, y) => y.length - x.length || (x < y ? -1 : 1));
}

/**
 * `text` with every value replaced by `[secret]` (values longest first, as lookedUpSecrets gives them),
 * in one pass: a value that is part of `[secret]` itself ("secret") does not redact the marker again.
 */
export function redactSecrets(text: string, values: readonly string[]): string {
  const present = values.filter((v) => v && text.includes(v));
  if (!present.length) return text;
  return text.replace(new RegExp(present.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g"), REDACTED);
}

function secretsIn(a: LookupAnswer): Record<string, unknown>[] {
  const obj = a.object;
  if (!obj) return [];
  const items = Array.isArray(obj.items) ? (obj.items as unknown[]).map(asRecord) : [];
  // A list's items may come without their kind: the key says what was listed.
  if (items.length || obj.kind === "SecretList" || /List$/.test(String(obj.kind ?? ""))) {
    return items.filter((i) => i.kind === "Secret" || (i.kind === undefined && (a.key.kind === "Secret" || obj.kind === "SecretList")));
  }
  return obj.kind === "Secret" || (obj.kind === undefined && a.key.kind === "Secret") ? [obj] : [];
}

/** The decoded value, its base64 form, and (both forms of) a multi-line value's long lines, as a message may quote one line. */
function addValue(into: Set<string>, decoded: string, encoded: string): void {
  if (decoded.length < MIN_REDACTED_LENGTH) return;
  into.add(decoded);
  into.add(encoded);
  const escaped = JSON.stringify(decoded).slice(1, -1);
  if (escaped !== decoded) into.add(escaped);
  if (decoded.includes("\n")) for (const line of decoded.split(/\r?\n/)) if (line.trim().length >= 8) into.add(line.trim());
}

function asRecord(v: unknown): Record<string, unknown> {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
