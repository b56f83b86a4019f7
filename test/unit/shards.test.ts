/**
 * Sharding's pure parts: the membership rule (every cluster in exactly one shard), a shard stack's view
 * of the definition, the generated files and their staleness check, the move plan, the URNs a move
 * names, the merged reports and the operator's Stack resources.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { configFromStackFile, parseStackConfig, stackFileFor } from "../../core/config/stack";
import { stableJson } from "../../core/base/hash";
import { shardMembership } from "../../core/config/shards";
import {
  checkShardStackFile,
  forgetParsedStackFiles,
  loadStackConfig,
  normalizeShardFiles,
  readShardLayout,
  shardFileProblem,
  shardFileText,
  stackFilePath,
} from "../../core/config/shard-files";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { applyShards, clusterUrns, formatShardPlan, planShards, providerUrns, withShardStates } from "../../automation/shards/moves";
import { mergeEvents, mergeStatus, mergeSummaries, shardsError } from "../../automation/shards/reports";
import { exitCodeOf } from "../../automation/reports/exit-codes";
import { operatorStackObjects } from "../../automation/shards/operator-stacks";
import { arrivedClusters, checkNothingEmptied, withoutClusters } from "../../core/desired/previous";
import { tempDir } from "../support/git-fixtures";
import { definer, writeCheckpoint } from "../support/shard-states";
import { ShardRun } from "../../automation/shards/runner";
import { decideShards, shardInputs } from "../../automation/shards/inputs";
import { recordedInFiles } from "../../automation/shards/recorded";
import { gzipSync } from "node:zlib";
import { errorOf } from "../support/errors";
import { decideTargets } from "../../core/targeting/match";
import { withEnv } from "../support/env";
import { Bundle } from "../../core/bundles/types";

const KUBECONFIG = `apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:1\n    certificate-authority-data: ${"QUJD".repeat(60)}\n`;
const clusters = [
  { name: "eu-1", labels: { region: "eu" }, kubeconfig: KUBECONFIG },
  { name: "eu-2", labels: { region: "eu" } },
  { name: "us-1", labels: { region: "us" } },
];
const raw = (shards: unknown, extra: Record<string, unknown> = {}) => ({
  clusters,
  clusterGroups: [{ name: "us", selector: { matchLabels: { region: "us" } } }],
  gitRepos: [{ name: "apps", repo: "https://git.example.com/apps.git", paths: ["a"] }],
  shards,
  ...extra,
});
const parse = (r: Record<string, unknown>) => parseStackConfig(r, "stacks/Pulumi.prod.yaml", PROJECT_DIR);
const BY_REGION = [
  { name: "eu", clusterSelector: { matchLabels: { region: "eu" } } },
  { name: "us", clusterGroup: "us" },
];

describe("shards: membership", () => {
  it("a definition keeps every cluster; a shard's stack keeps only its own and knows the others'", () => {
    expect(parse(raw(BY_REGION)).clusters.map((c) => c.name)).to.deep.equal(["eu-1", "eu-2", "us-1"]);
    const eu = parse(raw(BY_REGION, { shard: { environment: "prod", name: "eu" } }));
    expect(eu.clusters.map((c) => c.name)).to.deep.equal(["eu-1", "eu-2"]);
    expect(eu.shard).to.deep.include({ environment: "prod", name: "eu", elsewhere: ["us-1"] });
    expect(eu.shard!.otherClusters.map((c) => c.name)).to.deep.equal(["us-1"]);
  });

  it("a cluster in two shards is an error naming it and both shards", () => {
    expect(() => parse(raw([...BY_REGION, { name: "all", clusters: ["eu-1"] }]))).to.throw(
      /stacks\/Pulumi\.prod\.yaml: shards: cluster eu-1 is in 2 shards \(eu, all\)/,
    );
  });

  it("a cluster in no shard is an error naming it", () => {
    expect(() => parse(raw([BY_REGION[0]]))).to.throw(/shards: cluster us-1 is in no shard/);
  });

  it("a listed cluster or group that does not exist, an empty rule, a duplicate name, an unknown shard are errors naming the field", () => {
    expect(() => parse(raw([...BY_REGION, { name: "x", clusters: ["nope"] }]))).to.throw(/shards\[2\]\.clusters\[0\]: cluster "nope" is not in clusters/);
    expect(() => parse(raw([{ name: "x", clusterGroup: "nope" }]))).to.throw(/shards\[0\]\.clusterGroup: unknown cluster group "nope"/);
    expect(() => parse(raw([{ name: "x" }]))).to.throw(/shards\[0\]: give clusters, clusterSelector or clusterGroup/);
    expect(() => parse(raw([BY_REGION[0], BY_REGION[0]]))).to.throw(/shards\[1\]\.name: duplicate shard name "eu"/);
    expect(() => parse(raw(BY_REGION, { shard: { environment: "prod", name: "asia" } }))).to.throw(
      /shard\.name: "asia" is not a shard of stacks\/Pulumi\.prod\.yaml \(eu, us\)/,
    );
    expect(() => parse(raw(undefined, { shard: { environment: "prod", name: "eu" } }))).to.throw(/shard: names a shard, but there is no shards: rule/);
  });
});

describe("shards chosen automatically (clustersPerShard)", () => {
  const named = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ name: `c-${from + i}` }));
  const layout = (list: { name: string }[], perShard: number) => {
    const config = parse({ clusters: list, gitRepos: [], clustersPerShard: perShard });
    return { names: config.shards!.map((s) => s.name), of: shardMembership(config.clusters, [], config.shards!, config.file) };
  };

  it("ceil(clusters / clustersPerShard) shards named s1..sN, every cluster in exactly one, a shard's stack keeping its own", () => {
    const { names, of } = layout(named(1000), 50);
    expect(names).to.deep.equal(Array.from({ length: 20 }, (_, i) => `s${i + 1}`));
    const sizes = names.map((n) => [...of.values()].filter((s) => s === n).length);
    expect(sizes.reduce((a, b) => a + b)).to.equal(1000);
    // A hash spreads them about the mean (sd about sqrt(50)): none empty, none twice the mean.
    expect(Math.min(...sizes)).to.be.greaterThan(25);
    expect(Math.max(...sizes)).to.be.lessThan(100);
    const s3 = parse({ clusters: named(1000), gitRepos: [], clustersPerShard: 50, shard: { environment: "prod", name: "s3" } });
    expect(s3.clusters.map((c) => c.name)).to.deep.equal([...of].filter(([, s]) => s === "s3").map(([c]) => c));
    expect(layout(named(3), 50).names).to.deep.equal(["s1"]);
    // As the CLI writes it back when it creates the stack: a top-level scalar as a string.
    expect(parse({ clusters: named(100), gitRepos: [], clustersPerShard: "50" }).shards!.map((s) => s.name)).to.deep.equal(["s1", "s2"]);
  });

  it("a cluster's shard depends on its name and the count only: adding a shard moves clusters only into it, about 1/count of them", () => {
    const before = layout(named(200), 50).of; // 4 shards
    const same = layout(named(190), 50).of; // still 4: nothing moves
    for (const [c, s] of same) expect(s, c).to.equal(before.get(c));
    const after = layout(named(250), 50).of; // 5 shards
    const moved = [...before].filter(([c, s]) => after.get(c) !== s);
    expect(moved.every(([c]) => after.get(c) === "s5")).to.equal(true);
    expect(moved.length).to.be.within(15, 70); // expected 200 / 5 = 40
  });

  it("a count that is not a whole number of 1 or more, or both forms, is an error naming the field", () => {
    expect(() => parse({ clusters: named(3), gitRepos: [], clustersPerShard: 0 })).to.throw(
      /clustersPerShard: must be a whole number of clusters, 1 or more \(got 0\)/,
    );
    expect(() => parse({ clusters: named(3), gitRepos: [], clustersPerShard: 1.5 })).to.throw(/clustersPerShard: must be a whole number/);
    expect(() => parse(raw(BY_REGION, { clustersPerShard: 2 }))).to.throw(/clustersPerShard: give either shards .* or clustersPerShard/);
  });
});

describe("automatic shards kept together by a label (shardBy)", () => {
  // 20 regions of 50 clusters (r0..r19), and 3 clusters without the label.
  const fleet = (regions = 20, per = 50): { name: string; labels?: Record<string, string> }[] => [
    ...Array.from({ length: regions * per }, (_, i) => ({ name: `c-${i}`, labels: { region: `R${i % regions}` } })),
    ...Array.from({ length: 3 }, (_, i) => ({ name: `bare-${i}` })),
  ];
  const layout = (clusters: unknown[], perShard = 25) => {
    const config = parse({ clusters, gitRepos: [], clustersPerShard: perShard, shardBy: "region" });
    return { names: config.shards!.map((s) => s.name), of: shardMembership(config.clusters, [], config.shards!, config.file) };
  };

  it("each value's clusters in ceil(count / N) shards of their own, named after it; clusters without the label in unlabelled-N", () => {
    const { names, of } = layout(fleet());
    expect(names.slice(0, 3)).to.deep.equal(["unlabelled-1", "r0-1", "r0-2"]);
    expect(names).to.have.length(1 + 20 * 2);
    for (const [cluster, shard] of of) {
      const region = cluster.startsWith("bare-") ? "unlabelled" : `r${Number(cluster.slice(2)) % 20}`;
      expect(shard, cluster).to.match(new RegExp(`^${region}-[12]$`));
    }
    // An edit of one region's clusters concerns 2 of the 41 shards.
    const r7 = new Set([...of].filter(([c]) => !c.startsWith("bare-") && Number(c.slice(2)) % 20 === 7).map(([, s]) => s));
    expect([...r7].sort()).to.deep.equal(["r7-1", "r7-2"]);
  });

  it("a value's growth moves clusters only into its new shard; a relabelled cluster moves to its new value's shards; others stay", () => {
    const before = layout(fleet());
    const grown = fleet();
    grown.push(...Array.from({ length: 30 }, (_, i) => ({ name: `new-${i}`, labels: { region: "R3" } }))); // r3: 80 clusters, 4 shards
    grown[1] = { name: "c-1", labels: { region: "R2" } }; // c-1 from r1 to r2 (51 clusters: 3 shards)
    const after = layout(grown);
    const split = (shard: string) => [shard.replace(/-\d+$/, ""), Number(shard.split("-").pop())] as const;
    const countBefore = (prefix: string) => before.names.filter((n) => split(n)[0] === prefix).length;
    expect(after.names.filter((n) => n.startsWith("r3-"))).to.have.length(4);
    let moved = 0;
    for (const [c, s] of before.of) {
      const now = after.of.get(c)!;
      if (c === "c-1") {
        expect(split(now)[0]).to.equal("r2");
        continue;
      }
      if (now === s) continue;
      // Only within its value, and only into a shard that value did not have before.
      expect(split(now)[0], c).to.equal(split(s)[0]);
      expect(split(now)[1], c).to.be.greaterThan(countBefore(split(s)[0]));
      moved++;
    }
    expect(moved).to.be.within(25, 60); // r3's 50 into 2 new of 4 shards (about 25), r2's 50 into 1 new of 3 (about 17)
  });

  it("values that would name the same shards, a bad key, or shardBy without clustersPerShard are errors naming the field", () => {
    expect(() =>
      layout([
        { name: "a", labels: { region: "EU" } },
        { name: "b", labels: { region: "eu" } },
      ]),
    ).to.throw(/shardBy: region="EU" and region="eu" would name the same shards \(eu-1, \.\.\.\)/);
    expect(() => parse({ clusters: [{ name: "a" }], gitRepos: [], clustersPerShard: 5, shardBy: "bad key!" })).to.throw(/shardBy: invalid label key/);
    expect(() => parse({ clusters: [{ name: "a" }], gitRepos: [], shardBy: "region" })).to.throw(/shardBy: applies with clustersPerShard only/);
    expect(() => parse(raw(BY_REGION, { shardBy: "region" }))).to.throw(/shardBy: applies with clustersPerShard only, not with a shards: rule/);
    // Values whose names only look alike coexist; "unlabelled" beside clusters without the label does not; an empty value gets a hash.
    expect(
      layout([
        { name: "a", labels: { region: "a" } },
        { name: "b", labels: { region: "a-1" } },
      ]).names,
    ).to.deep.equal(["a-1", "a-1-1"]);
    expect(() => layout([{ name: "a" }, { name: "b", labels: { region: "unlabelled" } }])).to.throw(
      /shardBy: clusters without label region and region="unlabelled" would name the same shards/,
    );
    expect(layout([{ name: "a", labels: { region: "" } }]).names[0]).to.match(/^v-[0-9a-f]{8}-1$/);
    // A key an object's prototype has is a label like any other (a cluster without it is unlabelled).
    const proto = parse({ clusters: [{ name: "a" }, { name: "b", labels: { constructor: "x" } }], gitRepos: [], clustersPerShard: 5, shardBy: "constructor" });
    expect(proto.shards!.map((s) => s.name)).to.deep.equal(["unlabelled-1", "x-1"]);
    // A long value: a readable start and a hash, still a DNS label with its number.
    const long = "x".repeat(63);
    const [name] = layout([{ name: "a", labels: { region: long } }]).names;
    expect(name).to.match(/^x{40}-[0-9a-f]{8}-1$/);
  });
});

describe("shards: generated stack files", () => {
  const write = (dir: string, shards: unknown) => {
    const config = Object.fromEntries(Object.entries(raw(shards)).map(([k, v]) => [`pulumi-fleet:${k}`, v]));
    fs.writeFileSync(stackFilePath(dir, "prod"), YAML.stringify({ encryptionsalt: "v1:salt", config }));
  };

  it("a generated shard file's configuration, taken from its definition's one parse, is what a parse of that file gives", () => {
    const helmOps = [{ name: "demo", helm: { chart: "demo", repo: "https://charts.example.com", version: "1.2.3" } }];
    const layouts: [string, Record<string, unknown>][] = [
      ["a shards: rule", raw(BY_REGION, { helmOps })],
      ["shards chosen automatically, by label", { ...raw(undefined, { helmOps }), shards: undefined, clustersPerShard: 1, shardBy: "region" }],
    ];
    for (const [what, definition] of layouts) {
      const dir = tempDir("pf-shards-view-");
      const config = Object.fromEntries(
        Object.entries(definition)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => [`pulumi-fleet:${k}`, v]),
      );
      fs.writeFileSync(stackFilePath(dir, "prod"), YAML.stringify({ encryptionsalt: "v1:salt", config }));
      const layout = readShardLayout(dir, "prod")!;
      expect(layout.shards.length, what).to.be.greaterThan(1);
      for (const shard of layout.shards) {
        fs.writeFileSync(stackFilePath(dir, shard.stack), shardFileText(dir, "prod", shard.name));
        const text = fs.readFileSync(stackFilePath(dir, shard.stack), "utf8");
        const parsedRaw = configFromStackFile(YAML.parse(text), stackFileFor(shard.stack));
        const read = loadStackConfig(dir, shard.stack);
        expect(read.raw, `${what}: ${shard.stack}`).to.deep.equal(parsedRaw);
        expect(read.config, `${what}: ${shard.stack}`).to.deep.equal(parseStackConfig(parsedRaw, stackFileFor(shard.stack), PROJECT_DIR));
        expect(read.config.gitRepos.find((g) => g.name === "demo")!.helmOp!.origin.file).to.equal(stackFileFor(shard.stack));
        // Shared by every shard's read, so never changed by one.
        expect(() => (read.config.clusters[0].labels.region = "x")).to.throw(TypeError);
      }
      forgetParsedStackFiles();
    }
  });

  it("a generated shard file is read back without a parse, as the same document; the CLI's rewrite is put back in that form", () => {
    const dir = tempDir("pf-shards-fast-");
    fs.writeFileSync(
      stackFilePath(dir, "prod"),
      YAML.stringify({ config: Object.fromEntries(Object.entries(raw(BY_REGION)).map(([k, v]) => [`pulumi-fleet:${k}`, v])) }),
    );
    const file = stackFilePath(dir, "prod.eu");
    fs.writeFileSync(file, shardFileText(dir, "prod", "eu"));
    const generated = fs.readFileSync(file, "utf8");
    // The document read back (by parts) is the one a parse gives.
    forgetParsedStackFiles();
    const fast = loadStackConfig(dir, "prod.eu").raw;
    expect(stableJson(fast)).to.equal(stableJson(configFromStackFile(YAML.parse(generated), "stacks/Pulumi.prod.eu.yaml")));
    expect(shardFileProblem(dir, "prod", "eu")).to.equal(undefined);
    // As the CLI leaves it when it creates the stack: its salt added, the header gone, reformatted. Still current; parsed.
    const cli = YAML.parse(generated);
    fs.writeFileSync(file, YAML.stringify({ encryptionsalt: "v1:own-salt", ...cli }, { lineWidth: 40 }));
    expect(shardFileProblem(dir, "prod", "eu")).to.equal(undefined);
    normalizeShardFiles(dir, readShardLayout(dir, "prod")!);
    const normal = fs.readFileSync(file, "utf8");
    expect(normal.startsWith("# Generated from Pulumi.prod.yaml: shard eu")).to.equal(true);
    expect(YAML.parse(normal)).to.deep.equal({ encryptionsalt: "v1:own-salt", ...cli });
    expect(normal, "normalizing twice changes nothing").to.equal((normalizeShardFiles(dir, readShardLayout(dir, "prod")!), fs.readFileSync(file, "utf8")));
    // Only secrets settings exactly as generated between the header and the block: a crafted middle is parsed whole.
    const crafted = normal.replace("encryptionsalt: v1:own-salt\n", "encryptionsalt: |\n  v1:x\n  ");
    fs.writeFileSync(file, crafted);
    forgetParsedStackFiles();
    expect(crafted).to.not.equal(normal);
    expect(loadStackConfig(dir, "prod.eu").raw.clusters, "as a whole parse reads it: the configuration inside the salt").to.equal(undefined);
    // A file naming another shard, or carrying secrets settings the generated form would drop, is not put back.
    const other = YAML.stringify({
      encryptionsalt: "v1:own-salt",
      ...cli,
      config: { ...cli.config, "pulumi-fleet:shard": { environment: "prod", name: "us" } },
    });
    fs.writeFileSync(file, other);
    normalizeShardFiles(dir, readShardLayout(dir, "prod")!);
    expect(fs.readFileSync(file, "utf8")).to.equal(other);
    // A hand edit is neither read by parts nor normalized: it is out of date and refused.
    fs.writeFileSync(file, normal.replace("eu-1", "eu-9"));
    forgetParsedStackFiles();
    expect(shardFileProblem(dir, "prod", "eu")).to.match(/its configuration differs/);
    normalizeShardFiles(dir, readShardLayout(dir, "prod")!);
    expect(fs.readFileSync(file, "utf8")).to.contain("eu-9");
  });

  it("a shard file copies the definition and its secrets settings, and is current until the definition changes", () => {
    const dir = tempDir("pf-shards-");
    write(dir, BY_REGION);
    expect(readShardLayout(dir, "prod")!.shards).to.deep.equal([
      { name: "eu", stack: "prod.eu", clusters: ["eu-1", "eu-2"] },
      { name: "us", stack: "prod.us", clusters: ["us-1"] },
    ]);
    expect(shardFileProblem(dir, "prod", "eu")).to.match(/Pulumi\.prod\.eu\.yaml does not exist yet/);
    fs.writeFileSync(stackFilePath(dir, "prod.eu"), shardFileText(dir, "prod", "eu"));
    const doc = YAML.parse(fs.readFileSync(stackFilePath(dir, "prod.eu"), "utf8"));
    expect(doc.encryptionsalt).to.equal("v1:salt");
    // Multi-line values as literal blocks: the CLI rewrites the file when it creates the stack, and a folded one changes on the way.
    expect(fs.readFileSync(stackFilePath(dir, "prod.eu"), "utf8"))
      .to.contain("kubeconfig: |")
      .and.not.match(/kubeconfig: >/);
    expect(doc.config["pulumi-fleet:shard"]).to.deep.equal({ environment: "prod", name: "eu" });
    expect(shardFileProblem(dir, "prod", "eu")).to.equal(undefined);
    checkShardStackFile(dir, "prod.eu");
    checkShardStackFile(dir, "prod"); // a plain stack passes
    // The CLI writes a new stack's top-level scalars back as strings (`3` as `"3"`): the same value, still current.
    const rewritten = YAML.parse(fs.readFileSync(stackFilePath(dir, "prod"), "utf8"));
    rewritten.config["pulumi-fleet:stalledAfter"] = 3;
    fs.writeFileSync(stackFilePath(dir, "prod"), YAML.stringify(rewritten));
    fs.writeFileSync(stackFilePath(dir, "prod.eu"), shardFileText(dir, "prod", "eu"));
    const shardDoc = YAML.parse(fs.readFileSync(stackFilePath(dir, "prod.eu"), "utf8"));
    shardDoc.config["pulumi-fleet:stalledAfter"] = "3";
    fs.writeFileSync(stackFilePath(dir, "prod.eu"), YAML.stringify(shardDoc));
    expect(shardFileProblem(dir, "prod", "eu")).to.equal(undefined);

    write(dir, [
      { ...BY_REGION[0], clusters: ["eu-1"] },
      { name: "us", clusters: ["eu-2", "us-1"] },
    ]);
    expect(() => checkShardStackFile(dir, "prod.eu")).to.throw(
      /stacks\/Pulumi\.prod\.eu\.yaml: is out of date: its configuration differs from Pulumi\.prod\.yaml.*npm run shards -- --stack prod/,
    );
  });

  it("a stack file read again is the file as it is now, whatever a caller did to an earlier read (files are parsed once per text)", () => {
    const dir = tempDir("pf-shards-");
    write(dir, BY_REGION);
    const first = loadStackConfig(dir, "prod");
    (first.raw.clusters as unknown[]).length = 0;
    first.config.clusters.length = 0;
    expect(loadStackConfig(dir, "prod").config.clusters.map((c) => c.name)).to.deep.equal(["eu-1", "eu-2", "us-1"]);
    write(dir, [
      { ...BY_REGION[0], clusters: ["eu-1"] },
      { name: "us", clusters: ["eu-2", "us-1"] },
    ]);
    expect(readShardLayout(dir, "prod")!.shards.map((s) => s.clusters)).to.deep.equal([["eu-1"], ["eu-2", "us-1"]]);
  });

  it("the move plan names each cluster whose shard changes, and new ones", () => {
    const dir = tempDir("pf-shards-");
    write(dir, BY_REGION);
    for (const s of ["eu", "us"]) fs.writeFileSync(stackFilePath(dir, `prod.${s}`), shardFileText(dir, "prod", s));
    expect(planShards(dir, "prod").moves).to.deep.equal([]);
    write(dir, [
      { ...BY_REGION[0], clusters: ["eu-1"] },
      { name: "us", clusters: ["eu-2", "us-1"] },
    ]);
    const plan = planShards(dir, "prod");
    expect(plan.moves).to.deep.equal([{ cluster: "eu-2", from: "eu", to: "us" }]);
    expect([...plan.problems.values()].every(Boolean)).to.equal(true);
    fs.rmSync(stackFilePath(dir, "prod.us"));
    expect(planShards(dir, "prod").moves).to.deep.equal([
      { cluster: "eu-2", from: "eu", to: "us" },
      { cluster: "us-1", from: undefined, to: "us" },
    ]);
  });
});

describe("shards: a removed shard that still deploys a removed cluster", () => {
  it("is named by the plan and refused by --apply before anything moves: its objects and agent would stay with no stack to prune them", async () => {
    const dir = tempDir("pf-shards-");
    const define = definer(dir);
    define(clusters, [BY_REGION[0], { name: "us", clusters: ["us-1"] }]);
    for (const s of ["eu", "us"]) fs.writeFileSync(stackFilePath(dir, `prod.${s}`), shardFileText(dir, "prod", s));
    define(clusters.slice(0, 2), [BY_REGION[0]]); // us-1 and its shard both go
    const plan = planShards(dir, "prod");
    expect(plan.stranded).to.deep.equal([{ cluster: "us-1", shard: "us" }]);
    expect(formatShardPlan(plan)).to.contain("us-1 is no longer in the definition, but its deployments are in shard us, which goes");
    const err = await applyShards({ environment: "prod", stackConfigDir: dir, log: () => undefined }).catch((e: Error) => e.message);
    expect(err).to.match(/nothing was changed: us-1 \(shard us\) would be left deployed with no stack to remove it/);
    expect(fs.existsSync(stackFilePath(dir, "prod.us"))).to.equal(true);
  });

  it("is found in the removed shard's state too, when its file no longer names the cluster (a removal applied earlier whose up never ran)", async () => {
    const dir = tempDir("pf-shards-");
    const stateDir = tempDir("pf-shards-state-");
    const define = definer(dir);
    // us-1 left the definition and us's file was regenerated (it names no cluster), but no up of prod.us ran: its state still deploys us-1.
    define(clusters.slice(0, 2), [BY_REGION[0], { name: "us", clusterSelector: { matchLabels: { region: "us" } } }]);
    for (const s of ["eu", "us"]) fs.writeFileSync(stackFilePath(dir, `prod.${s}`), shardFileText(dir, "prod", s));
    writeCheckpoint(stateDir, "prod.us", ["us-1"]);
    define(clusters.slice(0, 2), [BY_REGION[0]]); // the us shard goes
    const plan = planShards(dir, "prod");
    expect(plan.removed).to.deep.equal(["us"]);
    expect(plan.stranded).to.deep.equal([]); // its file says nothing of us-1
    expect((await withShardStates(plan, dir, { stateDir })).stranded).to.deep.equal([{ cluster: "us-1", shard: "us" }]);
    const err = await applyShards({ environment: "prod", stackConfigDir: dir, stateDir, log: () => undefined }).catch((e: Error) => e.message);
    expect(err).to.match(/nothing was changed: us-1 \(shard us\) would be left deployed/);
    expect(fs.existsSync(stackFilePath(dir, "prod.us"))).to.equal(true);
    // With shardBy, a value's shards go with its last cluster: the advice is to move it into a shard that stays first.
    const byLabel = {
      ...plan,
      layout: { ...plan.layout, config: { ...plan.layout.config, shards: [{ name: "eu-1", labelValue: { key: "region", value: "eu" } }] } },
    };
    expect(formatShardPlan({ ...byLabel, stranded: [{ cluster: "us-1", shard: "us-1" }] })).to.contain(
      "move it first into a shard that stays (give it a value of region whose shards stay",
    );
    // Once its up removed us-1 (an empty state), the shard goes.
    writeCheckpoint(stateDir, "prod.us", []);
    expect((await withShardStates(plan, dir, { stateDir })).stranded).to.deep.equal([]);
  });

  it("moves a cluster back from the state that still deploys it when the definition has it again in another shard (re-added after a removal whose up never ran)", async () => {
    const dir = tempDir("pf-shards-");
    const stateDir = tempDir("pf-shards-state-");
    const define = definer(dir);
    const US = { name: "us", clusterSelector: { matchLabels: { region: "us" } } };
    // us-1 left the definition, both files were regenerated, and no up of prod.us ran: its state still deploys us-1.
    define(clusters.slice(0, 2), [BY_REGION[0], US]);
    for (const s of ["eu", "us"]) fs.writeFileSync(stackFilePath(dir, `prod.${s}`), shardFileText(dir, "prod", s));
    writeCheckpoint(stateDir, "prod.us", ["us-1"]);
    writeCheckpoint(stateDir, "prod.eu", ["eu-1", "eu-2"]);
    // Re-added with an eu label: in shard eu now. Its files never named it, so they call it new...
    define([...clusters.slice(0, 2), { name: "us-1", labels: { region: "eu" } }], [BY_REGION[0], US]);
    const plan = planShards(dir, "prod");
    expect(plan.moves).to.deep.equal([{ cluster: "us-1", from: undefined, to: "eu" }]);
    // ...but prod.us still deploys it: it moves from there (else prod.us's next up would delete what prod.eu deploys).
    const read = await withShardStates(plan, dir, { stateDir });
    expect(read.moves).to.deep.equal([{ cluster: "us-1", from: "us", to: "eu" }]);
    expect(formatShardPlan(read)).to.contain("move us-1: us -> eu");
    // The same when its old shard goes with the edit.
    define([...clusters.slice(0, 2), { name: "us-1", labels: { region: "eu" } }], [BY_REGION[0]]);
    const gone = await withShardStates(planShards(dir, "prod"), dir, { stateDir });
    expect(gone.removed).to.deep.equal(["us"]);
    expect(gone.moves).to.deep.equal([{ cluster: "us-1", from: "us", to: "eu" }]);
    expect(gone.stranded).to.deep.equal([]);
    // Deployed by two states: no move can choose; --apply refuses before anything changes.
    writeCheckpoint(stateDir, "prod.eu", ["eu-1", "eu-2", "us-1"]);
    const both = await withShardStates(planShards(dir, "prod"), dir, { stateDir });
    expect(both.inSeveral).to.deep.equal([{ cluster: "us-1", shards: ["eu", "us"] }]);
    expect(both.moves, "no move is named for it").to.deep.equal([]);
    expect(formatShardPlan(both)).to.contain("us-1: its deployments are in the states of shards eu and us").and.not.contain("nothing would move");
    const err = await applyShards({ environment: "prod", stackConfigDir: dir, stateDir, log: () => undefined }).catch((e: Error) => e.message);
    expect(err).to.match(/^nothing was changed: us-1: its deployments are in the states of shards eu and us; .*resolve it by hand/);
    expect(fs.existsSync(stackFilePath(dir, "prod.us"))).to.equal(true);
    // Files that name every cluster where the definition puts it: `npm run shards` still reads the states (files
    // reverted, or written by an earlier version, may hide a move); a pause rewriting them reads none (onlyWhenPending).
    define([...clusters.slice(0, 2), { name: "us-1", labels: { region: "eu" } }], [BY_REGION[0], US]);
    for (const s of ["eu", "us"]) fs.writeFileSync(stackFilePath(dir, `prod.${s}`), shardFileText(dir, "prod", s));
    fs.writeFileSync(path.join(stateDir, ".pulumi", "stacks", "pulumi-fleet", "prod.eu.json"), "{ not json");
    const quiet = planShards(dir, "prod");
    expect(quiet.moves).to.deep.equal([]);
    expect(await withShardStates(quiet, dir, { stateDir }, true)).to.equal(quiet);
    expect(await withShardStates(quiet, dir, { stateDir }).catch((e: Error) => e.message)).to.be.a("string");
  });

  it("is read through the CLI where the files cannot be read (here a file backend before project folders), its out-of-date file no obstacle", async function () {
    this.timeout(60_000);
    const dir = tempDir("pf-shards-");
    const legacy = tempDir("pf-shards-legacy-");
    fs.mkdirSync(path.join(legacy, ".pulumi", "stacks"), { recursive: true }); // no meta.yaml: the layout the CLI reads, not this code
    fs.writeFileSync(path.join(legacy, ".pulumi", "stacks", "other.json"), "{}");
    const define = (shards: unknown) =>
      fs.writeFileSync(
        stackFilePath(dir, "prod"),
        YAML.stringify({ config: { "pulumi-fleet:clusters": clusters, "pulumi-fleet:gitRepos": [], "pulumi-fleet:shards": shards } }),
      );
    define([BY_REGION[0], { name: "us", clusterSelector: { matchLabels: { region: "us" } } }]);
    for (const s of ["eu", "us"]) fs.writeFileSync(stackFilePath(dir, `prod.${s}`), shardFileText(dir, "prod", s));
    define([{ ...BY_REGION[0], clusterSelector: {} }]); // us goes: its file is out of date now
    const plan = planShards(dir, "prod");
    expect(plan.removed).to.deep.equal(["us"]);
    // The CLI says prod.us was never created: it deploys nothing (the open did not stop on its file).
    await withEnv({ PULUMI_CONFIG_PASSPHRASE: "test", PULUMI_DIY_BACKEND_IGNORE_DEPRECATION_ERROR: "1" }, async () => {
      expect((await withShardStates(plan, dir, { stateDir: legacy })).stranded).to.deep.equal([]);
    });
  });
});

describe("shards: what a move names", () => {
  const s = "urn:pulumi:prod.eu::pulumi-fleet::";
  const resources = [
    { type: "pulumi-fleet:index:Cluster", urn: `${s}pulumi-fleet:index:Fleet$pulumi-fleet:index:Cluster::eu-1` },
    { type: "pulumi-fleet:index:Cluster", urn: `${s}pulumi-fleet:index:Fleet$pulumi-fleet:index:Cluster::eu-10` },
    {
      type: "pulumi-fleet:index:BundleDeployment",
      urn: `${s}pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::eu-1/apps-a`,
    },
    {
      type: "pulumi-fleet:index:BundleDeployment",
      urn: `${s}pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::eu-10/apps-a`,
    },
    { type: "pulumi:providers:kubernetes", urn: `${s}pulumi-fleet:index:Fleet$pulumi:providers:kubernetes::eu-1` },
    { type: "pulumi:providers:kubernetes", urn: `${s}pulumi-fleet:index:Fleet$pulumi:providers:kubernetes::eu-1/as/system:serviceaccount:x:y` },
    { type: "pulumi:providers:kubernetes", urn: `${s}pulumi-fleet:index:Fleet$pulumi:providers:kubernetes::eu-10` },
  ];
  it("the cluster's Cluster component and BundleDeployments, not a cluster whose name merely starts the same", () => {
    expect(clusterUrns(resources, "eu-1")).to.deep.equal([resources[0].urn, resources[2].urn]);
    expect(providerUrns(resources, "eu-1")).to.deep.equal([resources[4].urn, resources[5].urn]);
  });

  it("a shard ignores the records of clusters now in other shards; clusters it did not deploy last time get the move alias", () => {
    const previous = {
      gitRepos: { apps: { commit: "c", clusters: ["eu-1", "us-1"] } },
      deploymentIds: { "eu-1/a": "x", "us-1/a": "y" },
      clusters: ["eu-1", "us-1"],
    };
    expect(withoutClusters(previous, ["us-1"])).to.deep.equal({
      gitRepos: { apps: { commit: "c", clusters: ["eu-1"] } },
      clusters: ["eu-1"],
      deploymentIds: { "eu-1/a": "x" },
    });
    expect([...arrivedClusters(["eu-1", "eu-2"], previous)]).to.deep.equal(["eu-2"]);
    expect([...arrivedClusters(["eu-1"], undefined)]).to.deep.equal(["eu-1"]);
  });

  it("a GitRepo a shard no longer deploys is not emptied while another shard's clusters still get it, and that is asked only then", async () => {
    const repos = parse(raw(BY_REGION)).gitRepos;
    const previous = { gitRepos: { apps: { commit: "c", clusters: ["eu-1"] } } };
    const none = { entries: [], skipped: [] };
    expect(errorOf(() => checkNothingEmptied(repos, none, previous))).to.match(/matched 1 cluster\(s\) in the last deployment \(eu-1\) and matches none now/);
    expect(errorOf(() => checkNothingEmptied(repos, none, previous, () => false))).to.match(/matches none now/);
    let planned = 0;
    const elsewhere = () => {
      planned++;
      return true;
    };
    checkNothingEmptied(repos, none, previous, elsewhere);
    checkNothingEmptied(repos, { entries: [{ gitRepo: "apps" }], skipped: [] } as never, previous, elsewhere);
    expect(planned).to.equal(1);
  });

  it("whether a GitRepo deploys to another shard's clusters is matched as the plan matches, doNotDeploy included, and only when asked", () => {
    const target = (over: object = {}) => ({ name: "all", clusterSelector: {}, ...over });
    const bundle = (gitRepo: string, over: object = {}) => ({ gitRepo, name: "a", targets: [target(over)], restrictions: [target()] }) as unknown as Bundle;
    const stack = (otherLabels: Record<string, string>) => ({
      clusters: [{ name: "eu-1", labels: { region: "eu" } }],
      clusterGroups: [],
      shard: { otherClusters: [{ name: "us-1", labels: otherLabels }] },
    });
    const targeting = decideTargets(stack({ region: "us" }), [bundle("apps"), bundle("off", { doNotDeploy: true })]);
    expect(["apps", "off", "none"].map(targeting.deploysElsewhere)).to.deep.equal([true, false, false]);
    const narrow = decideTargets(stack({ region: "us" }), [bundle("apps", { clusterSelector: { matchLabels: { region: "eu" } } })]);
    expect(narrow.deploysElsewhere("apps")).to.equal(false);
  });
});

describe("shards: merged reports", () => {
  const run = (shard: string, over: Partial<ShardRun>): ShardRun => ({ shard, stack: `prod.${shard}`, exitCode: 0, durationMs: 1, finishedAt: 1, ...over });
  const rollup = (state: "Ready" | "NotReady", ready: number, desired: number) => ({ state, readyClusters: ready, desiredReadyClusters: desired });

  it("status: deployments and clusters side by side, roll-ups added up with the worse state", () => {
    const a = {
      stack: "prod.eu",
      deployments: [],
      clusters: [{ cluster: "eu-1", state: "Ready" as const, readyBundles: 1, desiredReadyBundles: 1 }],
      bundles: [{ gitRepo: "apps", bundle: "a", ...rollup("Ready", 1, 1) }],
      gitRepos: [{ gitRepo: "apps", commit: "c", ...rollup("Ready", 1, 1) }],
    };
    const b = {
      stack: "prod.us",
      deployments: [],
      clusters: [{ cluster: "us-1", state: "NotReady" as const, readyBundles: 0, desiredReadyBundles: 1 }],
      bundles: [{ gitRepo: "apps", bundle: "a", ...rollup("NotReady", 0, 1) }],
      gitRepos: [{ gitRepo: "apps", commit: "c", ...rollup("NotReady", 0, 1) }],
    };
    const m = mergeStatus("prod", [b, a]);
    expect(m.clusters.map((c) => c.cluster)).to.deep.equal(["eu-1", "us-1"]);
    expect(m.bundles).to.deep.equal([{ gitRepo: "apps", bundle: "a", ...rollup("NotReady", 1, 2) }]);
    expect(m.gitRepos).to.deep.equal([{ gitRepo: "apps", commit: "c", ...rollup("NotReady", 1, 2) }]);
  });

  it("the PR summary names every shard and its result, then each shard's summary one heading level down", () => {
    const md = mergeSummaries("prod", [
      run("eu", { result: { ok: true, changes: { same: 3, delete: 2 }, summaryMarkdown: "## pulumi-fleet preview of stack `prod.eu`\n\n### Prunes\n" } }),
      run("us", { exitCode: 1, result: { ok: false, error: "cluster us-1 | unreachable\nmore" } }),
    ]);
    expect(md).to.contain("| eu | prod.eu | ok | 2 delete |");
    expect(md).to.contain("| us | prod.us | **failed**: cluster us-1 \\| unreachable | none |");
    expect(md).to.contain("### pulumi-fleet preview of stack `prod.eu`\n\n#### Prunes");
  });

  it("the environment's exit code: 3 when every failed shard only could not read a cluster, 1 when any failed otherwise", () => {
    expect(shardsError("up", "prod", [])).to.equal(undefined);
    const unread = shardsError("preview", "prod", [run("eu", { exitCode: 3 }), run("us", { exitCode: 3 })]);
    expect(exitCodeOf(unread)).to.equal(3);
    expect(unread!.message).to.equal("preview of environment prod: shard(s) eu, us could not read a cluster; every other cluster was done");
    const mixed = shardsError("up", "prod", [run("eu", { exitCode: 3 }), run("us", { exitCode: 1 })]);
    expect(exitCodeOf(mixed)).to.equal(1);
    expect(mixed!.message).to.equal("up failed on shard(s) eu, us; the other shards ran to the end");
  });

  it("deploy events of every shard once, each with its shard", () => {
    const e = (cluster: string) => ({
      event: "deployed" as const,
      bundle: "a",
      cluster,
      gitRepo: "apps",
      deploymentId: "d",
      commit: "c",
      created: 1,
      updated: 0,
      replaced: 0,
      deleted: 0,
    });
    expect(
      mergeEvents([run("us", { result: { ok: true, events: [e("us-1")] } }), run("eu", { result: { ok: true, events: [e("eu-1")] } })]).map(
        (x) => `${x.shard} ${x.cluster}`,
      ),
    ).to.deep.equal(["eu eu-1", "us us-1"]);
  });
});

describe("shards: Pulumi Kubernetes Operator Stack resources", () => {
  it("one per shard stack, with the backend and passphrase from a Secret and nothing destroyed on deletion", () => {
    const [s] = operatorStackObjects(["prod.eu"], { repo: "https://git.example.com/fleet.git" }) as any[];
    expect(s.metadata).to.deep.include({ name: "pulumi-fleet-prod-eu", namespace: "pulumi-fleet" });
    expect(s.spec).to.deep.include({ stack: "prod.eu", projectRepo: "https://git.example.com/fleet.git", branch: "main", destroyOnFinalize: false });
    expect(s.spec.envRefs.PULUMI_CONFIG_PASSPHRASE).to.deep.equal({
      type: "Secret",
      secret: { name: "pulumi-fleet-backend", key: "PULUMI_CONFIG_PASSPHRASE" },
    });
    expect(JSON.stringify(s)).to.not.match(/passphrase":"[^{]/i);
  });

  it("a Kubernetes name of its own for each shard of a long shardBy value (cut alone, the shards' numbers would be lost), two stacks one name refused", () => {
    const value = "a".repeat(50);
    const names = (operatorStackObjects([`prod.${value}-1`, `prod.${value}-2`], { repo: "r" }) as any[]).map((s) => s.metadata.name as string);
    expect(new Set(names).size).to.equal(2);
    for (const n of names)
      expect(n)
        .to.match(/^pulumi-fleet-prod-a+-[0-9a-f]{8}$/)
        .and.to.have.length.at.most(63);
    expect(() => operatorStackObjects(["prod.eu", "prod-eu"], { repo: "r" })).to.throw(
      /stacks prod\.eu and prod-eu would both be the operator Stack pulumi-fleet-prod-eu/,
    );
  });
});

describe("shards: which shards an up can leave out (inputs fingerprint)", () => {
  const define = (dir: string, over: { prodTarget?: Record<string, unknown>; dev2Labels?: Record<string, string> } = {}) => {
    const config = {
      "pulumi-fleet:fleetVersion": "0.13.1",
      "pulumi-fleet:agent": { apiServerURL: "https://fleet.example.com" },
      "pulumi-fleet:clusters": [
        { name: "dev-1", labels: { env: "dev", region: "eu" } },
        { name: "prod-1", labels: { env: "prod", region: "eu" } },
        { name: "dev-2", labels: over.dev2Labels ?? { env: "dev", region: "us" } },
      ],
      "pulumi-fleet:gitRepos": [
        {
          name: "examples",
          repo: path.join(PROJECT_DIR, "examples"),
          paths: ["simple"],
          targets: [
            { name: "dev", clusterSelector: { matchLabels: { env: "dev" } } },
            { name: "prod", clusterSelector: { matchLabels: { env: "prod" } }, ...over.prodTarget },
          ],
        },
      ],
      "pulumi-fleet:shards": [
        { name: "eu", clusterSelector: { matchLabels: { region: "eu" } } },
        { name: "us", clusters: ["dev-2"] },
      ],
    };
    fs.writeFileSync(stackFilePath(dir, "env"), YAML.stringify({ config }));
    for (const s of ["eu", "us"]) fs.writeFileSync(stackFilePath(dir, `env.${s}`), shardFileText(dir, "env", s));
  };
  const prints = async (dir: string) => ({ eu: (await shardInputs(dir, "env.eu")).fingerprint, us: (await shardInputs(dir, "env.us")).fingerprint });

  it("a target edit changes only the shards whose plan it changes; a cluster's own edit only its shard; the same inputs give the same fingerprint", async () => {
    const dir = tempDir("pf-shard-inputs-");
    define(dir);
    const before = await prints(dir);
    expect(await prints(dir)).to.deep.equal(before);
    define(dir, { prodTarget: { clusterName: "nowhere" } }); // prunes prod-1 (shard eu)
    const edited = await prints(dir);
    expect(edited.us).to.equal(before.us);
    expect(edited.eu).to.not.equal(before.eu);
    define(dir, { dev2Labels: { env: "dev", region: "us", tier: "gold" } });
    const relabelled = await prints(dir);
    expect(relabelled.eu).to.equal(before.eu);
    expect(relabelled.us).to.not.equal(before.us);
    // The decision (its shards sharing one renderer and the parsed files) gives each shard the fingerprint it gets alone.
    const decided = await decideShards(
      dir,
      ["eu", "us"].map((s) => ({ shard: s, stack: `env.${s}` })),
      false,
    );
    expect(decided.map((d) => d.fingerprint)).to.deep.equal([relabelled.eu, relabelled.us]);
  });

  it("a shard whose clusters name no kubeconfig and no context runs again when the ambient kubeconfig changes (they are reached through its current context)", async () => {
    const dir = tempDir("pf-shard-inputs-");
    define(dir); // no cluster has a kubeconfig or a context of its own
    const ambient = path.join(tempDir("pf-shard-kube-"), "config");
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = ambient;
    try {
      fs.writeFileSync(ambient, KUBECONFIG);
      const before = await prints(dir);
      fs.writeFileSync(ambient, KUBECONFIG.replace("127.0.0.1:1", "127.0.0.1:2")); // another server, same file
      const after = await prints(dir);
      expect(after.eu).to.not.equal(before.eu);
      expect(after.us).to.not.equal(before.us);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  it("a shard with a helm.valuesFrom bundle always runs: its values are on the cluster, which the fingerprint does not read", async () => {
    const dir = tempDir("pf-shard-inputs-");
    define(dir);
    expect((await shardInputs(dir, "env.eu")).mustRun).to.equal(undefined);
    const repo = tempDir("pf-shard-repo-");
    fs.mkdirSync(path.join(repo, "app"));
    fs.writeFileSync(path.join(repo, "app", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
    fs.writeFileSync(path.join(repo, "app", "fleet.yaml"), "helm:\n  valuesFrom:\n  - configMapKeyRef: {name: settings}\n");
    const file = stackFilePath(dir, "env");
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(path.join(PROJECT_DIR, "examples"), repo).replace("- simple", "- app"));
    for (const s of ["eu", "us"]) fs.writeFileSync(stackFilePath(dir, `env.${s}`), shardFileText(dir, "env", s));
    expect((await shardInputs(dir, "env.eu")).mustRun).to.match(/^bundle examples-app on (dev|prod)-1 has helm\.valuesFrom/);
  });

  it("a shard whose GitRepo or bundle its plan could not read here always runs: that change is in no fingerprint", async () => {
    const dir = tempDir("pf-shard-inputs-");
    define(dir);
    const file = stackFilePath(dir, "env");
    const original = fs.readFileSync(file, "utf8");
    const regenerate = () => {
      for (const s of ["eu", "us"]) fs.writeFileSync(stackFilePath(dir, `env.${s}`), shardFileText(dir, "env", s));
    };
    // A GitRepo that cannot be read here (as one whose credentials are secrets of the stack file, which the decision does not decrypt).
    fs.writeFileSync(file, original.replace(path.join(PROJECT_DIR, "examples"), path.join(dir, "no-such-repo")));
    regenerate();
    expect((await shardInputs(dir, "env.eu")).mustRun).to.match(/^gitRepo examples could not be read here/);
    // A bundle that fails to plan.
    const repo = tempDir("pf-shard-repo-");
    fs.mkdirSync(path.join(repo, "app"));
    fs.writeFileSync(path.join(repo, "app", "fleet.yaml"), "helm: [not, a, mapping]\n");
    fs.writeFileSync(file, original.replace(path.join(PROJECT_DIR, "examples"), repo).replace("- simple", "- app"));
    regenerate();
    expect((await shardInputs(dir, "env.eu")).mustRun).to.equal("a bundle of its plan could not be read or planned");
  });
});

describe("shards: the inputs a file backend's last update recorded, read without the CLI", () => {
  const layout = () => {
    const fileDir = tempDir("pf-shard-recorded-");
    const history = path.join(fileDir, ".pulumi", "history", "pulumi-fleet", "env.eu");
    const stacksDir = path.join(fileDir, ".pulumi", "stacks", "pulumi-fleet");
    fs.mkdirSync(history, { recursive: true });
    fs.mkdirSync(stacksDir, { recursive: true });
    fs.writeFileSync(path.join(fileDir, ".pulumi", "meta.yaml"), "version: 1\n"); // stacks kept per project, as the CLI lays them out
    const entry = (ns: string, kind: string, result: string, gz = false) => {
      const text = JSON.stringify({ kind, result });
      fs.writeFileSync(path.join(history, `env.eu-${ns}.history.json${gz ? ".gz" : ""}`), gz ? gzipSync(text) : text);
    };
    const checkpoint = (inputs: unknown) =>
      fs.writeFileSync(
        path.join(stacksDir, "env.eu.json"),
        JSON.stringify({ version: 3, checkpoint: { latest: { resources: [{ type: "pulumi:pulumi:Stack", outputs: { inputs } }, { type: "x:y:Z" }] } } }),
      );
    return { fileDir, history, entry, checkpoint };
  };

  it("the root's inputs when the newest entry is a successful update; none after a refresh or a failure; the CLI's to answer when unreadable", () => {
    const b = layout();
    expect(recordedInFiles(b.fileDir, "env.eu")).to.deep.equal({}); // no history folder: nothing recorded
    fs.mkdirSync(b.history, { recursive: true });
    b.checkpoint("abc123");
    b.entry("1764000000000000000", "update", "succeeded");
    expect(recordedInFiles(b.fileDir, "env.eu")).to.deep.equal({ fingerprint: "abc123" });
    b.entry("1764000000000000001", "refresh", "succeeded", true); // newer, compressed
    expect(recordedInFiles(b.fileDir, "env.eu")).to.deep.equal({});
    b.entry("1764000000000000002", "update", "failed");
    expect(recordedInFiles(b.fileDir, "env.eu")).to.deep.equal({});
    b.entry("1764000000000000003", "update", "succeeded");
    b.checkpoint(undefined); // a plain `pulumi up` records no inputs
    expect(recordedInFiles(b.fileDir, "env.eu")).to.deep.equal({ fingerprint: undefined });
    fs.writeFileSync(path.join(b.history, "env.eu-1764000000000000004.history.json.zst"), "");
    expect(recordedInFiles(b.fileDir, "env.eu")).to.equal(undefined);
    fs.rmSync(path.join(b.history, "env.eu-1764000000000000004.history.json.zst"));
    expect(recordedInFiles(b.fileDir, "env.eu")).to.deep.equal({ fingerprint: undefined });
    fs.rmSync(path.join(b.fileDir, ".pulumi", "meta.yaml")); // a layout from before project folders: the CLI's to read
    expect(recordedInFiles(b.fileDir, "env.eu")).to.equal(undefined);
  });
});
