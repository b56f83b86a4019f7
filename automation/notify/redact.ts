/**
 * What leaves the runner for a chat channel must not carry a credential. An API server's words can
 * quote the object it refused (a Secret's data, a value in an annotation), and git or Helm errors can
 * quote URLs with passwords. Secret sets already have their messages withheld by the provider and their
 * lookups' values replaced (core/render/lookup-secrets.ts); this is the last pass over every message
 * sent: known values (the webhooks' own URLs) and anything shaped like a credential become `[secret]`.
 */
import { REDACTED, redactionOrder, redactSecrets } from "../../core/render/lookup-secrets";

/** The longest message a webhook gets: the rest is cut, said so, and is in `status` and the CI log. */
export const MAX_MESSAGE_CHARS = 2000;

const CREDENTIAL_KEYS =
  "password|passwd|pwd|passphrase|secret|client[_-]?secret|token|access[_-]?token|refresh[_-]?token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|credentials?|auth|authorization|bearer|sig|signature|sshPrivateKey|kubeconfig";

const PATTERNS: [RegExp, string | ((...m: string[]) => string)][] = [
  // A PEM private key block, and age identities (SOPS keys).
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  [/AGE-SECRET-KEY-1[0-9A-Z]+/g, REDACTED],
  // A Secret's data as an object: every value goes, the keys stay (they say which item).
  [/("(?:data|stringData)"\s*:\s*\{)([^{}]*)(\})/g, (_m, open, body, close) => `${open}${body.replace(/(:\s*)"(?:[^"\\]|\\.)*"/g, `$1"${REDACTED}"`)}${close}`],
  [/((?:^|[\s{,])(?:data|stringData)\s*:\s*map\[)([^\]]*)(\])/g, (_m, open, body, close) => `${open}${body.replace(/(\S+?:)\S+/g, `$1${REDACTED}`)}${close}`],
  // Credentials in URLs: userinfo and query parameters that carry them (a Teams workflow's sig=).
  [/([a-z][a-z0-9+.-]*:\/\/)[^\s/@"']+@/gi, `$1${REDACTED}@`],
  [new RegExp(`([?&](?:${CREDENTIAL_KEYS}|code|key|sv|se|sp)=)[^&\\s"']+`, "gi"), `$1${REDACTED}`],
  // Chat webhooks' own URLs (their path is the secret).
  [/https:\/\/hooks\.slack\.com\/[^\s"']+/gi, `https://hooks.slack.com/${REDACTED}`],
  // Authorization headers and bearer tokens.
  [/\b(Bearer|Basic|token)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  // "password": "x", password: x, password=x (JSON, YAML, Go's %v, flags).
  [
    new RegExp(
      `(["']?\\b(?:${CREDENTIAL_KEYS})\\b["']?\\s*[:=]\\s*)(?!"?\\[secret\\]|(?:Bearer|Basic)\\s)("(?:[^"\\\\]|\\\\.)*"|'[^']*'|[^\\s,;})\\]]+)`,
      "gi",
    ),
    `$1${REDACTED}`,
  ],
  // Tokens of well-known shapes: JWTs (service account tokens), GitHub, Slack, AWS access keys.
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b/g, REDACTED],
];

/** `text` with `known` values and credential-shaped strings replaced, and cut to MAX_MESSAGE_CHARS. */
export function redactMessage(text: string, known: readonly string[] = []): string {
  let out = redactSecrets(text, redactionOrder(known.filter((v) => v.length >= 4)));
  for (const [re, by] of PATTERNS) out = out.replace(re, by as string);
  return out.length > MAX_MESSAGE_CHARS ? `${out.slice(0, MAX_MESSAGE_CHARS)}… (cut; the whole message is in \`status\`)` : out;
}
