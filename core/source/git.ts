/**
 * The git source: resolves a GitRepo's branch or revision to a commit SHA and provides exactly that
 * commit's tree from a cache in the user's cache directory (never in the project).
 *
 * - One bare repository per URL is the object store; each commit's tree is extracted once into
 *   trees/<sha> (written to a temp dir, then renamed, so a tree is either complete or absent).
 * - Warm runs ask the remote for its refs (`ls-remote`) and fetch nothing when the commit is already
 *   here; a full 40-character revision already present needs no network at all.
 * - Credentials never enter a URL: SSH keys go to a 0600 temp file removed afterwards, tokens go in
 *   an HTTP header passed through git's environment; every message is redacted before it is shown.
 * - Every failure is a FleetError naming the GitRepo. It never turns into an empty tree.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createHash } from "node:crypto";
import { simpleGit, SimpleGit } from "simple-git";
import { FleetError } from "../errors";
import { sha256Hex } from "../hash";
import { contentLimits } from "../bundles/checkout";
import { defaultCacheRoot } from "../tool-build";
import { GitRepoConfig } from "../config/stack";
import { withLock } from "./lock";
import { stopSignal } from "../stop-signal";

export interface Source {
  gitRepo: string;
  commit: string;
  /** The checked-out tree of that commit (read-only by convention). */
  dir: string;
  /** Whether this resolution had to fetch objects from the remote. */
  fetched: boolean;
}

/** Fleet's cloner follows `master` when a GitRepo names neither branch nor revision. */
export const DEFAULT_BRANCH = "master";
const KEEP_TREES = 8;

export async function resolveSource(repo: GitRepoConfig, cacheRoot = defaultCacheRoot()): Promise<Source> {
  if (isPlainDirectory(repo.repo)) return directorySource(repo);
  const secrets = [repo.auth?.token, repo.auth?.sshPrivateKey].filter((s): s is string => !!s);
  const fail = (reason: string): never => {
    throw new FleetError(redact(reason, secrets), { gitRepo: repo.name });
  };
  const dir = path.join(cacheRoot, "git", sha256Hex(repo.repo).slice(0, 24));
  const auth = new AuthFiles(repo);
  stopSignal.addEventListener("abort", killGitHelpers);
  try {
    return await withLock(path.join(dir, "lock"), async () => {
      // simple-git's guard is relaxed for our own options only: the SSH command and header of AuthFiles,
      // and the `-c filter.<driver>.*=` that turn the runner's filter drivers off (filterDriversOff).
      // A stopped operation kills the git it is waiting for (a fetch from a server that never answers).
      const git = simpleGit({ baseDir: os.tmpdir(), abort: stopSignal, unsafe: { allowUnsafeSshCommand: true, allowUnsafeConfigEnvCount: true, allowUnsafeFilter: true } })
        .env(auth.env());
      const store = path.join(dir, "repo.git");
      if (!fs.existsSync(path.join(store, "HEAD"))) {
        fs.mkdirSync(store, { recursive: true });
        await git.cwd(store);
        await git.init(true);
      }
      await git.cwd(store);
      const { commit, fetched } = await resolveCommit(git, repo, fail);
      const tree = await checkoutTree(git, dir, commit, fail);
      return { gitRepo: repo.name, commit, dir: tree, fetched };
    });
  } catch (err) {
    if (stopSignal.aborted) throw stopSignal.reason; // not the GitRepo's failure: the operation stops
    if (err instanceof FleetError) throw err;
    return fail(gitReason(err));
  } finally {
    stopSignal.removeEventListener("abort", killGitHelpers);
    auth.dispose();
  }
}

/**
 * simple-git's abort ends the git it started, not the transport helper that git started in turn
 * (git-remote-http waiting on a server that never answers), which would outlive the operation: on
 * abort every git process below this one ends.
 */
