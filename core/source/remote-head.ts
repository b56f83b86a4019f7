/**
 * The commit a GitRepo's branch or revision names on its remote now, without fetching anything: one
 * `git ls-remote` with the git source's environment and credentials (git-env.ts), in a process group
 * killed at its deadline (git-process.ts). The watcher polls this; `up` then fetches what changed.
 * A plain directory's "commit" is its content hash, as the git source computes it; a full commit id
 * names itself and costs nothing.
 */
import { FleetError } from "../base/errors";
import { GitRepoConfig } from "../config/git-repo";
import { directorySource, displayUrl, isPlainDirectory, redact, silence } from "./git";
import { GitSession, protocolsFor, watchedForSilence } from "./git-env";
import { gitBounds } from "./git-bounds";
import { runGit } from "./git-process";
import { helmOpVersion, isHelmOp } from "./helm-op";
import { chooseRef, FULL_SHA, parseLsRemote } from "./remote-refs";

export async function remoteHead(repo: GitRepoConfig, deadlineMs: number): Promise<string> {
  // A HelmOp's "commit" is the version it would deploy now, from the repository's index or the registry's tags.
  if (isHelmOp(repo)) return helmOpVersion(repo, undefined, deadlineMs);
  if (isPlainDirectory(repo.repo)) return directorySource(repo).commit;
  if (repo.revision && FULL_SHA.test(repo.revision)) return repo.revision;
  const secrets = [repo.auth?.token, repo.auth?.sshPrivateKey].filter((s): s is string => !!s);
  const fail = (reason: string): never => {
    throw new FleetError(redact(reason, secrets), { gitRepo: repo.name });
  };
  if (protocolsFor(repo.repo).length === 0) fail(`${displayUrl(repo.repo)} is not a URL the git source reads`);
  let bounds;
  try {
    bounds = gitBounds();
  } catch (err) {
    return fail((err as Error).message);
  }
  const session = new GitSession(repo, bounds);
  try {
    const env = session.env();
    // Run in the session's empty HOME: no repository around it whose configuration git would read.
    const out = await runGit(["ls-remote", "--", repo.repo], {
      cwd: env.HOME,
      env,
      deadlineMs,
      deadlineReason: `git ls-remote did not answer within ${deadlineMs / 1000} s: it was stopped`,
      idle: watchedForSilence(repo.repo) ? silence("ls-remote", bounds) : undefined,
    }).catch((err: Error) => fail(err.message));
    const choice = chooseRef(parseLsRemote(out), repo, displayUrl(repo.repo));
    if (choice.problem) fail(choice.problem);
    // An abbreviated commit the remote does not advertise never moves: the revision itself stands for it.
    return choice.commit ?? repo.revision!;
  } finally {
    session.dispose();
  }
}
