/**
 * The git source: resolves a GitRepo's branch or revision to a commit SHA and provides exactly that
 * commit's tree from a cache in the user's cache directory (never in the project).
 *
 * - One bare repository per URL is the object store; each commit's tree is extracted once into
 *   trees/<sha> (written to a temp dir, then renamed, so a tree is either complete or absent).
 * - Warm runs ask the remote for its refs (`ls-remote`) and fetch nothing when the commit is already
 *   here; a full 40-character revision already present needs no network at all.
 * - A fetch is shallow (the one commit) wherever the remote allows it, bounded in size and time, and
 *   the store is pruned afterwards to the commits whose trees are kept (git-cache.ts).
 * - git runs with no configuration or program of the runner's and only this GitRepo's credentials
 *   (git-env.ts); a commit's `.gitattributes` cannot change the bytes written (AS_COMMITTED).
 * - Every failure is a FleetError naming the GitRepo, redacted. It never turns into an empty tree.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { createHash } from "node:crypto";
import { FleetError } from "../base/errors";
import { sha256Hex } from "../base/hash";
import { contentLimits } from "../bundles/checkout";
import { defaultCacheRoot } from "../base/tool-build";
import { GitRepoConfig } from "../config/git-repo";
import { withLock } from "./lock";
import { Source } from "./types";
import { GitFailure, runGit } from "./git-process";
import { GitSession, protocolsFor, watchedForSilence } from "./git-env";
import { GitBounds, gitBounds } from "./git-bounds";
import { markUsed, packBytes, pinnedRef, pruneStore, pruneTrees, sweepUnusedStores } from "./git-cache";
import { stopSignal } from "../base/stop-signal";
import { chooseRef, FULL_SHA, parseLsRemote } from "./remote-refs";

export type { Source } from "./types";

/** Where a fetch puts what it brought, until the commit is pinned; pruning drops it. */
const INCOMING = "refs/fleet/incoming";

/**
 * The store's own attributes, which take precedence over a commit's `.gitattributes`: no filter,
 * end-of-line conversion, re-encoding or keyword expansion, so files are written exactly as committed
 * (as Fleet's go-git does), whatever drivers any configuration might define.
 */
const AS_COMMITTED = "* -text -eol -crlf -ident -filter -working-tree-encoding\n";

/** A git command in the store; rejects with GitFailure. */
type Git = (args: string[], extra?: { watch?: () => string | undefined; input?: string; env?: Record<string, string> }) => Promise<string>;
type Fail = (reason: string) => never;

const sweptRoots = new Set<string>();

