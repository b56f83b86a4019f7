/**
 * What each deployed commit is told after an `up`, decided as a value from the up's outcome (which
 * pairs of which GitRepo failed, were held, are Ready) and the commit each GitRepo was deployed at.
 * One status per repository and commit: GitRepos that share both (two paths of one repository) are one
 * result, so one context never gets two answers. Pure; post.ts acts on it.
 */
import type { CommitStatusHost } from "../../core/config/commit-status";
import { deploymentKey } from "../../core/model/keys";
import type { DeploymentFailure } from "../../core/plan/failures";
import { compare } from "../reports/deploy-events";
import { plainLine } from "../reports/escape/text";
import { Repository, repositoryOf } from "./repository";

/** The result in the host-neutral words; hostState maps them to each API's. */
export type CommitState = "success" | "failure" | "pending";

/** What an up did, as the commit statuses read it. */
export interface UpCommits {
  /** The commit each GitRepo was deployed at. */
  commits: Record<string, string>;
  /** The pairs the up planned. */
  entries: { cluster: string; gitRepo: string; bundle: string }[];
  failed: DeploymentFailure[];
  held: DeploymentFailure[];
  /** Whether the pair with this deployment key is Ready after the up. */
  ready: (key: string) => boolean;
  /** Clusters the up could not reach (left out of it): their pairs are not deployed, whatever they reported before. */
  offline?: ReadonlySet<string>;
}

export interface CommitFacts extends UpCommits {
  host: CommitStatusHost;
  apiUrl: string;
  /** The GitRepos reported (commitStatus.gitRepos, or all), with their `repo` URLs. */
  gitRepos: { name: string; repo: string }[];
}

export interface ClusterCount {
  cluster: string;
  bundles: number;
  ready: number;
  failed: number;
  held: number;
  /** The cluster could not be reached: none of its pairs counts as Ready. */
  offline?: true;
}

export interface CommitResult {
  repository: Repository;
  commit: string;
  gitRepos: string[];
  state: CommitState;
  /** Plain text, whole: hostDescription cuts it to each API's limit. */
  description: string;
  clusters: ClusterCount[];
  /** Each failed or held pair with why (content's words: every sink escapes them). */
  failures: { gitRepo: string; bundle: string; cluster: string; reason: string }[];
  held: { gitRepo: string; bundle: string; cluster: string; reason: string }[];
}

export interface CommitDecision {
  results: CommitResult[];
  /** GitRepos left out, one line each, for a warning. */
  skipped: string[];
}

const COMMIT = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

export function decideCommitStatuses(f: CommitFacts): CommitDecision {
  const skipped: string[] = [];
  const targets = new Map<string, { repository: Repository; commit: string; gitRepos: string[] }>();
  for (const g of [...f.gitRepos].sort((a, b) => compare(a.name, b.name))) {
    const commit = f.commits[g.name];
    if (!commit) continue; // not deployed by this up (its source failed: that is its own failure, said elsewhere)
    const r = repositoryOf(g.repo, f.host, f.apiUrl);
    if ("skip" in r) {
      skipped.push(`GitRepo ${g.name}: ${r.skip}`);
      continue;
    }
    if (!COMMIT.test(commit)) {
      skipped.push(`GitRepo ${g.name}: its commit ${JSON.stringify(commit)} is not a full commit id`);
      continue;
    }
    const key = `${r.path.toLowerCase()}@${commit}`;
    const t = targets.get(key) ?? { repository: r, commit, gitRepos: [] };
    t.gitRepos.push(g.name);
    targets.set(key, t);
  }
  return { results: [...targets.values()].map((t) => resultOf(f, t)), skipped };
}

