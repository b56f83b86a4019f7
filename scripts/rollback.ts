/**
 * `npm run rollback -- --stack S [--to RUN] [--yes]`, `npm run rollback -- --stack S --unpin` and
 * `npm run redeploy -- --stack S`: rollback and redeploy as runs of their own (automation/runs/rollback.ts;
 * docs/cli.md "Rollback and redeploy"). A rollback prints its preview as `npm run preview` does and asks
 * before it deploys (unless --yes or CI=true), as Pulumi's `up` asks.
 */
import * as os from "node:os";
import * as readline from "node:readline/promises";
import { guarded } from "../automation/engine/process-guard";
import { stopOnSignals } from "../core/base/stop-signal";
import { FailureContext } from "../automation/reports/error-report";
import { OperationFlags, runOperation } from "../automation/run-operation";
import { redeploy, rollback, RunSteps, unpin } from "../automation/runs/rollback";
import { pinText, runLines, runsStore } from "../automation/runs/runs";
import { resolveBackend } from "../automation/engine/backend";
import { PROJECT_NAME } from "../automation/engine/stack";
import type { OperationOptions } from "../automation/operation/results";
import { parseCommand, required, runMain, UsageError } from "./cli";
import { shardLayoutOf } from "./fleet-shards";

const SPEC = {
  usage:
    "npm run rollback -- --stack NAME [--to RUN] [--yes] [--by WHO]  |  npm run rollback -- --stack NAME --unpin|--list  |  npm run redeploy -- --stack NAME",
  summary:
    "Rollback: re-applies an earlier successful run's commits and settings as a new run (preview first) and pins it, which holds the watcher. Redeploy: re-applies what is deployed, every pair refreshed first.",
  positionals: ["OPERATION"],
  options: {
    stack: { type: "string" as const, value: "NAME", help: "the environment: stacks/Pulumi.NAME.yaml (required)" },
    to: {
      type: "string" as const,
      value: "RUN",
      help: "rollback: the run to go back to (its id or the id's unique beginning; default: the newest successful run of other commits or settings than the latest)",
    },
    yes: { type: "boolean" as const, help: "rollback: deploy after the preview without asking (CI=true does too)" },
    by: { type: "string" as const, value: "WHO", help: "rollback: who rolls back, as the pin says (default: this machine's user name)" },
    unpin: { type: "boolean" as const, help: "rollback: remove the pin (the watcher deploys the current commits again); deploys nothing" },
    list: { type: "boolean" as const, help: "rollback: list the recorded runs, newest first, and the pin; deploys nothing" },
    "events-json": { type: "string" as const, value: "FILE", help: "also write the deploy events as JSON lines to FILE" },
    quiet: { type: "boolean" as const, help: "show no progress (warnings, the summary and errors are still printed)" },
    verbose: { type: "boolean" as const, help: "also stream the engine's own output" },
  },
};

const running: FailureContext = {};

async function main(): Promise<void> {
  const { values: v, positionals } = parseCommand(process.argv.slice(2), SPEC);
  const op = positionals[0];
  if (op !== "rollback" && op !== "redeploy") throw new UsageError(`rollback or redeploy, not ${JSON.stringify(op ?? "")}`);
  const stack = required(v.stack, "stack");
  Object.assign(running, { op, stack });
  if (op === "redeploy" && (v.to || v.yes || v.by || v.unpin || v.list)) throw new UsageError("--to, --yes, --by, --unpin and --list are for rollback");
  if (v.unpin && v.list) throw new UsageError("--unpin or --list, not both");
  // The pin's words go into the PR summary, chat and the CI log: a name, not markup.
  if (v.by !== undefined && !/^[\w.@ -]{1,64}$/.test(v.by))
    throw new UsageError(`--by must be a name of at most 64 letters, digits, spaces and . _ @ - (got ${JSON.stringify(v.by.slice(0, 80))})`);
  if ((v.unpin || v.list) && (v.to || v.yes || v.by)) throw new UsageError(`--${v.unpin ? "unpin" : "list"} deploys nothing: it takes no --to, --yes or --by`);
  if (shardLayoutOf(stack))
    throw new UsageError(`stacks/Pulumi.${stack}.yaml is a sharded environment: roll back or redeploy each shard's stack (--stack <its stack>)`);
  const options: OperationOptions = { stack };
  if (v.list) {
    for (const line of runLines(await runsStore(resolveBackend(), PROJECT_NAME, stack).read(), stack)) console.log(line);
    return;
  }
  if (v.unpin) {
    const removed = await unpin(options);
    console.log(
      removed
        ? `unpinned stack ${stack} (it was ${pinText(removed)}): the watcher deploys the current commits at its next look`
        : `stack ${stack} is not pinned`,
    );
    return;
  }
  stopOnSignals({ wrapSpawn: guarded });
  const flags: OperationFlags = { quiet: v.quiet, engineOutput: v.verbose, eventsJson: v["events-json"] };
  const step =
    (which: "preview" | "up") =>
    (o: OperationOptions): Promise<void> =>
      runOperation({ op: which, stack, flags, deploy: o.deploy, ...(o.config ? { config: o.config } : {}), ...(o.run ? { run: o.run } : {}) }, running);
  const steps: RunSteps = { preview: step("preview"), up: step("up") };
  const say = (line: string) => console.error(line);
  if (op === "redeploy") {
    const run = await redeploy(options, say, steps);
    console.log(`redeploy run ${run.id} of stack ${stack} recorded`);
    return;
  }
  const yes = v.yes === true || process.env.CI === "true";
  // Said before the preview runs, not after it.
  if (!yes && !process.stdin.isTTY) throw new UsageError("there is no terminal to ask: pass --yes to roll back after the preview without asking");
  const end = await rollback(options, { to: v.to, who: v.by || os.userInfo().username, confirm: () => confirmed(yes), say }, steps);
  if (!end.done) throw new Error(`confirmation declined: stack ${stack} was not rolled back, nothing was pinned`);
  console.log(
    `rollback run ${end.run.id} of stack ${stack} re-applied run ${end.target.id} and pinned it: the watcher holds until \`npm run rollback -- --stack ${stack} --unpin\`, and a plain \`npm run up\` re-applies it until a GitRepo moves on (the next commit wins)`,
  );
}

/** Pulumi's question before an update: --yes or CI=true answer it; elsewhere the terminal does. */
async function confirmed(yes: boolean): Promise<boolean> {
  if (yes) return true;
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await rl.question("Do you want to perform this rollback? (yes/no) ");
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

runMain(SPEC, main, () => running);
