/**
 * The operations library (automation/operations.ts) on the real engine in render mode: deploy events
 * once per real deploy and never for a no-op, the pull-request summary of a target edit (exactly the
 * expected prunes, with reasons, the same text twice), status, and failures that surface the error.
 */
import { expect } from "chai";
import { besidesProgress, timed } from "../support/progress-lines";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { formatDeployEvent } from "../../automation/reports/deploy-events";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { localStack, withoutProdTarget } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

const BUNDLES = ["examples-helm", "examples-kustomize", "examples-simple"];

describe("operations: events, PR summary, status (real engine, render mode)", function () {
  this.timeout(10 * 60_000);
  const work = tempDir("pf-ops-");
  const renderDir = path.join(work, "render");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  const options = (config: StackConfig): ops.OperationOptions => ({
    stack: "ops",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "ops" },
  });
  const a = () => localStack(renderDir);
  const b = () => withoutProdTarget(localStack(renderDir));

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
  });

  it("the first up reports one Deployed event per bundle deployment", async () => {
    const r = await ops.up(options(a()));
    const lines = r.events.map(formatDeployEvent);
    expect(lines).to.have.length(9);
    for (const cluster of ["dev-1", "dev-2", "prod-1"]) {
      for (const bundle of BUNDLES) {
        const e = r.events.find((x) => x.cluster === cluster && x.bundle === bundle)!;
        expect(e, `${bundle} on ${cluster}`).to.include({ event: "deployed", gitRepo: "examples" });
        expect(e.created).to.be.greaterThan(0);
        expect(e.deploymentId).to.match(/^s-[0-9a-f]+:[0-9a-f]{64}$/);
        expect(e.commit).to.match(/^dir-[0-9a-f]+$/); // examples/ is a plain directory, not a git checkout
      }
    }
    expect(lines[0]).to.match(
      /^Deployed bundle examples-helm to dev-1 deploymentID=s-[0-9a-f]+:[0-9a-f]{64} commit=dir-[0-9a-f]+ \(\d+ created, 0 updated, 0 deleted\)$/,
    );
  });

  it("a no-op up reports nothing", async () => {
    const r = await ops.up(options(a()));
    expect(r.events).to.deep.equal([]);
    expect(r.changes).to.not.have.any.keys("create", "update", "delete", "replace");
  });

  it("the PR summary of a target edit lists exactly the prod-1 prunes with their reason, the same text twice", async () => {
    const first = await ops.preview(options(b()));
    const second = await ops.preview(options(b()));
    expect(first.summaryMarkdown).to.equal(second.summaryMarkdown);
    expect(first.prunes.map((p) => `${p.cluster}/${p.bundle}`)).to.deep.equal(BUNDLES.map((x) => `prod-1/${x}`));
    for (const p of first.prunes) {
      expect(p.reason).to.equal("target `prod` was removed from GitRepo `examples`");
      expect(p.objects).to.be.greaterThan(0);
    }
    const md = first.summaryMarkdown;
    expect(md).to.contain("## pulumi-fleet preview of stack `ops`").and.contain("### Prunes");
    expect(md).to.contain("| `prod-1` | `examples-simple` |");
    expect(md).to.not.match(/\| `dev-[12]` \|/); // nothing else changes
    expect(md).to.not.contain("### Agents"); // the agent of a cluster that stays in the stack is untouched
    console.log(
      `      PR summary:\n${md
        .split("\n")
        .map((l) => `        ${l}`)
        .join("\n")}`,
    );
  });

  it("up of the edit reports one Pruned event per dropped deployment and nothing else", async () => {
    const r = await ops.up(options(b()));
    expect(r.events.map((e) => `${e.event} ${e.cluster}/${e.bundle}`)).to.deep.equal(BUNDLES.map((x) => `pruned prod-1/${x}`));
    for (const e of r.events) {
      expect(e.deleted).to.be.greaterThan(0);
      expect(formatDeployEvent(e)).to.match(
        new RegExp(`^Pruned bundle ${e.bundle} from prod-1 deploymentID=s-\\S+ commit=dir-[0-9a-f]+ \\(0 created, 0 updated, ${e.deleted} deleted\\)$`),
      );
    }
  });

  it("status: every deployment Ready, rolled up per bundle, GitRepo and cluster", async () => {
    const r = await ops.status(options(b()));
    expect(r.deployments.map((d) => `${d.cluster}/${d.bundle} ${d.state}`)).to.have.members(
      ["dev-1", "dev-2"].flatMap((c) => BUNDLES.map((x) => `${c}/${x} Ready`)),
    );
    expect(r.gitRepos).to.deep.equal([{ gitRepo: "examples", commit: r.gitRepos[0].commit, state: "Ready", readyClusters: 2, desiredReadyClusters: 2 }]);
    expect(r.clusters.find((c) => c.cluster === "prod-1")).to.include({ cluster: "prod-1", state: "Ready", readyBundles: 0, desiredReadyBundles: 0 });
  });

  it("status says Pending for a cluster targeted but not deployed yet", async () => {
    const r = await ops.status(options(a()));
    expect(r.deployments.filter((d) => d.cluster === "prod-1").map((d) => d.state)).to.deep.equal(["Pending", "Pending", "Pending"]);
    expect(r.gitRepos[0]).to.include({ state: "Pending", readyClusters: 2, desiredReadyClusters: 3 });
  });

  it("the CLI prints one Deployed line per deploy and writes them as JSON lines; a no-op up writes none", async () => {
    const env = { ...process.env, PULUMI_FLEET_STATE_DIR: path.join(work, "cli-local-state") };
    const run = (file: string) =>
      spawnSync(process.execPath, ["scripts/run-ts.js", "scripts/fleet.ts", "up", "--stack", "local", "--quiet", "--events-json", file], {
        cwd: PROJECT_DIR,
        encoding: "utf8",
        env,
      });
    const first = run(path.join(work, "events-1.jsonl"));
    expect(first.status, first.stderr).to.equal(0);
    const lines = fs
      .readFileSync(path.join(work, "events-1.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).to.have.length(9);
    expect(lines[0]).to.include({ event: "deployed", bundle: "examples-helm", cluster: "dev-1", gitRepo: "examples" });
    expect(lines[0].time).to.match(/^\d{4}-\d\d-\d\dT/);
    expect(first.stdout.split("\n").filter((l) => l.startsWith("Deployed bundle "))).to.have.length(9);
    const second = run(path.join(work, "events-2.jsonl"));
    expect(second.status, second.stderr).to.equal(0);
    expect(fs.readFileSync(path.join(work, "events-2.jsonl"), "utf8")).to.equal("");
    expect(second.stdout).to.not.contain("Deployed bundle");
  });

  it("a failed update exits non-zero with the error, from the library and the CLI", async () => {
    // The guard: a GitRepo that matched clusters must not silently match none.
    const none = { ...a(), gitRepos: a().gitRepos.map((r) => ({ ...r, targets: [{ name: "nowhere", clusterName: "no-such-cluster" }] })) };
    const err = await ops.up(options(none)).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).to.be.instanceOf(ops.OperationError);
    expect(err!.message).to.contain("up of stack ops failed").and.contain("examples");
    const cli = spawnSync(process.execPath, ["scripts/run-ts.js", "scripts/fleet.ts", "up", "--stack", "no-such-env", "--quiet"], {
      cwd: PROJECT_DIR,
      encoding: "utf8",
      env: { ...process.env, PULUMI_CONFIG_PASSPHRASE: "x", PULUMI_FLEET_STATE_DIR: path.join(work, "cli-state") },
    });
    expect(cli.status).to.equal(1);
    expect(cli.stderr).to.contain("stacks/Pulumi.no-such-env.yaml");
  });

  it("the CLI as npm runs it: a success prints no toolchain details; a failure one clear error and the log that holds the rest", () => {
    // The local stack's file, as a stack of its own (no salt: its own passphrase), in a directory of this test.
    const stacks = path.join(work, "cli-stacks");
    fs.mkdirSync(stacks, { recursive: true });
    const local = fs
      .readFileSync(path.join(PROJECT_DIR, "stacks/Pulumi.local.yaml"), "utf8")
      .replace(/^encryptionsalt:.*$/m, "")
      .replace("renderDir: .pulumi-fleet/render/local", `renderDir: ${path.join(work, "cli-render")}`)
      .replace("repo: ./examples", `repo: ${path.join(PROJECT_DIR, "examples")}`);
    const write = (text: string) => fs.writeFileSync(path.join(stacks, "Pulumi.cli.yaml"), text);
    const { PULUMI_BACKEND_URL: _b, PULUMI_FLEET_VERBOSE: _v, ...inherited } = process.env;
    const env = { ...inherited, PULUMI_FLEET_STACKS_DIR: stacks, PULUMI_FLEET_STATE_DIR: path.join(work, "cli-state"), PULUMI_CONFIG_PASSPHRASE: "cli" };
    const npmUp = (extra: Record<string, string> = {}) =>
      timed(() =>
        spawnSync("bash", ["scripts/setup.sh", "node", "scripts/run-ts.js", "scripts/fleet.ts", "up", "--stack", "cli"], {
          cwd: PROJECT_DIR,
          encoding: "utf8",
          env: { ...env, ...extra },
        }),
      );
    const toolCache = /pulumi-fleet\/tools\//;
    write(local);
    const ok = npmUp();
    expect(ok.status, ok.stderr).to.equal(0);
    expect(besidesProgress(ok.stderr, ok.elapsedMs), "no toolchain details, no progress on a short run").to.equal("");
    expect(ok.stdout).to.contain("up of stack cli succeeded").and.not.match(toolCache);

    const expectOneError = (r: ReturnType<typeof npmUp>, error: RegExp) => {
      expect(r.status).to.equal(1);
      const [line, details, ...rest] = r.stderr.trimEnd().split("\n");
      expect(line).to.match(error);
      expect(rest, r.stderr).to.deep.equal([]);
      expect(r.stdout + r.stderr)
        .to.not.contain("Unhandled exception")
        .and.not.match(/\n\s+at |Command failed|err\?:/)
        .and.not.match(toolCache);
      const log = /^details: (.*)$/.exec(details)?.[1] ?? "";
      expect(path.dirname(log)).to.equal(path.join(work, "logs"));
      return fs.readFileSync(log, "utf8");
    };
    // The guard against a GitRepo that matched clusters and matches none: thrown by the program, inside the engine.
    write(local.replace(/targets:[\s\S]*$/, "targets:\n        - name: nowhere\n          clusterName: no-such-cluster\n"));
    const guard = expectOneError(
      npmUp(),
      /^error: up of stack cli failed: gitRepo examples: targets: matched 3 cluster\(s\) in the last deployment .* matches none now/,
    );
    expect(guard).to.match(/Command failed with exit code 1: \S+pulumi up/); // the Automation API's whole error, kept in the log
    const wrong = expectOneError(
      npmUp({ PULUMI_CONFIG_PASSPHRASE: "not-cli" }),
      /^error: stack cli: wrong passphrase: PULUMI_CONFIG_PASSPHRASE .* does not decrypt this stack's secrets$/,
    );
    expect(wrong).to.contain("incorrect passphrase");
  });
});