export async function resolveSource(repo: GitRepoConfig, cacheRoot = defaultCacheRoot()): Promise<Source> {
  if (isPlainDirectory(repo.repo)) return directorySource(repo);
  const secrets = [repo.auth?.token, repo.auth?.sshPrivateKey].filter((s): s is string => !!s);
  const fail: Fail = (reason: string): never => {
    throw new FleetError(redact(reason, secrets), { gitRepo: repo.name });
  };
  const protocols = protocolsFor(repo.repo);
  if (protocols.length === 0)
    fail(`${displayUrl(repo.repo)} is not a URL the git source reads (https, http, ssh, user@host:path, git, file:// or a local path)`);
  if (protocols.includes("ssh") && !repo.auth?.sshPrivateKey) {
    fail(
      `${displayUrl(repo.repo)} is an ssh URL: it needs auth.sshPrivateKey and auth.knownHosts in the stack (the runner's ssh keys, agent and known_hosts are not used)`,
    );
  }
  let bounds: GitBounds;
  try {
    bounds = gitBounds();
  } catch (err) {
    return fail((err as Error).message);
  }
  const gitRoot = path.join(cacheRoot, "git");
  const dir = path.join(gitRoot, sha256Hex(repo.repo).slice(0, 24));
  const session = new GitSession(repo, bounds);
  const silenceWatched = watchedForSilence(repo.repo);
  try {
    const source = await withLock(path.join(dir, "lock"), async () => {
      markUsed(dir);
      const store = path.join(dir, "repo.git");
      const talksToRemote = (command: string) => silenceWatched && (command === "ls-remote" || command === "fetch");
      const git: Git = (args, extra = {}) =>
        runGit(args, {
          cwd: store,
          env: { ...session.env(), ...extra.env },
          watch: extra.watch,
          input: extra.input,
          idle: talksToRemote(args[0]) ? silence(args[0], bounds, () => packBytes(store)) : undefined,
          deadlineMs: bounds.timeoutMs,
          deadlineReason: `git ${args[0]} did not finish within ${bounds.timeoutMs / 1000} s (PULUMI_FLEET_GIT_TIMEOUT_SECONDS): it was stopped`,
        });
      if (!fs.existsSync(path.join(store, "HEAD"))) {
        fs.mkdirSync(store, { recursive: true });
        await must(git(["init", "--bare", "--quiet", "--template=", "."]), fail);
      }
      const warnings: string[] = [];
      const { commit, fetched } = await resolveCommit({ git, store }, repo, bounds, fail, warnings);
      if (!fs.existsSync(path.join(store, pinnedRef(commit)))) await must(git(["update-ref", pinnedRef(commit), commit]), fail);
      const { tree, kept } = await checkoutTree(git, store, dir, commit, fail);
      if (fetched)
        await must(
          pruneStore((args, input) => git(args, { input }), [...new Set([commit, ...kept])]),
          fail,
        );
      return { gitRepo: repo.name, commit, dir: tree, fetched, warnings: warnings.map((w) => redact(w, secrets)) };
    });
    if (!sweptRoots.has(gitRoot)) {
      sweptRoots.add(gitRoot);
      await sweepUnusedStores(gitRoot, bounds.unusedStoreMs);
    }
    return source;
  } catch (err) {
    if (stopSignal.aborted) throw stopSignal.reason; // not the GitRepo's failure: the operation stops
    if (err instanceof FleetError) throw err;
    return fail(err instanceof Error ? err.message : String(err));
  } finally {
    session.dispose();
  }
}

/** The idle bound of a git command talking to a remote with no low-speed limit of its own (git://, ssh). */
export function silence(command: string, bounds: GitBounds, progress?: () => number): { ms: number; reason: string; progress?: () => number } {
  const s = bounds.lowSpeedSeconds;
  return { ms: s * 1000, reason: `git ${command}: the remote sent nothing for ${s} s (PULUMI_FLEET_GIT_LOW_SPEED_SECONDS): it was stopped`, progress };
}

/** A git command whose failure is this GitRepo's failure. */
async function must<T>(run: Promise<T>, fail: Fail): Promise<T> {
  try {
    return await run;
  } catch (err) {
    if (err instanceof FleetError) throw err;
    return fail(err instanceof Error ? err.message : String(err));
  }
}

/** A local path that is a directory but not a git repository (the local stack's examples/). */
export function isPlainDirectory(repo: string): boolean {
  if (!path.isAbsolute(repo)) return false;
  if (!fs.existsSync(repo) || !fs.statSync(repo).isDirectory()) return false;
  const isRepo = fs.existsSync(path.join(repo, ".git")) || (fs.existsSync(path.join(repo, "HEAD")) && fs.existsSync(path.join(repo, "objects")));
  return !isRepo;
}

/**
 * A plain directory is read in place; its "commit" is a content hash, so an edit shows as a new
 * revision and an unchanged directory as the same one.
 */
export function directorySource(repo: GitRepoConfig): Source {
  if (repo.branch || repo.revision) {
    throw new FleetError(`${repo.repo} is a plain directory, not a git repository: branch and revision do not apply`, { gitRepo: repo.name });
  }
  const hash = createHash("sha256");
  const visit = (dir: string, rel: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const abs = path.join(dir, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) visit(abs, r);
      else if (e.isSymbolicLink()) hash.update(`L${r}\0${fs.readlinkSync(abs)}\0`);
      else if (e.isFile()) hash.update(`F${r}\0`).update(fs.readFileSync(abs)).update("\0");
    }
  };
  visit(repo.repo, "");
  return { gitRepo: repo.name, commit: `dir-${hash.digest("hex").slice(0, 36)}`, dir: repo.repo, fetched: false, warnings: [] };
}

