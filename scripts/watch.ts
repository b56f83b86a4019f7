/**
 * `npm run watch -- --stack NAME`: deploys commits as they land. Polls each GitRepo's remote at its
 * pollingInterval (Fleet's 15 s by default) and runs `up` when a commit or the stack file changed
 * (automation/watch/); a sharded environment runs one watcher per shard stack. Meant to run as a service (docs/continuous-delivery.md); SIGTERM or SIGINT
 * stops it: at once when idle, and during an `up` the way `npm run up` stops; it then exits 0.
 */
import * as fs from "node:fs";
import { guarded } from "../automation/engine/process-guard";
import { stackFileOf } from "../automation/engine/stack";
import { watchLoop } from "../automation/watch/loop";
import { liveWatchDeps } from "../automation/watch/live";
import { stopOnSignals } from "../core/base/stop-signal";
import { retrySelector } from "../core/plan/stalled";
import { retryStalled } from "../automation/operation/stalled";
import { parseCommand, required, runMain, UsageError } from "./cli";
import { shardLayoutOf } from "./fleet-shards";

const SPEC = {
  usage: "npm run watch -- --stack NAME [--quiet] [--retry | --retry-pair CLUSTER/GITREPO/BUNDLE]",
  summary: "Polls each GitRepo of the stack at its pollingInterval and runs `up` when a commit or the stack file changed; runs until SIGTERM or SIGINT.",
  options: {
    stack: { type: "string" as const, value: "NAME", help: "the environment: stacks/Pulumi.NAME.yaml (required)" },
    quiet: { type: "boolean" as const, help: "do not stream the engine's output (deploy events and failures are still printed)" },
    retry: { type: "boolean" as const, help: "apply every Stalled bundle deployment again in the first up (each gets stalledAfter fresh tries)" },
    "retry-pair": {
      type: "string" as const,
      multiple: true as const,
      value: "CLUSTER/GITREPO/BUNDLE",
      help: "apply this Stalled bundle deployment again (repeatable)",
    },
  },
};

let stack: string | undefined;

async function main(): Promise<void> {
  const { values } = parseCommand(process.argv.slice(2), SPEC);
  stack = required(values.stack, "stack", "name the environment to watch");
  if (!fs.existsSync(stackFileOf({ stack }))) throw new UsageError(`stack ${stack}: ${stackFileOf({ stack })} not found`);
  const layout = shardLayoutOf(stack);
  if (layout)
    throw new UsageError(
      `stack ${stack} is split into shards: run one watcher per shard stack (${layout.shards.map((s) => `npm run watch -- --stack ${s.stack}`).join("; ")}), ` +
        "as Fleet runs one controller per shard",
    );
  const log = (line: string) => console.log(`${new Date().toISOString()} watch ${stack}: ${line}`);
  let idle = true;
  stopOnSignals({
    wrapSpawn: guarded,
    log: (m) => log(idle ? m.replace(/: stopping the operation.*$/, ": stopping (no update running)") : m),
  });
  const deps = liveWatchDeps({ stack, quiet: values.quiet, log });
  const up = deps.up;
  deps.up = async (reason) => {
    idle = false;
    try {
      return await up(reason);
    } finally {
      idle = true;
    }
  };
  // Cleared before the first up, which then applies them: the loop itself never retries a Stalled pair.
  const retry = retrySelector(values.retry, values["retry-pair"]);
  if (retry) await retryStalled({ stack, deploy: { retry } });
  log("watching");
  await watchLoop(deps);
  log("stopped");
  // An orderly stop on a signal is the service's normal end (the signal handler set 130/143).
  process.exit(0);
}

runMain(SPEC, main, () => ({ op: "watch", stack }));