function killGitHelpers(): void {
  const parents = new Map<number, number>();
  const names = new Map<number, string>();
  for (const entry of fs.readdirSync("/proc")) {
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      names.set(Number(entry), stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")));
    } catch {
      // not a process, or ended meanwhile
    }
  }
  const below = (pid: number): boolean => {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) if (p === process.pid) return true;
    return false;
  };
  for (const [pid, name] of names) {
    if (name.startsWith("git") && below(pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

/** A local path that is a directory but not a git repository (the local stack's examples/). */
function isPlainDirectory(repo: string): boolean {
  if (!path.isAbsolute(repo)) return false;
  if (!fs.existsSync(repo) || !fs.statSync(repo).isDirectory()) return false;
  const isRepo = fs.existsSync(path.join(repo, ".git")) || (fs.existsSync(path.join(repo, "HEAD")) && fs.existsSync(path.join(repo, "objects")));
  return !isRepo;
}

/**
 * A plain directory is read in place; its "commit" is a content hash, so an edit shows as a new
 * revision and an unchanged directory as the same one.
 */
function directorySource(repo: GitRepoConfig): Source {
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
  return { gitRepo: repo.name, commit: `dir-${hash.digest("hex").slice(0, 36)}`, dir: repo.repo, fetched: false };
}

async function resolveCommit(git: SimpleGit, repo: GitRepoConfig, fail: (r: string) => never): Promise<{ commit: string; fetched: boolean }> {
  const url = repo.repo;
  const revision = repo.revision;
  if (revision && /^[0-9a-f]{40}$/.test(revision) && (await hasCommit(git, revision))) {
    return { commit: revision, fetched: false };
  }
  const refs = parseLsRemote(await runGit(git, ["ls-remote", "--", url], fail));
  let ref: string | undefined;
  let commit: string | undefined;
  if (revision) {
    for (const candidate of [`refs/tags/${revision}^{}`, `refs/tags/${revision}`, `refs/heads/${revision}`]) {
      if (refs.has(candidate)) {
        commit = refs.get(candidate);
        ref = candidate.replace(/\^\{\}$/, "");
        break;
      }
    }
    if (!commit && !/^[0-9a-f]{7,40}$/.test(revision)) fail(`revision ${JSON.stringify(revision)} is not a tag, branch or commit of ${displayUrl(url)}`);
  } else {
    const branch = repo.branch ?? DEFAULT_BRANCH;
    ref = `refs/heads/${branch}`;
    commit = refs.get(ref);
    if (!commit) fail(`branch ${JSON.stringify(branch)} not found in ${displayUrl(url)}`);
  }
  if (commit && (await hasCommit(git, commit))) return { commit, fetched: false };
  if (ref) {
    await runGit(git, ["fetch", "--no-tags", "--", url, `+${ref}:${ref}`], fail);
  } else {
    // An abbreviated or unadvertised commit: fetch every branch and tag, then look it up.
    await runGit(git, ["fetch", "--tags", "--", url, "+refs/heads/*:refs/heads/*"], fail);
    commit = (await git.raw(["rev-parse", "--verify", "--quiet", `${revision}^{commit}`]).catch(() => "")).trim();
    if (!commit) fail(`revision ${JSON.stringify(revision)} not found in ${displayUrl(url)}`);
  }
  if (!(await hasCommit(git, commit!))) fail(`commit ${commit} was not received from ${displayUrl(url)}`);
  return { commit: commit!, fetched: true };
}

async function hasCommit(git: SimpleGit, sha: string): Promise<boolean> {
  try {
    await git.raw(["cat-file", "-e", `${sha}^{commit}`]);
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
async function checkTreeSize(git: SimpleGit, commit: string, fail: (reason: string) => never): Promise<void> {
  const { treeBytes: max, entries: maxFiles } = contentLimits();
  let total = 0;
  let files = 0;
  let largest = { size: 0, file: "" };
  for (const line of (await git.raw(["ls-tree", "-r", "-l", "-z", commit])).split("\0")) {
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
    fail(`commit ${commit.slice(0, 12)}'s files add up to ${Math.ceil(total / 1024 / 1024)} MiB, over the limit of ${max / 1024 / 1024} MiB per checkout (PULUMI_FLEET_MAX_TREE_MIB; the largest is ${JSON.stringify(largest.file)}, ${Math.ceil(largest.size / 1024 / 1024)} MiB): nothing was written`);
  }
}

/**
 * `-c` options that turn off every filter driver the runner's git configuration defines. A
 * `.gitattributes` in the commit chooses drivers by name, and a driver runs a program on checkout:
 * git-lfs's, configured globally by `git lfs install`, would fetch from the endpoint a `.lfsconfig` in
 * the same commit names, with the runner's git credentials. Fleet's cloner (go-git) runs no filters
 * either, so files are checked out exactly as committed.
 */
async function filterDriversOff(git: SimpleGit): Promise<string[]> {
  let listed = "";
  try {
    listed = await git.raw(["config", "--get-regexp", "^filter\\."]);
  } catch {
    return []; // exit status 1: no driver configured
  }
  const drivers = new Set(listed.split("\n").map((l) => /^filter\.(.+)\.[a-z]+\s/i.exec(l)?.[1]).filter((d): d is string => !!d));
  return [...drivers].flatMap((d) => ["-c", `filter.${d}.smudge=`, "-c", `filter.${d}.process=`, "-c", `filter.${d}.required=false`]);
}

/** Extracts a commit's tree once, within the tree limits; the directory name is the commit, so it never changes afterwards. */
async function checkoutTree(git: SimpleGit, dir: string, commit: string, fail: (reason: string) => never): Promise<string> {
  const trees = path.join(dir, "trees");
  const tree = path.join(trees, commit);
  if (!fs.existsSync(tree)) {
    // Checked only before writing: a tree already extracted passed it (a no-op up spawns no ls-tree).
    await checkTreeSize(git, commit, fail);
    fs.mkdirSync(trees, { recursive: true });
    const tmp = fs.mkdtempSync(path.join(trees, ".tmp-"));
    const index = `${tmp}.index`;
    try {
      const noFilters = await filterDriversOff(git);
      const withIndex = git.env("GIT_INDEX_FILE", index);
      await withIndex.raw([...noFilters, "--work-tree", tmp, "read-tree", commit]);
      await withIndex.raw([...noFilters, "--work-tree", tmp, "checkout-index", "--all", "--force"]);
      fs.renameSync(tmp, tree);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
      fs.rmSync(index, { force: true });
    }
  }
  const now = new Date();
  fs.utimesSync(tree, now, now);
  pruneTrees(trees);
  return tree;
}

/** Keeps the most recently used trees; older commits are re-extracted from the object store on demand. */
function pruneTrees(trees: string): void {
  const entries = fs.readdirSync(trees)
    .filter((n) => /^[0-9a-f]{40}$/.test(n))
    .map((n) => ({ n, t: fs.statSync(path.join(trees, n)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const { n } of entries.slice(KEEP_TREES)) fs.rmSync(path.join(trees, n), { recursive: true, force: true });
}

function parseLsRemote(out: string): Map<string, string> {
  const refs = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [sha, ref] = line.trim().split(/\s+/);
    if (sha && ref) refs.set(ref, sha);
  }
  return refs;
}

async function runGit(git: SimpleGit, args: string[], fail: (r: string) => never): Promise<string> {
  try {
    return await git.raw(args);
  } catch (err) {
    return fail(gitReason(err));
  }
}

function gitReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const lines = message.split("\n").map((l) => l.trim()).filter((l) => l);
  const useful = lines.filter((l) => /^(fatal|error|remote|ssh|Permission|Host key|ERROR)/i.test(l));
  return (useful.length ? useful : lines).slice(0, 3).join("; ") || "git failed";
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

/** Temporary credential files for one resolution, removed afterwards whatever happens. */
class AuthFiles {
  private tmp?: string;
  private readonly vars: Record<string, string> = {};

  constructor(repo: GitRepoConfig) {
    const files: Record<string, string> = {};
    const auth = repo.auth;
    if (auth?.sshPrivateKey) {
      files.key = auth.sshPrivateKey.endsWith("\n") ? auth.sshPrivateKey : `${auth.sshPrivateKey}\n`;
      files.known_hosts = auth.knownHosts ?? "";
    }
    if (repo.caBundle) files["ca.pem"] = repo.caBundle;
    if (Object.keys(files).length > 0) {
      this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-fleet-auth-"));
      for (const [name, content] of Object.entries(files)) {
        fs.writeFileSync(path.join(this.tmp, name), content, { mode: 0o600 });
      }
    }
    if (files.key) {
      const q = (p: string) => `'${p.replace(/'/g, "'\\''")}'`;
      this.vars.GIT_SSH_COMMAND = `ssh -i ${q(path.join(this.tmp!, "key"))} -o IdentitiesOnly=yes -o BatchMode=yes ` +
        `-o StrictHostKeyChecking=yes -o UserKnownHostsFile=${q(path.join(this.tmp!, "known_hosts"))}`;
    }
    if (auth?.token) {
      const basic = Buffer.from(`${auth.username ?? "git"}:${auth.token}`).toString("base64");
      this.vars.GIT_CONFIG_COUNT = "1";
      this.vars.GIT_CONFIG_KEY_0 = "http.extraHeader";
      this.vars.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${basic}`;
    }
    if (files["ca.pem"]) this.vars.GIT_SSL_CAINFO = path.join(this.tmp!, "ca.pem");
    if (repo.insecureSkipTLSVerify) this.vars.GIT_SSL_NO_VERIFY = "true";
  }

  /** A minimal environment: no ambient editor, askpass, credential helper or git config can interfere. */
  env(): Record<string, string> {
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && /^(PATH|HOME|TMPDIR|LANG|LC_ALL|USER|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy)$/.test(k)) base[k] = v;
    }
    return { ...base, GIT_TERMINAL_PROMPT: "0", ...this.vars };
  }

  dispose(): void {
    if (this.tmp) fs.rmSync(this.tmp, { recursive: true, force: true });
  }
}
