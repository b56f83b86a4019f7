import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { resolveSource } from "../../core/source/git";
import { FleetError } from "../../core/errors";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";

async function rejection(p: Promise<unknown>): Promise<FleetError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(FleetError);
    return err as FleetError;
  }
  throw new Error("expected a rejection");
}

describe("git source (real repositories)", () => {
  let cache: string;
  beforeEach(() => {
    cache = tempDir("pf-cache-");
  });

  it("checks out exactly the branch head into the cache, outside the repository", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a") });
    const src = await resolveSource(gitRepoConfig({ repo: repo.url() }), cache);
    expect(src.commit).to.equal(repo.head());
    expect(src.dir.startsWith(cache)).to.equal(true);
    expect(fs.readFileSync(path.join(src.dir, "a/cm.yaml"), "utf8")).to.contain("name: a");
    expect(src.fetched).to.equal(true);
  });

  it("a commit whose files expand past PULUMI_FLEET_MAX_TREE_MIB is refused before anything is written", async () => {
    // 3 MiB of zeros compresses to a few KiB in the push.
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a"), "big/zeros.yaml": "0".repeat(3 * 1024 * 1024) });
    process.env.PULUMI_FLEET_MAX_TREE_MIB = "2";
    try {
      const err = await rejection(resolveSource(gitRepoConfig({ name: "bomb", repo: repo.url() }), cache));
      expect(err.message).to.match(/gitRepo bomb: .*add up to 4 MiB, over the limit of 2 MiB per checkout \(PULUMI_FLEET_MAX_TREE_MIB; the largest is "big\/zeros\.yaml", 3 MiB\)/);
      expect(fs.existsSync(path.join(cache, "git")) ? fs.readdirSync(path.join(cache, "git"), { recursive: true }).filter((f) => String(f).includes("trees/")) : []).to.deep.equal([]);
    } finally {
      delete process.env.PULUMI_FLEET_MAX_TREE_MIB;
    }
    process.env.PULUMI_FLEET_MAX_ENTRIES = "1";
    try {
      const err = await rejection(resolveSource(gitRepoConfig({ name: "many", repo: repo.url() }), cache));
      expect(err.message).to.match(/gitRepo many: commit \w+ has 2 files, over the limit of 1 \(PULUMI_FLEET_MAX_ENTRIES\): nothing was written/);
    } finally {
      delete process.env.PULUMI_FLEET_MAX_ENTRIES;
    }
  });

  it("runs none of the runner's git filter drivers that a commit's .gitattributes chooses (git-lfs's would fetch with the runner's credentials)", async () => {
    const home = tempDir("pf-gitconfig-");
    const marker = path.join(home, "filter-ran");
    const globalConfig = path.join(home, ".gitconfig");
    const repo = new TestRepo({ ".gitattributes": "*.yaml filter=lfs\n", "cm.yaml": CONFIGMAP("a") });
    // As `git lfs install` configures it (required), with a smudge command that leaves a mark.
    fs.writeFileSync(globalConfig, `[filter "lfs"]\n\tsmudge = "touch ${marker}; cat"\n\tprocess = "touch ${marker}"\n\trequired = true\n`);
    // The source runs git with a minimal environment that keeps HOME: the runner's ~/.gitconfig.
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      const src = await resolveSource(gitRepoConfig({ repo: repo.url() }), cache);
      expect(fs.readFileSync(path.join(src.dir, "cm.yaml"), "utf8")).to.contain("name: a");
      expect(fs.existsSync(marker), "the filter ran").to.equal(false);
    } finally {
      if (saved === undefined) delete process.env.HOME;
      else process.env.HOME = saved;
    }
  });

  it("fetches nothing when the remote ref has not moved, and follows a branch that moved", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a") });
    const cfg = gitRepoConfig({ repo: repo.url() });
    await resolveSource(cfg, cache);
    const warm = await resolveSource(cfg, cache);
    expect(warm.fetched).to.equal(false);
    const moved = repo.commit({ "cm.yaml": CONFIGMAP("b") });
    const after = await resolveSource(cfg, cache);
    expect(after.commit).to.equal(moved);
    expect(after.fetched).to.equal(true);
    expect(fs.readFileSync(path.join(after.dir, "cm.yaml"), "utf8")).to.contain("name: b");
  });

  it("resolves tags, full and abbreviated commits, and named branches", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("v1") });
    const first = repo.head();
    repo.git("tag", "-a", "v1.0.0", "-m", "release");
    repo.git("checkout", "-q", "-b", "feature");
    const feature = repo.commit({ "cm.yaml": CONFIGMAP("feature") });
    repo.git("checkout", "-q", "master");
    repo.commit({ "cm.yaml": CONFIGMAP("v2") });
    expect((await resolveSource(gitRepoConfig({ repo: repo.url(), revision: "v1.0.0" }), cache)).commit).to.equal(first);
    expect((await resolveSource(gitRepoConfig({ repo: repo.url(), revision: first }), cache)).commit).to.equal(first);
    expect((await resolveSource(gitRepoConfig({ repo: repo.url(), revision: feature.slice(0, 10) }), tempDir())).commit).to.equal(feature);
    expect((await resolveSource(gitRepoConfig({ repo: repo.url(), branch: "feature" }), cache)).commit).to.equal(feature);
  });

  it("a full commit already in the cache needs no network", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a") });
    const sha = repo.head();
    await resolveSource(gitRepoConfig({ repo: repo.url() }), cache);
    fs.rmSync(repo.dir, { recursive: true, force: true });
    const src = await resolveSource(gitRepoConfig({ repo: repo.url(), revision: sha }), cache);
    expect(src.fetched).to.equal(false);
  });

  it("names the GitRepo and the reason for an unknown branch, revision or unreachable remote", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a") });
    const branch = await rejection(resolveSource(gitRepoConfig({ name: "apps", repo: repo.url(), branch: "nope" }), cache));
    expect(branch.message).to.contain("gitRepo apps").and.contain('branch "nope" not found');
    const rev = await rejection(resolveSource(gitRepoConfig({ name: "apps", repo: repo.url(), revision: "v9" }), cache));
    expect(rev.message).to.contain('revision "v9" is not a tag, branch or commit');
    const gone = await rejection(resolveSource(gitRepoConfig({ name: "apps", repo: "file:///nonexistent/repo.git" }), cache));
    expect(gone.message).to.contain("gitRepo apps").and.match(/does not appear to be a git repository|not found|No such/);
  });

  it("never shows a token in errors", async () => {
    const err = await rejection(resolveSource(gitRepoConfig({
      name: "private", repo: "http://127.0.0.1:9/private.git", auth: { username: "bot", token: "s3cr3t-token-value" },
    }), cache));
    expect(err.message).to.contain("gitRepo private");
    expect(err.message).not.to.contain("s3cr3t-token-value");
  });

  it("two resolutions at once share one cache without corrupting it", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a") });
    const cfg = gitRepoConfig({ repo: repo.url() });
    const results = await Promise.all([1, 2, 3, 4].map(() => resolveSource(cfg, cache)));
    for (const r of results) {
      expect(r.commit).to.equal(repo.head());
      expect(fs.readFileSync(path.join(r.dir, "cm.yaml"), "utf8")).to.contain("name: a");
    }
    expect(fs.existsSync(path.join(path.dirname(path.dirname(results[0].dir)), "lock"))).to.equal(false);
  });

  it("removes the SSH key file after use, whatever the outcome", async () => {
    const before = new Set(fs.readdirSync(require("node:os").tmpdir()).filter((n) => n.startsWith("pulumi-fleet-auth-")));
    await rejection(resolveSource(gitRepoConfig({
      repo: "ssh://git@127.0.0.1:9/repo.git", auth: { sshPrivateKey: "-----BEGIN KEY-----\nx\n-----END KEY-----", knownHosts: "127.0.0.1 ssh-ed25519 AAAA" },
    }), cache));
    const after = fs.readdirSync(require("node:os").tmpdir()).filter((n) => n.startsWith("pulumi-fleet-auth-") && !before.has(n));
    expect(after).to.deep.equal([]);
  });

  it("reads a plain directory in place, with a content hash as its revision", async () => {
    const dir = tempDir("pf-plain-");
    fs.writeFileSync(path.join(dir, "cm.yaml"), CONFIGMAP("a"));
    const cfg = gitRepoConfig({ repo: dir });
    const a = await resolveSource(cfg, cache);
    expect(a.dir).to.equal(dir);
    expect((await resolveSource(cfg, cache)).commit).to.equal(a.commit);
    fs.writeFileSync(path.join(dir, "cm.yaml"), CONFIGMAP("b"));
    expect((await resolveSource(cfg, cache)).commit).not.to.equal(a.commit);
  });
});
