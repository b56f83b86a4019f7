/**
 * Which advertised ref a GitRepo's branch or revision names, from `git ls-remote` output: the one rule
 * the git source (git.ts, before it fetches) and the watcher's poll (remote-head.ts, which never fetches)
 * share, so both see the same commit for the same remote.
 */

/** Fleet's cloner follows `master` when a GitRepo names neither branch nor revision. */
export const DEFAULT_BRANCH = "master";

/** A full commit id: needs no remote to resolve. */
export const FULL_SHA = /^[0-9a-f]{40}$/;

export interface RefChoice {
  /** The ref that names the commit (a tag's, not its peeled form). */
  ref?: string;
  /** The commit the ref names now; undefined for a revision that is an abbreviated or unadvertised commit. */
  commit?: string;
  /** Why the remote cannot give this GitRepo a commit (its branch or revision is not there). */
  problem?: string;
}

export function parseLsRemote(out: string): Map<string, string> {
  const refs = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [sha, ref] = line.trim().split(/\s+/);
    if (sha && ref) refs.set(ref, sha);
  }
  return refs;
}

/**
 * A revision is a tag (its peeled commit first), a branch, or a commit id; no revision means the branch.
 * `shownUrl` is the remote as messages may name it (no credentials).
 */
export function chooseRef(refs: Map<string, string>, repo: { branch?: string; revision?: string }, shownUrl: string): RefChoice {
  const revision = repo.revision;
  if (revision) {
    for (const candidate of [`refs/tags/${revision}^{}`, `refs/tags/${revision}`, `refs/heads/${revision}`]) {
      if (refs.has(candidate)) return { ref: candidate.replace(/\^\{\}$/, ""), commit: refs.get(candidate) };
    }
    if (!/^[0-9a-f]{7,40}$/.test(revision)) return { problem: `revision ${JSON.stringify(revision)} is not a tag, branch or commit of ${shownUrl}` };
    return {};
  }
  const branch = repo.branch ?? DEFAULT_BRANCH;
  const ref = `refs/heads/${branch}`;
  const commit = refs.get(ref);
  return commit ? { ref, commit } : { problem: `branch ${JSON.stringify(branch)} not found in ${shownUrl}` };
}
