/** Polls until `check` holds (controllers settle asynchronously, e.g. after `up` returns for deletes). */
export async function eventually<T>(what: string, read: () => Promise<T>, check: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs / 1000} s; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
