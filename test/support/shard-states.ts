/** Shard stacks' states as a file backend keeps them, for tests of what `npm run shards` and `npm run pause` read. */
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { stackFilePath } from "../../core/config/shard-files";

/** A file backend in `stateDir` whose stack `stack` deploys one pair on each of `clusterNames`, as its checkpoint says. */
export function writeCheckpoint(stateDir: string, stack: string, clusterNames: string[]): void {
  const dir = path.join(stateDir, ".pulumi", "stacks", "pulumi-fleet");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(stateDir, ".pulumi", "meta.yaml"), "version: 1\n");
  const resources = clusterNames.map((c) => ({
    type: "pulumi-fleet:index:BundleDeployment",
    urn: `urn:pulumi:${stack}::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::${c}/apps-a`,
  }));
  fs.writeFileSync(path.join(dir, `${stack}.json`), JSON.stringify({ version: 3, checkpoint: { latest: { resources } } }));
}

/** Writes environment prod's definition into `dir`: its clusters and its shards rule. */
export const definer = (dir: string) => (clusters: { name: string; labels: Record<string, string> }[], shards: unknown) =>
  fs.writeFileSync(
    stackFilePath(dir, "prod"),
    YAML.stringify({ config: { "pulumi-fleet:clusters": clusters, "pulumi-fleet:gitRepos": [], "pulumi-fleet:shards": shards } }),
  );