async function resolveCommit(
  { git, store }: { git: Git; store: string },
  repo: GitRepoConfig,
  bounds: GitBounds,
  fail: Fail,
  warnings: string[],
): Promise<{ commit: string; fetched: boolean }> {
  const url = repo.repo;
  const revision = repo.revision;
  const fullSha = !!revision && FULL_SHA.test(revision);
  if (fullSha && (await hasCommit(git, revision))) return { commit: revision, fetched: false };
  const choice = chooseRef(parseLsRemote(await must(git(["ls-remote", "--", url]), fail)), repo, displayUrl(url));
  if (choice.problem) fail(choice.problem);
  let { ref, commit } = choice;
  if (commit && (await hasCommit(git, commit))) return { commit, fetched: false };
  const fetch = (args: string[]) => boundedFetch(git, store, args, bounds, fail);
  if (ref) {
    await must(fetch(["--depth=1", "--no-tags", "--", url, `+${ref}:${INCOMING}`]), fail);
    // The commit the ref names now (it may have moved since ls-remote).
    commit = (await must(git(["rev-parse", "--verify", `${INCOMING}^{commit}`]), fail)).trim();
  } else if (fullSha) {
    try {
      await fetch(["--depth=1", "--no-tags", "--", url, `+${revision}:${INCOMING}`]);
    } catch (err) {
      if (!(err instanceof GitFailure)) throw err;
      warnings.push(
        `commit ${revision} could not be fetched alone (${oneLine(err.reason)}): every branch and tag was fetched with its history to find it; a tag or branch naming it is fetched as one commit`,
      );
      await must(fetch(everything(store, url)), fail);
    }
    commit = revision;
  } else {
    // An abbreviated or unadvertised commit: fetch every branch and tag with history, then look it up.
    await must(fetch(everything(store, url)), fail);
    commit = (await git(["rev-parse", "--verify", "--quiet", `${revision}^{commit}`]).catch(() => "")).trim();
    if (!commit) fail(`revision ${JSON.stringify(revision)} not found in ${displayUrl(url)}`);
  }
  if (!(await hasCommit(git, commit!))) fail(`commit ${commit} was not received from ${displayUrl(url)}`);
  return { commit: commit!, fetched: true };
}

/** The fetch of every branch and tag with their history (a shallow store is deepened: the commit may be behind its boundary). */
function everything(store: string, url: string): string[] {
  const unshallow = fs.existsSync(path.join(store, "shallow")) ? ["--unshallow"] : [];
  return [...unshallow, "--tags", "--", url, "+refs/heads/*:refs/fleet/all/*"];
}

/**
 * A fetch that may add at most PULUMI_FLEET_MAX_FETCH_MIB to the store, watched while it runs and
 * checked after. One stopped (size or deadline) leaves the URL's store removed, never half-written:
 * the next run starts it again. Rejects with GitFailure when git itself failed.
 */
async function boundedFetch(git: Git, store: string, args: string[], bounds: GitBounds, fail: Fail): Promise<void> {
  const before = packBytes(store);
  const max = bounds.fetchBytes;
  const tooBig = () =>
    packBytes(store) - before > max
      ? `the fetch brought more than ${+(max / 1024 / 1024).toFixed(2)} MiB (PULUMI_FLEET_MAX_FETCH_MIB): it was stopped`
      : undefined;
  const stopped = (reason: string): never => {
    fs.rmSync(store, { recursive: true, force: true });
    return fail(`${reason}; this URL's cache was removed`);
  };
  try {
    await git(["fetch", "--quiet", ...args], { watch: tooBig });
  } catch (err) {
    if (err instanceof GitFailure && err.stopped) stopped(err.reason);
    throw err;
  }
  const over = tooBig();
  if (over) stopped(over);
}

