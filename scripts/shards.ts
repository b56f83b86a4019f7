/**
 * `npm run shards -- --stack ENV [--apply | --matrix | --operator-stacks ...]`: the shards of a sharded
 * environment (core/config/shards.ts). Without an action it shows, before anything happens, each
 * shard's clusters and which clusters would move; --apply moves them (automation/shards/moves.ts) and
 * regenerates the shard files; --matrix and --operator-stacks hand the shards to an existing runner.
 */
import { applyShards, assertShardsCurrent, formatShardPlan, planShards, withShardStates } from "../automation/shards/moves";
import { operatorStacks, OPERATOR_DEFAULTS } from "../automation/shards/operator-stacks";
import { stacksDir } from "../automation/engine/stack";
import { parseCommand, required, runMain, UsageError } from "./cli";

const SPEC = {
  usage: "npm run shards -- --stack ENV [--apply | --matrix | --operator-stacks --repo URL]",
  summary: "Shows a sharded environment's shards and the clusters that would move; --apply moves their state and regenerates the shard stack files.",
  options: {
    stack: { type: "string" as const, value: "ENV", help: "the environment: stacks/Pulumi.ENV.yaml, with a shards: rule (required)" },
    apply: { type: "boolean" as const, help: "move each moving cluster's state (pulumi state move), then write stacks/Pulumi.ENV.<shard>.yaml" },
    matrix: { type: "boolean" as const, help: "print the shard stacks as a GitHub Actions strategy.matrix (JSON)" },
    "operator-stacks": { type: "boolean" as const, help: "print one Pulumi Kubernetes Operator Stack resource per shard (YAML)" },
    repo: { type: "string" as const, value: "URL", help: "--operator-stacks: the git repository of this project" },
    branch: { type: "string" as const, value: "BRANCH", help: `--operator-stacks: its branch (default ${OPERATOR_DEFAULTS.branch})` },
    namespace: {
      type: "string" as const,
      value: "NS",
      help: `--operator-stacks: the namespace of the Stack resources (default ${OPERATOR_DEFAULTS.namespace})`,
    },
    "backend-secret": {
      type: "string" as const,
      value: "NAME",
      help: `--operator-stacks: the Secret holding PULUMI_BACKEND_URL and PULUMI_CONFIG_PASSPHRASE (default ${OPERATOR_DEFAULTS.secret})`,
    },
  },
};

async function main(): Promise<void> {
  const { values: v } = parseCommand(process.argv.slice(2), SPEC);
  const environment = required(v.stack, "stack");
  const actions = [v.apply, v.matrix, v["operator-stacks"]].filter(Boolean).length;
  if (actions > 1) throw new UsageError("--apply, --matrix and --operator-stacks are separate actions: give one");
  if (!v["operator-stacks"] && (v.repo || v.branch || v.namespace || v["backend-secret"]))
    throw new UsageError("--repo, --branch, --namespace and --backend-secret apply to --operator-stacks only");
  const dir = stacksDir();
  const plan = planShards(dir, environment);
  // A runner must never be handed shards whose files disagree with the definition.
  if (v.matrix || v["operator-stacks"]) assertShardsCurrent(dir, plan.layout);
  if (v.matrix) {
    process.stdout.write(JSON.stringify({ include: plan.layout.shards.map((s) => ({ shard: s.name, stack: s.stack })) }) + "\n");
    return;
  }
  if (v["operator-stacks"]) {
    const repo = required(v.repo, "repo", "the git repository the operator checks this project out of");
    process.stdout.write(
      operatorStacks(
        plan.layout.shards.map((s) => s.stack),
        { repo, branch: v.branch, namespace: v.namespace, secret: v["backend-secret"] },
      ),
    );
    return;
  }
  // What the shards' states deploy (beyond what their files name); a state that cannot be read is said, the plan shown all
  // the same, and --apply (which must not go without it) reads it again and stops there.
  let read = true;
  const shown = await withShardStates(plan, dir).catch((err: Error) => {
    console.log(`(a shard's state could not be read, so the plan shows what the shard files name only: ${err.message})`);
    read = false;
    return plan;
  });
  console.log(formatShardPlan(shown, true));
  if (v.apply) await applyShards({ environment, stackConfigDir: dir }, read ? shown : undefined);
}

runMain(SPEC, main);
