/**
 * Where an exposition goes: a file in node_exporter's textfile collector directory, written so the
 * collector never reads half of one (a temporary file in the same directory, renamed over the old), and
 * a Pushgateway group, replaced whole (PUT) as batch jobs push. Neither ever fails the operation: a
 * failure is returned as a sentence for a warning.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { PushgatewayConfig } from "../../core/config/metrics";
import { requestWithRetries } from "../http-request";

/** The text format's media type: what node_exporter reads and the Pushgateway expects of a text body. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Writes `<dir>/<name>` atomically; the collector reads only `*.prom`, so the temporary name ends otherwise. */
export function writeTextfile(dir: string, name: string, text: string): void {
  const target = path.join(dir, name);
  const temp = path.join(dir, `.${name}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(temp, text, { mode: 0o644 });
    fs.renameSync(temp, target);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
}

/** The group's URL: `<base>/metrics/job/<job>/<label>/<value>...`, each value one escaped path segment. */
export function groupUrl(base: string, job: string, grouping: [string, string][]): URL {
  const url = new URL(base);
  const segments = [["job", job], ...grouping].flatMap(([k, v]) => [k, encodeURIComponent(v)]);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/metrics/${segments.join("/")}`;
  return url;
}

export interface PushOptions {
  /** Attempts in all (default 3). */
  attempts?: number;
  /** Before the second attempt, doubled after each (default 500 ms). */
  backoffMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** The Pushgateway's base URL from the setting, or why there is none. */
export function pushgatewayBase(cfg: PushgatewayConfig, env: NodeJS.ProcessEnv): { url: string } | { problem: string } {
  if (cfg.url) return { url: cfg.url };
  const url = env[cfg.urlFromEnv!];
  return url ? { url } : { problem: `the environment variable ${cfg.urlFromEnv} (metrics.pushgateway.urlFromEnv) is not set` };
}

/**
 * Replaces the group with `text`. Credentials in the URL become a basic Authorization header (fetch
 * refuses a URL that carries them) and never appear in what is returned. Retries a network error, a
 * timeout and a 5xx or 429 answer (http-request.ts); another answer is final. Returns undefined on success, else why not.
 */
export async function pushGroup(cfg: PushgatewayConfig, grouping: [string, string][], text: string, options: PushOptions = {}): Promise<string | undefined> {
  const base = pushgatewayBase(cfg, options.env ?? process.env);
  if ("problem" in base) return base.problem;
  let url: URL;
  try {
    url = groupUrl(base.url, cfg.job, grouping);
  } catch {
    return "the Pushgateway URL is not a URL";
  }
  const headers: Record<string, string> = { "content-type": EXPOSITION_CONTENT_TYPE };
  if (url.username || url.password) {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`;
    url.username = "";
    url.password = "";
  }
  const attempts = options.attempts ?? 3;
  const first = options.backoffMs ?? 500;
  const policy = {
    attempts,
    backoffMs: Array.from({ length: Math.max(1, attempts - 1) }, (_, i) => first * 2 ** i),
    attemptTimeoutMs: cfg.timeoutSeconds * 1000,
  };
  // A push takes at most its attempts and pauses: a long Retry-After is not waited for past that.
  const deadline = Date.now() + attempts * policy.attemptTimeoutMs + policy.backoffMs.reduce((a, b) => a + b, 0);
  const r = await requestWithRetries(url, { method: "PUT", headers, body: text }, policy, deadline);
  if (r.ok) return undefined;
  const where = `${url.origin}${url.pathname}`;
  const last = r.status ? `${where} answered ${r.status}${r.body ? `: ${r.body}` : ""}` : `${where}: ${r.why}`;
  return `${last}${r.attempts > 1 ? ` (after ${r.attempts} attempts)` : ""}`;
}
