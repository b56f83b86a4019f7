/**
 * The deploy result on the commit against a real Gitea (tools/build-gitea.sh builds it; not part of
 * `npm test`, whose e2e tests use a local server answering the APIs' documented shapes instead: the
 * build takes minutes). Run by hand:
 *   npx mocha --config test/.mocharc.json --timeout 1800000 test/git-hosts/commit-status-gitea.test.ts
 * Real `up`s in render mode deploy a Gitea repository's merged pull request; the statuses and the
 * one comment are read back from Gitea's own API. Nothing skips: without the binary the build runs.
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
import { PROJECT_DIR } from "../../core/base/project-dir";
import { localStack } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";
import { Gitea, startGitea } from "../support/gitea";

const CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  k: v\n";
const b64 = (s: string) => Buffer.from(s).toString("base64");

/** Gitea answers a status's state as `status` (it is posted as `state`). */
interface Status {
  status: string;
  context: string;
  description: string;
}

describe("commit status: a real Gitea reads back what real ups posted (render mode)", function () {
  this.timeout(30 * 60_000);
  const work = tempDir("pf-commit-status-gitea-");
  let gitea: Gitea;
  const warnings: string[] = [];

  const options = (): ops.OperationOptions => {
    const base = localStack(path.join(work, "render"));
    const targets = base.gitRepos[0].targets;
    const config: StackConfig = {
      ...base,
      gitRepos: [gitRepoEntry("apps", `${gitea.url}/${gitea.user}/apps.git`, { targets, branch: "main" })],
      commitStatus: { host: "gitea", apiUrl: gitea.apiUrl, tokenFromEnv: "PF_TEST_GITEA_TOKEN", pullRequestComment: true },
    };
    return {
      stack: "gitea",
      stateDir: path.join(work, "state"),
      stackConfigDir: path.join(work, "stacks"),
      config,
      deploy: { cacheRoot: path.join(work, "git-cache") },
      env: { PULUMI_CONFIG_PASSPHRASE: "gitea" },
      onWarning: (m) => warnings.push(m),
    };
  };
  const statuses = async (sha: string) => (await gitea.api("GET", `/repos/${gitea.user}/apps/commits/${sha}/statuses`)) as Status[];
  const combined = async (sha: string) => ((await gitea.api("GET", `/repos/${gitea.user}/apps/commits/${sha}/status`)) as { state: string }).state;
  const comments = async (n: number) => (await gitea.api("GET", `/repos/${gitea.user}/apps/issues/${n}/comments`)) as { body: string }[];
  const head = async () => ((await gitea.api("GET", `/repos/${gitea.user}/apps/branches/main`)) as { commit: { id: string } }).commit.id;

  /** A change on a branch, merged by a pull request: the merge commit on main, and the pull request's number. */
  async function mergedChange(branch: string, file: string, content: string): Promise<{ sha: string; pull: number }> {
    await gitea.api("POST", `/repos/${gitea.user}/apps/contents/${file}`, {
      content: b64(content),
      message: `add ${file}`,
      branch: "main",
      new_branch: branch,
    });
    const pr = (await gitea.api("POST", `/repos/${gitea.user}/apps/pulls`, { head: branch, base: "main", title: `change ${branch}` })) as { number: number };
    await gitea.api("POST", `/repos/${gitea.user}/apps/pulls/${pr.number}/merge`, { Do: "merge" });
    return { sha: await head(), pull: pr.number };
  }

  before(async function () {
    this.timeout(60 * 60_000);
    toolchain();
    const bin = execFileSync("bash", [path.join(PROJECT_DIR, "tools/build-gitea.sh"), "--path"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
    gitea = await startGitea(bin);
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    await gitea.api("POST", "/user/repos", { name: "apps", auto_init: true, default_branch: "main" });
    process.env.PF_TEST_GITEA_TOKEN = gitea.token;
  });
  after(async () => {
    delete process.env.PF_TEST_GITEA_TOKEN;
    await gitea?.stop();
  });

  it("a merged pull request's commit gets success and the pull request one comment; a no-op up sends nothing again, and a repeated result edits the comment in place", async () => {
    const { sha, pull } = await mergedChange("feature", "web/configmap.yaml", CONFIGMAP);
    const r = await ops.up(options());
    expect(r.commits).to.include({ apps: sha });
    expect(warnings.filter((w) => w.includes("commitStatus"))).to.deep.equal([]);
    const [s] = await statuses(sha);
    expect(s).to.include({ status: "success", context: "pulumi-fleet/gitea", description: "3/3 bundle deployment(s) Ready on 3 cluster(s)" });
    expect(await combined(sha)).to.equal("success");
    const first = await comments(pull);
    expect(first).to.have.length(1);
    expect(first[0].body.startsWith(commentMarker("gitea"))).to.equal(true);
    expect(first[0].body).to.include("| `dev-1` | 1 | 1 | 0 | 0 |");

    await ops.up(options());
    expect(await comments(pull)).to.have.length(1);
    expect(await combined(sha)).to.equal("success");

    // Without the record of what was posted for the commit (the comments' author kept, as later ups keep it), the same
    // result is sent again: the comment is found by its marker and its author, and edited in place.
    const record = path.join(work, "state", "commit-status.gitea.json");
    const kept = JSON.parse(fs.readFileSync(record, "utf8")) as Record<string, string>;
    expect(kept["comment-author"]).to.be.a("string");
    fs.writeFileSync(record, JSON.stringify({ "comment-author": kept["comment-author"] }));
    await ops.up(options());
    const again = await comments(pull);
    expect(again).to.have.length(1);
    expect(again[0].body).to.equal(first[0].body);
    expect(await statuses(sha)).to.have.length(2); // Gitea keeps each post; the combined state reads the newest per context
  });

  it("a merged change that breaks the bundle: failure on its commit, its own pull request's comment says why", async () => {
    const { sha, pull } = await mergedChange("broken", "web/fleet.yaml", "defaultNamespace: [unclosed\n");
    await ops.up(options()).then(
      () => expect.fail("the up should fail on the broken bundle"),
      () => undefined,
    );
    expect(await combined(sha)).to.equal("failure");
    const [s] = await statuses(sha);
    expect(s.description).to.include("fleet.yaml");
    const c = await comments(pull);
    expect(c).to.have.length(1);
    expect(c[0].body).to.include("**Failed:**");
  });
});
