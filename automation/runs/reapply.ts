/**
 * A recorded run made into an operation's options (rollback.ts, pinned-up.ts): its settings with today's
 * credentials and pauses (settings.ts), each GitRepo at its recorded commit, for this run only: neither
 * the stack file nor git history is touched.
 */
import { StackConfig } from "../../core/config/stack";
import { configFromValues } from "../../core/plan/pipeline";
import { openStack } from "../engine/stack";
import type { OperationOptions } from "../operation/results";
import { pinnedCommits, RunRecord, RunRef, unpinnable } from "./runs";
import { withCurrentCredentials } from "./settings";

/** The operation's options that re-apply a recorded run: its settings with today's credentials and pauses, each GitRepo at its commit. */
export async function reapplied(options: OperationOptions, target: RunRecord, run: RunRef, say: (line: string) => void): Promise<OperationOptions> {
  const dirs = unpinnable(target);
  if (dirs.length)
    say(
      `warning: gitRepo(s) ${dirs.join(", ")} of run ${target.id} are plain directories, not git repositories: there is no commit to go back to, they deploy as they are now`,
    );
  const current = await currentConfig(options);
  // A shard's run from before clusters moved to other shards: re-applied, those clusters would be deployed by two stacks.
  const elsewhere = new Set(current.shard?.elsewhere ?? []);
  const moved = target.settings.clusters.map((c) => c.name).filter((c) => elsewhere.has(c));
  if (moved.length)
    throw new Error(
      `run ${target.id} deployed cluster(s) ${moved.join(", ")}, which are now in other shards of environment ${current.shard!.environment}: ` +
        "re-applying it here would deploy them from two stacks. Choose a run from after the move (`--list`), or roll back the shard that holds them now",
    );
  const config = withCurrentCredentials(target.settings, current, target.id);
  // Not the inputs a plain up fingerprinted (automation/shards/inputs.ts): recorded, they would let a later up
  // with those inputs be left out while the state holds the pinned run's commits (after an --unpin, say).
  const { inputs: _fingerprinted, ...deploy } = options.deploy ?? {};
  return { ...options, config, deploy: { ...deploy, commits: pinnedCommits(target) }, run };
}

/** The stack's settings now: the caller's, else the stack file's through the engine (its secrets decrypted). */
export async function currentConfig(options: OperationOptions): Promise<StackConfig> {
  if (options.config) return options.config;
  const stack = await openStack({ ...options, deploy: undefined });
  const all = await stack.getAllConfig();
  return configFromValues((key) => all[key]?.value, options.stack);
}

export function commitsText(run: RunRecord): string {
  const list = Object.entries(run.commits).sort(([a], [b]) => (a < b ? -1 : 1));
  return list.length ? list.map(([name, c]) => `gitRepo ${name} at ${/^[0-9a-f]{40}$/.test(c) ? c.slice(0, 12) : c}`).join(", ") : "no GitRepo";
}
