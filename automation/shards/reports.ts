/**
 * One report from the shards' results (automation/shards/runner.ts): the pull-request summary, the
 * deploy events and the status of a sharded environment read as one fleet's, with the shards that
 * failed named first.
 */
import { deploymentKey } from "../../core/model/keys";
import { compare, DeployEvent } from "../reports/deploy-events";
import { RollUp, STATE_RANK, StatusReport } from "../reports/status";
import { ShardRun } from "./runner";
import { ClustersUnreachableError, EXIT } from "../reports/exit-codes";
import { markdownCode, markdownText } from "../reports/escape/markdown";

export function failedShards(runs: ShardRun[]): ShardRun[] {
  return runs.filter((r) => r.exitCode !== 0 || !r.result?.ok);
}

/** A failed shard whose only trouble was a cluster it could not read (exit code 3, automation/reports/exit-codes.ts). */
export function onlyUnreachable(r: ShardRun): boolean {
  return r.exitCode === EXIT.clustersUnreachable;
}

/**
 * The environment's error, from its failed shards: none, or the exit code 3 of "a cluster could not be
 * read" when that was every failed shard's only trouble (automation/reports/exit-codes.ts), else a failure.
 */
export function shardsError(op: string, environment: string, failed: ShardRun[]): Error | undefined {
  if (!failed.length) return undefined;
  const names = failed.map((r) => r.shard).join(", ");
  if (failed.every(onlyUnreachable))
    return new ClustersUnreachableError(
      `${op} of environment ${environment}: shard(s) ${names} could not read a cluster; every other cluster was done`,
      new Map(),
    );
  return new Error(`${op} failed on shard(s) ${names}; the other shards ran to the end`);
}

function whyFailed(r: ShardRun): string {
  return (r.result?.error ?? `exited with code ${r.exitCode} before reporting a result`).split("\n")[0];
}

/** Every shard's summary under one heading, with a table of shards first; headings one level down. */
export function mergeSummaries(environment: string, runs: ShardRun[]): string {
  const out = [
    `## pulumi-fleet preview of environment ${markdownCode(environment)} (${runs.length} shards)`,
    "",
    "| shard | stack | result | changes |",
    "|---|---|---|---|",
  ];
  for (const r of runs) {
    const changes =
      Object.entries(r.result?.changes ?? {})
        .filter(([k]) => k !== "same" && k !== "read")
        .map(([k, n]) => `${n} ${k}`)
        .join(", ") || "none";
    const result = r.skipped
      ? `not previewed: ${r.skipped}`
      : r.exitCode === 0 && r.result?.ok
        ? "ok"
        : `${onlyUnreachable(r) ? "**a cluster could not be read**" : "**failed**"}: ${markdownText(whyFailed(r))}`;
    out.push(`| ${r.shard} | ${r.stack} | ${result} | ${changes} |`);
  }
  out.push("");
  for (const r of runs) if (r.result?.summaryMarkdown) out.push(r.result.summaryMarkdown.replace(/^(#+) /gm, "#$1 ").trimEnd(), "");
  return out.join("\n");
}

/** Deploy events of all shards, each with its shard, in (cluster, bundle) order as one stack's are. */
export function mergeEvents(runs: ShardRun[]): (DeployEvent & { shard: string })[] {
  return runs.flatMap((r) => (r.result?.events ?? []).map((e) => ({ ...e, shard: r.shard }))).sort((a, b) => compare(deploymentKey(a), deploymentKey(b)));
}

function worse(a: RollUp["state"], b: RollUp["state"]): RollUp["state"] {
  return STATE_RANK[a] >= STATE_RANK[b] ? a : b;
}

/** The status of the whole environment: deployments and clusters side by side, roll-ups added up. */
export function mergeStatus(environment: string, reports: StatusReport[]): StatusReport {
  const roll = <T extends RollUp>(items: T[], key: (x: T) => string): T[] => {
    const byKey = new Map<string, T>();
    for (const x of items) {
      const seen = byKey.get(key(x));
      byKey.set(
        key(x),
        seen
          ? {
              ...seen,
              state: worse(seen.state, x.state),
              readyClusters: seen.readyClusters + x.readyClusters,
              desiredReadyClusters: seen.desiredReadyClusters + x.desiredReadyClusters,
            }
          : { ...x },
      );
    }
    return [...byKey.values()].sort((a, b) => compare(key(a), key(b)));
  };
  const takenAt = reports
    .map((r) => r.takenAt)
    .filter((t): t is string => !!t)
    .sort()[0];
  // A pair moved to another shard has not left the environment: that shard deploys it.
  const leaving = reports
    .flatMap((r) => r.leaving ?? [])
    .filter((l) => l.code !== "movedToShard")
    .sort((a, b) => compare(`${a.gitRepo}/${a.bundle}/${a.cluster}`, `${b.gitRepo}/${b.bundle}/${b.cluster}`));
  return {
    stack: environment,
    deployments: reports
      .flatMap((r) => r.deployments)
      .sort((a, b) => compare(`${a.gitRepo}/${a.bundle}/${a.cluster}`, `${b.gitRepo}/${b.bundle}/${b.cluster}`)),
    bundles: roll(
      reports.flatMap((r) => r.bundles),
      (b) => `${b.gitRepo}/${b.bundle}`,
    ),
    gitRepos: roll(
      reports.flatMap((r) => r.gitRepos),
      (g) => g.gitRepo,
    ),
    clusters: reports.flatMap((r) => r.clusters).sort((a, b) => compare(a.cluster, b.cluster)),
    ...(leaving.length ? { leaving } : {}),
    ...(takenAt ? { takenAt } : {}),
  };
}
