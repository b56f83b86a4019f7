/**
 * `npm run import -- FILE [--stack NAME] [--workspace NS] [--force]`: Fleet's GitRepos, Clusters and
 * ClusterGroups, with the GitRepoRestrictions and Policies that shape the GitRepos, as `kubectl get` prints
 * them on a Fleet management cluster, written as stacks/Pulumi.NAME.yaml (core/import/fleet-export.ts).
 * Each field it cannot map is a comment in the file and a line on stderr; no secret is ever copied. A
 * GitRepo Fleet refuses under its restrictions is not written, and named on stdout as well.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { importFleetExport } from "../core/import/fleet-export";
import { PROJECT_DIR } from "../core/base/project-dir";
import { stackFileFor } from "../core/config/stack";
import { FleetError } from "../core/base/errors";
import { parseCommand, runMain, UsageError } from "./cli";

const SPEC = {
  usage: "npm run import -- FILE [--stack NAME] [--workspace NS] [--force]",
  summary:
    "Writes stacks/Pulumi.NAME.yaml from Fleet's objects (kubectl get gitrepos,helmops,clusters,clustergroups,gitreporestrictions,policies.fleet.cattle.io -A -o yaml > FILE).",
  positionals: ["FILE"],
  options: {
    stack: { type: "string" as const, value: "NAME", help: "the stack to write (default: the Fleet workspace's name, such as fleet-default)" },
    workspace: { type: "string" as const, value: "NS", help: "the Fleet workspace (namespace) to import, when the export holds several" },
    force: { type: "boolean" as const, help: "overwrite an existing stack file" },
  },
};

async function main(): Promise<void> {
  const { values, positionals } = parseCommand(process.argv.slice(2), SPEC);
  const input = positionals[0];
  if (!fs.existsSync(input)) throw new FleetError("file not found", { file: input });
  const result = importFleetExport(fs.readFileSync(input, "utf8"), input, { workspace: values.workspace });
  const stack = values.stack ?? result.workspace;
  if (!/^[A-Za-z0-9_.-]+$/.test(stack)) throw new UsageError(`--stack ${JSON.stringify(stack)}: a stack name is letters, digits, '-', '_' and '.'`);
  const file = stackFileFor(stack);
  const target = path.join(PROJECT_DIR, file);
  if (fs.existsSync(target) && !values.force) throw new FleetError("exists already; nothing written (--force overwrites it)", { file });
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, result.text);
  for (const n of result.notes) console.error(`${input}: ${n.object}${n.field ? `: ${n.field}` : ""}: ${n.text}`);
  const { clusters, clusterGroups, gitRepos, helmOps } = result.counts;
  const refused = [...result.refused.map((n) => `GitRepo ${result.workspace}/${n}`), ...result.refusedHelmOps.map((n) => `HelmOp ${result.workspace}/${n}`)];
  if (refused.length)
    console.log(
      `not imported: ${refused.join(", ")}: Fleet refuses ${refused.length === 1 ? "it" : "them"}, or the stack cannot hold ${refused.length === 1 ? "it" : "them"} as Fleet means (why: above on stderr, and in the file header)`,
    );
  console.log(
    `wrote ${file}: ${clusters} clusters, ${clusterGroups} cluster groups, ${gitRepos} GitRepos, ${helmOps} HelmOps from workspace ${result.workspace}; ${result.notes.length} note(s) to act on (above on stderr, and as comments in the file)`,
  );
  console.log(`next: set each cluster's context (or kubeconfig), then npm run plan -- --stack ${stack}; the migration order is in docs/coming-from-fleet.md`);
}

runMain(SPEC, main);
