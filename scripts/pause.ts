/**
 * `npm run pause -- --stack S --cluster C --reason TEXT [--by WHO]` and `npm run resume -- --stack S
 * --cluster C`: sets or removes the cluster's `paused` in the stack file (docs/ci-and-scheduling.md,
 * "Pausing a cluster in an incident"), so every runner that reads the file leaves the cluster exactly as
 * it is from its next run on. In a sharded environment the definition is edited and the shard files
 * rewritten (a pause moves no cluster between shards). Commit the file as any other stack file edit.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import { stacksDir } from "../automation/engine/stack";
import { withClusterPause } from "../core/config/cluster-pause-edit";
import { readShardLayout, shardFileText, stackFilePath } from "../core/config/shard-files";
import { stackFileFor } from "../core/config/stack";
import { parseCommand, required, runMain, UsageError } from "./cli";
import { formatShardPlan, planShards, withShardStates } from "../automation/shards/moves";

const SPEC = {
  usage: "npm run pause -- --stack NAME --cluster C --reason TEXT [--by WHO]  |  npm run resume -- --stack NAME --cluster C",
  summary: "Pauses a cluster (every runner leaves everything on it exactly as it is) or resumes it, in the stack file.",
  positionals: ["OPERATION"],
  options: {
    stack: { type: "string" as const, value: "NAME", help: "the environment: stacks/Pulumi.NAME.yaml (required)" },
    cluster: { type: "string" as const, value: "C", help: "the cluster (required)" },
    reason: { type: "string" as const, value: "TEXT", help: "pause: why (required; every preview and report says it)" },
    by: { type: "string" as const, value: "WHO", help: "pause: who (default: this machine's user name)" },
  },
};

async function main(): Promise<void> {
  const { values: v, positionals } = parseCommand(process.argv.slice(2), SPEC);
  const op = positionals[0];
  if (op !== "pause" && op !== "resume") throw new UsageError(`pause or resume, not ${JSON.stringify(op ?? "")}`);
  const stack = required(v.stack, "stack");
  const cluster = required(v.cluster, "cluster");
  if (op === "resume" && (v.reason || v.by)) throw new UsageError("--reason and --by are for pause");
  const pause =
    op === "pause"
      ? { reason: required(v.reason, "reason", "say why the cluster is paused"), by: v.by || os.userInfo().username, since: new Date().toISOString() }
      : undefined;
  const dir = stacksDir();
  const file = stackFilePath(dir, stack);
  if (!fs.existsSync(file)) throw new UsageError(`stack ${stack}: ${file} not found`);
  // Refuses a generated shard file (its definition is the one to edit) and reads the environment's shards.
  const layout = readShardLayout(dir, stack);
  // The shard files are rewritten below: not while a pending edit of the definition moves clusters between
  // shards or removes one (a new shard count), which would then take effect without its state moves.
  // A cluster new to the files may still be deployed by a shard's state (removed, never upped, re-added): that is a move too.
  const pending =
    layout &&
    (await withShardStates(planShards(dir, stack), dir, {}, true).catch((err: Error) => {
      throw new UsageError(
        `stack ${stack}: the shards' states could not be read to check the pending edit of the definition (${err.message}); nothing was changed`,
      );
    }));
  if (pending && (pending.moves.some((m) => m.from) || pending.removed.length || pending.inSeveral.length))
    throw new UsageError(
      `${formatShardPlan(pending)}\nstack ${stack}: the definition has an edit not applied yet that moves clusters between shards: ` +
        `apply it first (\`npm run shards -- --stack ${stack} --apply\`), or set that edit aside (git stash) and pause again`,
    );
  fs.writeFileSync(file, withClusterPause(fs.readFileSync(file, "utf8"), stackFileFor(stack), cluster, pause));
  console.log(
    `${op === "pause" ? "paused" : "resumed"} cluster ${cluster} in ${stackFileFor(stack)}${pause ? ` (${pause.reason}; by ${pause.by} since ${pause.since})` : ""}`,
  );
  for (const s of layout?.shards ?? []) {
    fs.writeFileSync(stackFilePath(dir, s.stack), shardFileText(dir, stack, s.name));
    console.log(`rewrote ${stackFileFor(s.stack)}`);
  }
  console.log("it takes effect at the next preview, up or watcher cycle that reads this file: commit it where your runners read the stack files");
}

runMain(SPEC, main);
