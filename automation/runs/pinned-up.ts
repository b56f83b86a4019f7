/**
 * A plain `up` (no run kind of its own: `npm run up`, CI, a schedule) on a stack a rollback pinned. The
 * next commit wins: once a GitRepo's head moved on from what the rollback replaced, the up deploys the
 * current commits and ends the pin (record.ts). Until then it re-applies the pinned run (kind
 * "rollback", the pin kept), so a scheduled `up` does not quietly redeploy the release just rolled back.
 * Facts (the pin, each GitRepo's head by `git ls-remote`, as the watcher polls) are read only when pinned.
 */
import { DEFAULT_POLLING_INTERVAL_MS } from "../../core/config/polling";
import { FleetError } from "../../core/base/errors";
import { remoteHead } from "../../core/source/remote-head";
import { resolveBackend } from "../engine/backend";
import { PROJECT_NAME } from "../engine/stack";
import type { OperationOptions } from "../operation/results";
import { newCommits, newRunId, pinText, RunPin, runsStore } from "./runs";
import { currentConfig, reapplied } from "./reapply";

/** How long one GitRepo's `git ls-remote` may take here: no answer is no news (the pin holds). */
const HEAD_TIMEOUT_MS = 4 * DEFAULT_POLLING_INTERVAL_MS;

/** The options the up runs with: the caller's, or the pinned run's while no new commit landed. */
export async function upWhilePinned(options: OperationOptions, warn: (message: string) => void): Promise<OperationOptions> {
  if (options.run) return options; // a rollback or redeploy decided its own
  let pin: RunPin | undefined;
  try {
    pin = (await runsStore(resolveBackend(options), PROJECT_NAME, options.stack).read())?.pin;
  } catch (err) {
    // Not knowing is not "no pin": deploying the current commits would redeploy a release just rolled back, and end its pin.
    throw new FleetError(
      `stack ${options.stack}: its runs could not be read (${(err as Error).message}): whether a rollback is pinned is unknown, so nothing was deployed; run the up again once they can be read`,
    );
  }
  if (!pin) return options;
  const config = await currentConfig(options);
  const heads = Object.fromEntries(
    await Promise.all(
      config.gitRepos
        // A HelmOp that is not polled moves only with an edit of the stack, never by its repository's news.
        .filter((r) => !r.paused && (!r.helmOp || r.helmOp.polled))
        .map(async (r) => {
          const head = await remoteHead(r, HEAD_TIMEOUT_MS).catch((err: Error) => {
            warn(`warning: stack ${options.stack}: gitRepo ${r.name}: its head could not be read (${err.message}): no news from it`);
            return undefined;
          });
          return [r.name, head] as const;
        }),
    ),
  );
  const news = newCommits(pin, heads);
  if (news.length) {
    warn(`stack ${options.stack}: ${pinText(pin)}; gitRepo(s) ${news.join(", ")} moved on since: the next commit wins, this up deploys the current commits`);
    return options;
  }
  warn(
    `held: stack ${options.stack} is ${pinText(pin)} and no commit landed since: this up re-applies that run (\`npm run rollback -- --stack ${options.stack} --unpin\` to deploy the current commits)`,
  );
  return reapplied({ ...options, config }, pin.run, { id: newRunId(new Date()), kind: "rollback", of: pin.run.id }, warn);
}

/** A preview's notice on a pinned stack (it shows the current commits; an `up` now would re-apply the pinned run until one moves on). */
export async function pinNotice(options: OperationOptions): Promise<string | undefined> {
  if (options.run) return undefined; // a rollback's own preview
  const pin = await runsStore(resolveBackend(options), PROJECT_NAME, options.stack)
    .read()
    .then((r) => r?.pin)
    .catch(() => undefined);
  return pin
    ? `${pinText(pin)}: this preview shows the current commits, but an up re-applies that run until a GitRepo moves on from what it replaced (\`npm run rollback -- --stack ${options.stack} --unpin\` to deploy the current commits)`
    : undefined;
}
