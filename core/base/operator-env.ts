/**
 * Numbers the operator sets in the environment (the bounds on GitRepo content): never set by content,
 * and a value that is not a positive number is an error naming the variable, never a silent default.
 */
export function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, max = Infinity): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > max)
    throw new Error(`${name}=${JSON.stringify(raw)}: expected a positive number${max < Infinity ? ` up to ${max}` : ""}`);
  return n;
}
