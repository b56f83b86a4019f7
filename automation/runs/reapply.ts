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
  // A shard's run from before clusters moved between shards: re-applied, a cluster moved away would be deployed by two
  // stacks, and one moved in (its state is here since the move) would have everything of it deleted.
  const elsewhere = new Set(current.shard?.elsewhere ?? []);
  const thenElsewhere = new Set(target.settings.shard?.elsewhere ?? []);
  const movedAway = target.settings.clusters.map((c) => c.name).filter((c) => elsewhere.has(c));
  const movedIn = current.clusters.map((c) => c.name).filter((c) => thenElsewhere.has(c));
  if (movedAway.length || movedIn.length)
    throw new Error(
      `run ${target.id} of shard stack ${options.stack} is from before cluster(s) ${[...movedAway, ...movedIn].join(", ")} moved between shards: ` +
        "re-applying it would deploy a cluster from two stacks, or delete one this shard deploys now. " +
        "Roll back to a run from after the move (`npm run rollback -- --list`), or end a pinned rollback (`npm run rollback -- --unpin`)",
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
