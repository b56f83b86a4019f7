/**
 * The deploy result on the commit through real `up`s (real engine, render mode, a real git remote over
 * smart HTTP): each up posts its commit's status to a local server answering Gitea's API, and keeps one
 * pull-request comment updated in place; a commit whose bundle fails gets `failure` (the up fails
 * alone, the status is still posted); a GitRepo not on the host is skipped with a warning.
 */
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { gitRepoEntry } from "../../core/config/git-repo";
import { commentMarker } from "../../automation/commit-status/comment";
import { localStack } from "../support/fleet-fixtures";
import { tempDir, TestRepo } from "../support/git-fixtures";
import { fakeGitHost, FakeHost } from "../support/git-host-api";

const TOKEN = "gitea-token-5e2f1c0d9a8b";
const CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  k: v\n";

describe("commit status: real ups post the deployed commit's result (render mode, Gitea's API)", function () {
  this.timeout(10 * 60_000);
  const work = tempDir("pf-commit-status-");
  const gitRoot = path.join(work, "git");
  const bare = path.join(gitRoot, "acme", "apps.git");
  const source = new TestRepo({ "web/configmap.yaml": CONFIGMAP });
  let host: FakeHost;
  const warnings: string[] = [];

  const push = () =>
    execFileSync("git", ["push", "-q", "--force", bare, "HEAD:master"], { cwd: source.dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });

  const options = (): ops.OperationOptions => {
    const base = localStack(path.join(work, "render"));
    const examples = base.gitRepos[0];
    const config: StackConfig = {
      ...base,
      gitRepos: [
        examples,
        gitRepoEntry("apps", `http://127.0.0.1:${new URL(host.apiUrl).port}/acme/apps.git`, { targets: examples.targets, branch: "master" }),
      ],
      commitStatus: { host: "gitea", apiUrl: host.apiUrl, tokenFromEnv: "PF_TEST_GITEA_TOKEN", pullRequestComment: true },
    };
    return {
      stack: "cs",
      stateDir: path.join(work, "state"),
      stackConfigDir: path.join(work, "stacks"),
      config,
      deploy: { cacheRoot: path.join(work, "git-cache") },
      env: { PULUMI_CONFIG_PASSPHRASE: "cs" },
      onWarning: (m) => warnings.push(m),
    };
  };

  before(async function () {
    this.timeout(60 * 60_000);
    toolchain();
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    fs.mkdirSync(path.dirname(bare), { recursive: true });
    execFileSync("git", ["init", "-q", "--bare", bare]);
    push();
    host = await fakeGitHost("gitea", gitRoot);
    process.env.PF_TEST_GITEA_TOKEN = TOKEN;
  });
  after(async () => {
    delete process.env.PF_TEST_GITEA_TOKEN;
    await host?.close();
  });

  it("an up posts success on the deployed commit, and creates the pull request's comment", async () => {
    const sha = source.head();
    host.pulls.set(sha, [3]);
    const r = await ops.up(options());
    expect(r.commits).to.include({ apps: sha });
    const statuses = host.statuses.get(`acme/apps@${sha}`);
    expect(statuses, JSON.stringify(host.requests.map((x) => `${x.method} ${x.path}`))).to.have.length(1);
    expect(statuses![0]).to.deep.include({ state: "success", context: "pulumi-fleet/cs" });
    expect(statuses![0].description).to.match(/^3\/3 bundle deployment\(s\) Ready on 3 cluster\(s\)$/);
    const status = host.requests.find((x) => x.path.includes("/statuses/"))!;
    expect(status.headers.authorization).to.equal(`token ${TOKEN}`);
    expect(host.comments.get(3)).to.have.length(1);
    expect(host.comments.get(3)![0].body.startsWith(commentMarker("cs"))).to.equal(true);
    // A no-op up: the same result is not sent again (commit-status.<stack>.json beside the state remembers it).
    const sent = host.requests.length;
    await ops.up(options());
    expect(host.requests.length).to.equal(sent);
    expect(fs.readdirSync(path.join(work, "state"))).to.include("commit-status.cs.json");
    // The examples GitRepo is a local directory: skipped, said, never guessed.
    expect([...new Set(warnings.filter((w) => w.includes("commitStatus")))]).to.deep.equal([
      "warning: stack cs: commitStatus: GitRepo examples: its repo is not a remote URL: no status posted for it",
    ]);
  });

  it("a commit whose bundle fails gets failure, and the same pull request's comment is updated in place", async () => {
    const sha = source.commit({ "web/fleet.yaml": "defaultNamespace: [unclosed\n" }, "break the bundle");
    push();
    host.pulls.set(sha, [3]);
    const err = await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err, "the up fails alone on the broken bundle").to.be.instanceOf(Error);
    const statuses = host.statuses.get(`acme/apps@${sha}`);
    expect(statuses).to.have.length(1);
    expect(statuses![0]).to.deep.include({ state: "failure", context: "pulumi-fleet/cs" });
    expect(statuses![0].description, String(statuses![0].description)).to.include("fleet.yaml");
    const comments = host.comments.get(3)!;
    expect(comments).to.have.length(1);
    expect(comments[0].body).to.include("failed");
    expect(host.requests.filter((x) => x.method === "PATCH")).to.have.length(1);
  });
});
