/** The operator's bounds on what a GitRepo's remote can make the git source do (never the content's). */
import { positiveNumber } from "../operator-env";

export interface GitBounds {
  /** What one fetch may add to the object store. */
  fetchBytes: number;
  /** How long one git command may run before it is killed with everything it started. */
  timeoutMs: number;
  /** A URL's store that no resolution used for this long is removed. */
  unusedStoreMs: number;
}

const MiB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_GIT_BOUNDS: GitBounds = { fetchBytes: 2048 * MiB, timeoutMs: 600_000, unusedStoreMs: 30 * DAY_MS };

/** PULUMI_FLEET_MAX_FETCH_MIB, PULUMI_FLEET_GIT_TIMEOUT_SECONDS, PULUMI_FLEET_GIT_CACHE_DAYS. */
export function gitBounds(env: NodeJS.ProcessEnv = process.env): GitBounds {
  const d = DEFAULT_GIT_BOUNDS;
  return {
    fetchBytes: Math.floor(positiveNumber(env, "PULUMI_FLEET_MAX_FETCH_MIB", d.fetchBytes / MiB) * MiB),
    timeoutMs: Math.floor(positiveNumber(env, "PULUMI_FLEET_GIT_TIMEOUT_SECONDS", d.timeoutMs / 1000) * 1000),
    unusedStoreMs: Math.floor(positiveNumber(env, "PULUMI_FLEET_GIT_CACHE_DAYS", d.unusedStoreMs / DAY_MS) * DAY_MS),
  };
}
