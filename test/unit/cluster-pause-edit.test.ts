/** `npm run pause` / `resume` (core/config/cluster-pause-edit.ts, scripts/pause.ts): the stack file's cluster paused or resumed, the rest of the file kept. */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { withClusterPause } from "../../core/config/cluster-pause-edit";
import { parseStackConfig } from "../../core/config/stack";
import * as YAML from "yaml";
import { errorOf } from "../support/errors";
import { tempDir } from "../support/git-fixtures";
import { spawnSync } from "node:child_process";
import { shardFileText, stackFilePath } from "../../core/config/shard-files";
import { definer, writeCheckpoint } from "../support/shard-states";

const ROOT = path.resolve(__dirname, "../..");
const tsScript = (script: string, args: string[], env: Record<string, string>) =>
  spawnSync(process.execPath, [path.join(ROOT, "scripts/run-ts.js"), path.join(ROOT, script), ...args], {
    encoding: "utf8",
    cwd: ROOT,
    env: { ...process.env, ...env },
  });

const FILE = "stacks/Pulumi.prod.yaml";
const TEXT = `encryptionsalt: v1:abc
config:
  # the production clusters
  pulumi-fleet:clusters:
    - name: prod-1 # the big one
      labels: {env: prod}
    - name: prod-2
  pulumi-fleet:gitRepos: []
`;
const PAUSE = { reason: "incident 4711", by: "alice", since: "2026-11-29T04:40:00Z" };
const clustersOf = (text: string) => parseStackConfig({ clusters: YAML.parse(text).config["pulumi-fleet:clusters"] }, FILE, "/project").clusters;

describe("npm run pause / resume (core/config/cluster-pause-edit.ts)", () => {
  it("pauses one cluster with reason, by and since, keeping comments, order and the other keys; resume removes it and only it", () => {
    const paused = withClusterPause(TEXT, FILE, "prod-1", PAUSE);
    expect(paused).to.include("# the production clusters").and.include("# the big one").and.include("encryptionsalt: v1:abc");
    expect(clustersOf(paused).map((c) => [c.name, c.paused])).to.deep.equal([
      ["prod-1", PAUSE],
      ["prod-2", undefined],
    ]);
    const resumed = withClusterPause(paused, FILE, "prod-1", undefined);
    expect(YAML.parse(resumed)).to.deep.equal(YAML.parse(TEXT));
    expect(resumed).to.include("# the production clusters").and.include("# the big one");
  });

  it("an unknown cluster, or a file without clusters, is an error naming the file and the clusters it has", () => {
    expect(errorOf(() => withClusterPause(TEXT, FILE, "prod-3", PAUSE))).to.equal(
      'stacks/Pulumi.prod.yaml: pulumi-fleet:clusters: has no cluster "prod-3" (its clusters: prod-1, prod-2)',
    );
    expect(errorOf(() => withClusterPause("config: {}\n", FILE, "prod-1", PAUSE))).to.match(/has no pulumi-fleet:clusters list/);
  });

  it("the command writes the file and says so; resume with --reason is refused", function () {
    this.timeout(60_000);
    const dir = tempDir("pf-pause-");
    fs.writeFileSync(path.join(dir, "Pulumi.prod.yaml"), TEXT);
    const env = { PULUMI_FLEET_STACKS_DIR: dir };
    const paused = tsScript("scripts/pause.ts", ["pause", "--stack", "prod", "--cluster", "prod-2", "--reason", "disk full", "--by", "bob"], env);
    expect(paused.status, paused.stderr).to.equal(0);
    expect(paused.stdout).to.match(/^paused cluster prod-2 in stacks\/Pulumi.prod.yaml \(disk full; by bob since \d{4}-/);
    expect(clustersOf(fs.readFileSync(path.join(dir, "Pulumi.prod.yaml"), "utf8"))[1].paused).to.include({ reason: "disk full", by: "bob" });
    expect(tsScript("scripts/pause.ts", ["resume", "--stack", "prod", "--cluster", "prod-2", "--reason", "x"], env).status).to.not.equal(0);
    expect(tsScript("scripts/pause.ts", ["resume", "--stack", "prod", "--cluster", "prod-2"], env).status).to.equal(0);
    expect(YAML.parse(fs.readFileSync(path.join(dir, "Pulumi.prod.yaml"), "utf8"))).to.deep.equal(YAML.parse(TEXT));
  });

  it("in a sharded environment, a pending edit that moves a cluster is refused, a cluster a shard's state still deploys included; a new cluster is not", function () {
    this.timeout(60_000);
    const dir = tempDir("pf-pause-shards-");
    const stateDir = tempDir("pf-pause-state-");
    const env = { PULUMI_FLEET_STACKS_DIR: dir, PULUMI_FLEET_STATE_DIR: stateDir };
    const SHARDS = ["eu", "us"].map((r) => ({ name: r, clusterSelector: { matchLabels: { region: r } } }));
    const define = (clusters: { name: string; labels: Record<string, string> }[]) => definer(dir)(clusters, SHARDS);
    const eu1 = { name: "eu-1", labels: { region: "eu" } };
    // us-1 left the definition, the files were rewritten, and no up of prod.us ran: its state still deploys us-1.
    define([eu1]);
    for (const s of ["eu", "us"]) fs.writeFileSync(stackFilePath(dir, `prod.${s}`), shardFileText(dir, "prod", s));
    writeCheckpoint(stateDir, "prod.us", ["us-1"]);
    writeCheckpoint(stateDir, "prod.eu", ["eu-1"]);
    const pause = () => tsScript("scripts/pause.ts", ["pause", "--stack", "prod", "--cluster", "eu-1", "--reason", "incident"], env);
    // Back in shard eu: new to the files, but a move from prod.us's state, which --apply must make first.
    define([eu1, { name: "us-1", labels: { region: "eu" } }]);
    const refused = pause();
    expect(refused.status, refused.stdout).to.not.equal(0);
    expect(refused.stderr).to.contain("move us-1: us -> eu").and.contain("apply it first");
    expect(fs.readFileSync(stackFilePath(dir, "prod"), "utf8")).to.not.contain("incident");
    // A cluster no state deploys is new: the pause goes ahead and the shard files name it.
    define([eu1, { name: "eu-2", labels: { region: "eu" } }]);
    const paused = pause();
    expect(paused.status, paused.stderr).to.equal(0);
    expect(fs.readFileSync(stackFilePath(dir, "prod.eu"), "utf8"))
      .to.contain("eu-2")
      .and.contain("incident");
  });
});
