/** The operator's bounds on what a GitRepo's remote can make the git source do (never the content's). */
import * as os from "node:os";
import { positiveNumber } from "../base/operator-env";

export interface GitBounds {
  /** What one fetch may add to the object store. */
  fetchBytes: number;
  /** How long one git command may run before it is killed with everything it started (a slow but moving clone). */
  timeoutMs: number;
  /**
   * A remote that sends less than `lowSpeedBytes` a second for `lowSpeedSeconds` is given up: a silent
   * remote costs its GitRepo this long, not the whole timeout (http.lowSpeedLimit/Time for http(s); ssh's
   * ConnectTimeout and ServerAlive*; for git:// and ssh, no output or pack growth for that long).
   */
  lowSpeedBytes: number;
  lowSpeedSeconds: number;
  /** How many GitRepos' sources are read at once (each runs its own git processes). */
  concurrency: number;
  /** A URL's store that no resolution used for this long is removed. */
  unusedStoreMs: number;
}

const MiB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_GIT_BOUNDS: GitBounds = {
  fetchBytes: 2048 * MiB,
  timeoutMs: 600_000,
  lowSpeedBytes: 1000,
  lowSpeedSeconds: 30,
  // Git is mostly waiting on the network: a few per core, never one per GitRepo of a large stack.
  concurrency: Math.max(4, 2 * os.availableParallelism()),
  unusedStoreMs: 30 * DAY_MS,
};

/**
 * PULUMI_FLEET_MAX_FETCH_MIB, PULUMI_FLEET_GIT_TIMEOUT_SECONDS, PULUMI_FLEET_GIT_LOW_SPEED_BYTES,
 * PULUMI_FLEET_GIT_LOW_SPEED_SECONDS, PULUMI_FLEET_GIT_CONCURRENCY, PULUMI_FLEET_GIT_CACHE_DAYS.
 */
export function gitBounds(env: NodeJS.ProcessEnv = process.env): GitBounds {
  const d = DEFAULT_GIT_BOUNDS;
  return {
    fetchBytes: Math.floor(positiveNumber(env, "PULUMI_FLEET_MAX_FETCH_MIB", d.fetchBytes / MiB) * MiB),
    timeoutMs: Math.floor(positiveNumber(env, "PULUMI_FLEET_GIT_TIMEOUT_SECONDS", d.timeoutMs / 1000) * 1000),
    lowSpeedBytes: Math.ceil(positiveNumber(env, "PULUMI_FLEET_GIT_LOW_SPEED_BYTES", d.lowSpeedBytes)),
    // Whole seconds: git and ssh take no fractions.
    lowSpeedSeconds: Math.ceil(positiveNumber(env, "PULUMI_FLEET_GIT_LOW_SPEED_SECONDS", d.lowSpeedSeconds)),
    concurrency: Math.floor(positiveNumber(env, "PULUMI_FLEET_GIT_CONCURRENCY", d.concurrency, 1000)) || 1,
    unusedStoreMs: Math.floor(positiveNumber(env, "PULUMI_FLEET_GIT_CACHE_DAYS", d.unusedStoreMs / DAY_MS) * DAY_MS),
  };
}
