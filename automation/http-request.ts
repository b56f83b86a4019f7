/**
 * One HTTP request to an endpoint the operator configured (a webhook, a Pushgateway), retried the one
 * way both need: on 429, 5xx, a timeout or a network error, with a timeout per attempt, a pause between
 * attempts (a longer Retry-After is honoured) and a deadline for all of it; any other answer is final.
 * Redirects are refused: a redirect would carry the request, and the credentials in it, somewhere the
 * operator did not name. What went wrong is said without the URL (a webhook's URL is its credential):
 * the status, or only the kind of a network error, whose text may name the URL.
 */

export interface RetryPolicy {
  attempts: number;
  /** The pause before each retry (the last one repeats). */
  backoffMs: number[];
  attemptTimeoutMs: number;
}

export interface RequestOutcome {
  ok: boolean;
  attempts: number;
  /** Why the last attempt failed: "HTTP 503", "no answer within 10 s", or a network error's kind. */
  why?: string;
  /** The refusing answer's status and the start of its body (at most 200 characters), when there was one. */
  status?: number;
  body?: string;
  /** The accepted answer's body, when asked for (`keepBody`): at most that many bytes, else the request failed. */
  text?: string;
}

export interface RequestOptions {
  /** Keep the accepted answer's body, read up to this many bytes: a longer one is a failure, not read further. */
  keepBody?: number;
}

type Attempt = { ok: true; text?: string } | { ok: false; retry: boolean; why: string; status?: number; body?: string; retryAfterMs?: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The body, or undefined when it is longer than `max` bytes (then its reading stops there). */
async function boundedText(res: Response, max: number): Promise<string | undefined> {
  const reader = res.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function attemptOnce(url: string | URL, init: RequestInit, timeoutMs: number, options: RequestOptions): Promise<Attempt> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs), redirect: "error" });
    if (res.ok && options.keepBody !== undefined) {
      const text = await boundedText(res, options.keepBody);
      return text === undefined ? { ok: false, retry: false, why: `answer longer than ${options.keepBody} bytes` } : { ok: true, text };
    }
    // Read whole either way: the connection goes back to the pool, and a refusal's reason is kept.
    const body = (await res.text().catch(() => "")).trim().slice(0, 200);
    if (res.ok) return { ok: true };
    const retryAfter = Number(res.headers.get("retry-after"));
    return {
      ok: false,
      retry: res.status === 429 || res.status >= 500,
      why: `HTTP ${res.status}`,
      status: res.status,
      body,
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    };
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string } };
    const why = e.name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : (e.cause?.code ?? e.name ?? "network error");
    return { ok: false, retry: true, why };
  }
}

/** `deadline` (epoch ms) bounds every attempt and pause: what is left when it passes is not tried. */
export async function requestWithRetries(
  url: string | URL,
  init: RequestInit,
  policy: RetryPolicy,
  deadline: number,
  options: RequestOptions = {},
): Promise<RequestOutcome> {
  let last: Attempt = { ok: false, retry: false, why: "deadline passed before the first attempt" };
  const outcome = (a: Attempt, attempts: number): RequestOutcome =>
    a.ok
      ? { ok: true, attempts, ...(a.text !== undefined ? { text: a.text } : {}) }
      : { ok: false, attempts, why: a.why, ...(a.status ? { status: a.status, body: a.body } : {}) };
  for (let attempt = 1; attempt <= policy.attempts; attempt++) {
    const left = deadline - Date.now();
    if (left <= 0) return outcome(last, attempt - 1);
    last = await attemptOnce(url, init, Math.min(policy.attemptTimeoutMs, left), options);
    if (last.ok || !last.retry || attempt === policy.attempts) return outcome(last, attempt);
    const pause = Math.max(policy.backoffMs[Math.min(attempt - 1, policy.backoffMs.length - 1)], last.retryAfterMs ?? 0);
    if (Date.now() + pause >= deadline) return outcome(last, attempt);
    await sleep(pause);
  }
  return outcome(last, policy.attempts);
}
