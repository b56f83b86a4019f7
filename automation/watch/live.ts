/**
 * The watcher's real dependencies (loop.ts WatchDeps): the clock, the stack file, the stack's
 * configuration read through the engine (GitRepo credentials are secrets), `git ls-remote` per GitRepo
 * (core/source/remote-head.ts), and `up` in this process (automation/operations.ts), which waits for the
 * stack's lock instead of failing; a shard's stack decides its inputs first, as a sharded run does, and
 * is left out when they are unchanged. A signal (core/base/stop-signal.ts) ends a sleep at once and stops an
 * `up` the way `npm run up` stops.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { onlyStalled } from "../../core/plan/stalled";
import * as path from "node:path";
import * as YAML from "yaml";
import { stableJson } from "../../core/base/hash";
import { configFromValues } from "../../core/plan/pipeline";
import { remoteHead } from "../../core/source/remote-head";
import { gitBounds } from "../../core/source/git-bounds";
import { stopSignal } from "../../core/base/stop-signal";
import { resolveBackend } from "../engine/backend";
import { formatDeployEvent } from "../reports/deploy-events";
import { reportFailure } from "../reports/error-report";
import { StackLockedError } from "../engine/locks";
import * as ops from "../operations";
import { openStack, PROJECT_NAME, stackFileOf, stacksDir } from "../engine/stack";
import { runsStore } from "../runs/runs";
import { leftOutMetrics } from "../shards/left-out";
import { decideShards } from "../shards/inputs";
import { shardOfFile } from "../../core/config/shard-files";
import { UpOutcome, WatchDeps } from "./loop";

/**
 * A poll that takes longer than this (or the operator's git timeout, if shorter) is stopped and counts as
 * failed; a silent remote is given up sooner, at the git low-speed time (core/source/git-bounds.ts).
 */
export const POLL_TIMEOUT_MS = 60_000;

export interface WatchSettings {
  stack: string;
  /** Do not stream the engine's output (deploy events and failures are still printed). */
  quiet?: boolean;
  log: (line: string) => void;
}

export function liveWatchDeps(settings: WatchSettings): WatchDeps {
  const { stack, log } = settings;
  const file = stackFileOf({ stack });
  const pollTimeout = Math.min(POLL_TIMEOUT_MS, gitBounds().timeoutMs);
  return {
    now: () => Date.now(),
    stopped: () => stopSignal.aborted,
    sleepUntil: (at, wake) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          stopSignal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, at - Date.now()));
        if (stopSignal.aborted) done();
        else stopSignal.addEventListener("abort", done);
        void wake.then(done);
      }),
    stackHash: () => configHash(file),
    readConfig: async () => {
      const s = await openStack({ stack });
      const all = await s.getAllConfig();
      return configFromValues((key) => all[key]?.value, stack);
    },
    poll: (repo) => remoteHead(repo, pollTimeout),
    // A rollback's pin, kept where the state is (automation/runs/runs.ts): the watcher holds while it is there.
    pin: async () => {
      const pin = (await runsStore(resolveBackend(), PROJECT_NAME, stack).read())?.pin;
      return pin && { stack, run: pin.run.id, who: pin.who, at: pin.at };
    },
    up: async (): Promise<UpOutcome> => {
      try {
        // A shard's stack records its inputs and deploys the commits they were computed from, as in a sharded run (shards/inputs.ts).
        const shard = shardOfFile(stacksDir(), stack);
        const decided = shard ? (await decideShards(stacksDir(), [{ shard: shard.name, stack }], true))[0] : undefined;
        if (decided?.skip) {
          log(`up of stack ${stack} left out: ${decided.skip}`);
          await leftOutMetrics(stacksDir(), "up", stack, log);
          return { ok: true, resolved: decided.commits };
        }
        const r = await ops.up({
          stack,
          waitLock: true,
          onWarning: log,
          onOutput: settings.quiet ? undefined : (text) => process.stdout.write(text),
          deploy: {
            ...(decided ? { inputs: decided.fingerprint, commits: decided.commits } : {}),
          },
        });
        for (const e of r.events) log(formatDeployEvent(e));
        log(`up of stack ${stack} succeeded in ${(r.durationMs / 1000).toFixed(1)} s: ${JSON.stringify(r.changes)}`);
        return { ok: true, resolved: r.commits ?? {} };
      } catch (err) {
        if (stopSignal.aborted) return { ok: false };
        if (err instanceof StackLockedError) {
          log(`warning: ${err.message}`);
          return { locked: true };
        }
        if (err instanceof ops.OperationError) for (const e of err.events) log(formatDeployEvent(e));
        log(reportFailure(err, { op: "up", stack }, path.join(resolveBackend().localDir, "logs")));
        // Only Stalled pairs failed: trying the same inputs again cannot heal them (core/plan/stalled.ts); new inputs or --retry do.
        if (err instanceof ops.BundlesFailedError && onlyStalled(err.failures)) {
          log("every failed bundle deployment is Stalled: not tried again until its inputs change (or `npm run watch -- --retry`)");
          return { ok: true, resolved: {} };
        }
        return { ok: false };
      }
    },
    log,
  };
}

/**
 * The hash of the stack file's `config:` as data: the engine writes the file itself (a new stack's
 * `encryptionsalt`), which is no edit of the configuration. A file that is not YAML hashes as text
 * (reading its configuration then fails, and says why).
 */
export function configHash(file: string): string {
  if (!fs.existsSync(file)) return "absent";
  const text = fs.readFileSync(file, "utf8");
  let data: string;
  try {
    data = stableJson(YAML.parse(text)?.config ?? null);
  } catch {
    data = text;
  }
  return createHash("sha256").update(data).digest("hex");
}