function resultOf(f: CommitFacts, t: { repository: Repository; commit: string; gitRepos: string[] }): CommitResult {
  const mine = new Set(t.gitRepos);
  const failed = f.failed.filter((x) => mine.has(x.gitRepo));
  const held = f.held.filter((x) => mine.has(x.gitRepo));
  const failedKeys = new Set(failed.filter((x) => x.cluster).map(deploymentKey));
  const heldKeys = new Set(held.filter((x) => x.cluster).map(deploymentKey));
  const pairs = new Map<string, string>(); // key -> cluster
  for (const p of [...f.entries, ...failed, ...held]) if (mine.has(p.gitRepo) && p.cluster) pairs.set(deploymentKey(p), p.cluster);
  const clusters = new Map<string, ClusterCount>();
  for (const [key, cluster] of pairs) {
    const offline = f.offline?.has(cluster);
    const c = clusters.get(cluster) ?? { cluster, bundles: 0, ready: 0, failed: 0, held: 0, ...(offline ? { offline: true as const } : {}) };
    c.bundles++;
    if (failedKeys.has(key)) c.failed++;
    else if (heldKeys.has(key)) c.held++;
    else if (!offline && f.ready(key)) c.ready++;
    clusters.set(cluster, c);
  }
  const rows = [...clusters.values()].sort((a, b) => compare(a.cluster, b.cluster));
  const count = (k: "bundles" | "ready" | "failed" | "held") => rows.reduce((n, r) => n + r[k], 0);
  // A bundle that failed before its clusters were known (cluster "") fails the commit too.
  const failing = failed.length > 0;
  const state: CommitState = failing ? "failure" : count("ready") === count("bundles") ? "success" : "pending";
  // The whole message: it names the file and field where the failure has them.
  const line = (x: DeploymentFailure) => ({ gitRepo: x.gitRepo, bundle: x.bundle, cluster: x.cluster, reason: x.message || x.reason });
  const byPair = (a: { cluster: string; gitRepo: string; bundle: string }, b: typeof a) => compare(deploymentKey(a), deploymentKey(b));
  return {
    repository: t.repository,
    commit: t.commit,
    gitRepos: t.gitRepos,
    state,
    description: describe(
      state,
      { pairs: count("bundles"), ready: count("ready"), failed: count("failed") || failed.length, held: count("held") },
      rows,
      failed,
    ),
    clusters: rows,
    failures: failed.map(line).sort(byPair),
    held: held.map(line).sort(byPair),
  };
}

function describe(
  state: CommitState,
  n: { pairs: number; ready: number; failed: number; held: number },
  rows: ClusterCount[],
  failed: DeploymentFailure[],
): string {
  if (!n.pairs && !failed.length) return "deployed: no cluster is targeted";
  const parts = [`${n.ready}/${n.pairs} bundle deployment(s) Ready on ${rows.length} cluster(s)`];
  if (n.failed) parts.push(`${n.failed} failed`);
  if (n.held) parts.push(`${n.held} held`);
  const offline = rows.filter((r) => r.offline).length;
  if (offline) parts.push(`${offline} cluster(s) Offline`);
  else if (state === "pending" && n.pairs - n.ready - n.held - n.failed > 0) parts.push(`${n.pairs - n.ready - n.held - n.failed} not Ready yet`);
  const first = [...failed].sort((a, b) => compare(deploymentKey(a), deploymentKey(b)))[0];
  const why = first ? `; first: ${first.cluster ? `${first.cluster}/` : ""}${first.bundle}: ${first.message || first.reason}` : "";
  return plainLine(`${parts.join(", ")}${why}`);
}

/** Each API's words for a state: GitHub and Gitea say failure, GitLab failed. */
export function hostState(host: CommitStatusHost, s: CommitState): string {
  return host === "gitlab" && s === "failure" ? "failed" : s;
}

/** A status description's longest length per API: GitHub refuses more than 140 characters; GitLab and Gitea store 255. */
export const DESCRIPTION_LIMITS: Record<CommitStatusHost, number> = { github: 140, gitlab: 255, gitea: 255 };

/** Cut in UTF-16 code units (what the APIs count), never inside a character, the cut said with "…". */
export function hostDescription(host: CommitStatusHost, description: string): string {
  const max = DESCRIPTION_LIMITS[host];
  if (description.length <= max) return description;
  let out = "";
  for (const c of description) {
    if (out.length + c.length > max - 1) break;
    out += c;
  }
  return `${out}…`;
}