async function hasCommit(git: Git, sha: string): Promise<boolean> {
  try {
    await git(["cat-file", "-e", `${sha}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/**
 * A push of a few compressed MB can hold files that expand to GB, or millions of empty files, on the
 * runner's disk: the commit's files are counted, with git's object sizes, before anything is written
 * (PULUMI_FLEET_MAX_TREE_MIB, default 2048 MiB; PULUMI_FLEET_MAX_ENTRIES, default 200,000; the operator's).
 */
async function checkTreeSize(git: Git, commit: string, fail: Fail): Promise<void> {
  const { treeBytes: max, entries: maxFiles } = contentLimits();
  let total = 0;
  let files = 0;
  let largest = { size: 0, file: "" };
  for (const line of (await must(git(["ls-tree", "-r", "-l", "-z", commit]), fail)).split("\0")) {
    const m = /^\S+ blob \S+ +(\d+)\t(.*)$/s.exec(line);
    if (!m) continue;
    const size = Number(m[1]);
    total += size;
    files++;
    if (size > largest.size) largest = { size, file: m[2] };
  }
  if (files > maxFiles) {
    fail(`commit ${commit.slice(0, 12)} has ${files} files, over the limit of ${maxFiles} (PULUMI_FLEET_MAX_ENTRIES): nothing was written`);
  }
  if (total > max) {
    fail(
      `commit ${commit.slice(0, 12)}'s files add up to ${Math.ceil(total / 1024 / 1024)} MiB, over the limit of ${max / 1024 / 1024} MiB per checkout (PULUMI_FLEET_MAX_TREE_MIB; the largest is ${JSON.stringify(largest.file)}, ${Math.ceil(largest.size / 1024 / 1024)} MiB): nothing was written`,
    );
  }
}

/** Extracts a commit's tree once, within the tree limits; the directory name is the commit, so it never changes afterwards. */
async function checkoutTree(git: Git, store: string, dir: string, commit: string, fail: Fail): Promise<{ tree: string; kept: string[] }> {
  const trees = path.join(dir, "trees");
  const tree = path.join(trees, commit);
  if (!fs.existsSync(tree)) {
    // Checked only before writing: a tree already extracted passed it (a no-op up spawns no ls-tree).
    await checkTreeSize(git, commit, fail);
    fs.mkdirSync(trees, { recursive: true });
    fs.mkdirSync(path.join(store, "info"), { recursive: true });
    fs.writeFileSync(path.join(store, "info", "attributes"), AS_COMMITTED);
    const tmp = fs.mkdtempSync(path.join(trees, ".tmp-"));
    const index = { GIT_INDEX_FILE: `${tmp}.index` };
    try {
      await must(git(["--work-tree", tmp, "read-tree", commit], { env: index }), fail);
      await must(git(["--work-tree", tmp, "checkout-index", "--all", "--force"], { env: index }), fail);
      fs.renameSync(tmp, tree);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
      fs.rmSync(index.GIT_INDEX_FILE, { force: true });
    }
  }
  const now = new Date();
  fs.utimesSync(tree, now, now);
  return { tree, kept: pruneTrees(trees) };
}

/** A URL fit for messages: no userinfo. */
export function displayUrl(url: string): string {
  return url.replace(/^([a-z+]+:\/\/)[^/@]*@/i, "$1");
}

export function redact(text: string, secrets: string[]): string {
  let out = text.replace(/([a-z+]+:\/\/)[^/@\s]*@/gi, "$1");
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join("***");
  return out.replace(/(Authorization: *\w+ +)\S+/gi, "$1***");
}

/** git's reason inside a sentence of ours. */
function oneLine(reason: string): string {
  return reason.replace(/\s+/g, " ").slice(0, 300);
}
