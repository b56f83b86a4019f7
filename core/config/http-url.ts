/** The checks every http(s) URL of the stack file gets, with what each setting adds (a URL is the operator's reach). */

/** Why `url` is not an http or https URL, or (what `refuse` names) why it carries what it must not; undefined when fine. */
export function httpUrlProblem(url: string, refuse: { credentials?: string; queryOrFragment?: string } = {}): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `must be an http or https URL (got ${JSON.stringify(url)})`;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `must be an http or https URL (got ${parsed.protocol.slice(0, -1)})`;
  if (refuse.credentials && (parsed.username || parsed.password)) return `carries credentials: ${refuse.credentials}`;
  if (refuse.queryOrFragment && (parsed.search || parsed.hash)) return `must have no query or fragment${refuse.queryOrFragment}`;
  return undefined;
}
