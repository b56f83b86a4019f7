import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { resolveSource } from "../../core/source/git";
import { KEEP_TREES, pinnedRef, refsToDrop, sweepUnusedStores } from "../../core/source/git-cache";
import { FleetError } from "../../core/base/errors";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { rejectionWith } from "../support/rejection";
import { withEnv } from "../support/env";

/** The FleetError resolving a source is rejected with. */
const rejection = (p: Promise<unknown>) => rejectionWith(p, FleetError);

/** The URL's object store in a cache (one per URL). */
function storeOf(cache: string): string {
  const [dir] = fs.readdirSync(path.join(cache, "git"));
  return path.join(cache, "git", dir, "repo.git");
}
const inStore = (store: string, ...args: string[]) =>
  execFileSync("git", ["--git-dir", store, ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH!, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  }).trim();

describe("git source bounds: shallow, bounded fetches and a pruned cache", () => {
  let cache: string;
  beforeEach(() => {
    cache = tempDir("pf-cache-");
  });

  it("fetches a branch tip, and a full commit behind it, as that one commit (no history)", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a") });
    const first = repo.head();
    repo.commit({ "cm.yaml": CONFIGMAP("b") });
    repo.commit({ "cm.yaml": CONFIGMAP("c") });
    await resolveSource(gitRepoConfig({ repo: repo.url() }), cache);
    expect(inStore(storeOf(cache), "rev-list", "--count", "--all")).to.equal("1");
    const other = tempDir("pf-cache-");
    const old = await resolveSource(gitRepoConfig({ repo: repo.url(), revision: first }), other);
    expect(old.commit).to.equal(first);
    expect(old.warnings).to.deep.equal([]);
    expect(inStore(storeOf(other), "rev-list", "--count", "--all")).to.equal("1");
  });

  it("a fetch that brings more than PULUMI_FLEET_MAX_FETCH_MIB fails the GitRepo and leaves no store", async () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("a"), "blob.bin": randomBytes(3 * 1024 * 1024).toString("base64") });
    const err = await withEnv({ PULUMI_FLEET_MAX_FETCH_MIB: "1" }, () => rejection(resolveSource(gitRepoConfig({ name: "huge", repo: repo.url() }), cache)));
    expect(err.message).to.match(
      /^gitRepo huge: the fetch brought more than 1 MiB \(PULUMI_FLEET_MAX_FETCH_MIB\): it was stopped; this URL's cache was removed$/,
    );
    expect(fs.existsSync(storeOf(cache))).to.equal(false);
    // Within the bound, the same remote is read.
    expect((await resolveSource(gitRepoConfig({ repo: repo.url() }), cache)).commit).to.equal(repo.head());
  });

  it("a remote that does not answer is given up at PULUMI_FLEET_GIT_TIMEOUT_SECONDS, with every process git started", async function () {
    this.timeout(20_000);
    const sockets = new Set<net.Socket>();
    const server = net.createServer((s) => {
      sockets.add(s);
      s.resume(); // read, so that the peer's close is seen
      s.on("close", () => sockets.delete(s));
    }); // accepts, never answers
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const started = Date.now();
      const err = await withEnv({ PULUMI_FLEET_GIT_TIMEOUT_SECONDS: "1" }, () =>
        rejection(resolveSource(gitRepoConfig({ name: "slow", repo: `http://127.0.0.1:${port}/r.git` }), cache)),
      );
      expect(err.message).to.equal("gitRepo slow: git ls-remote did not finish within 1 s (PULUMI_FLEET_GIT_TIMEOUT_SECONDS): it was stopped");
      expect(Date.now() - started).to.be.below(5_000);
      // git's HTTP helper held the connection: it is closed because the whole process group was killed.
      const deadline = Date.now() + 2_000;
      while (sockets.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(sockets.size, "connections left open by a surviving helper").to.equal(0);
    } finally {
      for (const s of sockets) s.destroy();
      server.close();
    }
  });

  it("after a fetch the store keeps only the commits of the kept trees", async function () {
    this.timeout(60_000);
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("v0") });
    const cfg = gitRepoConfig({ repo: repo.url() });
    const commits = [(await resolveSource(cfg, cache)).commit];
    for (let i = 1; i <= KEEP_TREES + 1; i++) {
      repo.commit({ "cm.yaml": CONFIGMAP(`v${i}`) });
      commits.push((await resolveSource(cfg, cache)).commit);
    }
    const store = storeOf(cache);
    const kept = commits.slice(-KEEP_TREES);
    expect(inStore(store, "for-each-ref", "--format=%(refname)").split("\n").sort()).to.deep.equal(kept.map(pinnedRef).sort());
    expect(inStore(store, "rev-list", "--count", "--all")).to.equal(String(KEEP_TREES));
    expect(() => inStore(store, "cat-file", "-e", commits[0])).to.throw();
    expect(inStore(store, "count-objects", "-v")).to.match(/^count: 0$/m);
  });

  it("refsToDrop keeps exactly the pins of the kept commits", () => {
    const a = "a".repeat(40);
    const b = "b".repeat(40);
    expect(refsToDrop([pinnedRef(a), pinnedRef(b), "refs/fleet/incoming", "refs/tags/v1", "refs/fleet/all/main"], [a])).to.deep.equal([
      pinnedRef(b),
      "refs/fleet/incoming",
      "refs/tags/v1",
      "refs/fleet/all/main",
    ]);
  });

  it("removes the stores of URLs unused for PULUMI_FLEET_GIT_CACHE_DAYS, never one in use or recently used", async () => {
    const root = path.join(cache, "git");
    const make = (name: string, daysAgo: number) => {
      const dir = path.join(root, name);
      fs.mkdirSync(path.join(dir, "repo.git"), { recursive: true });
      fs.writeFileSync(path.join(dir, "used"), "");
      const t = new Date(Date.now() - daysAgo * 86_400_000);
      fs.utimesSync(path.join(dir, "used"), t, t);
      return dir;
    };
    const old = make("old", 40);
    const recent = make("recent", 1);
    const locked = make("locked", 40);
    fs.mkdirSync(path.join(locked, "lock"));
    fs.writeFileSync(path.join(locked, "lock", "owner"), String(process.pid));
    expect(await sweepUnusedStores(root, 30 * 86_400_000)).to.deep.equal([old]);
    expect(fs.existsSync(old)).to.equal(false);
    expect(fs.existsSync(path.join(recent, "repo.git"))).to.equal(true);
    expect(fs.existsSync(path.join(locked, "repo.git"))).to.equal(true);
  });
});
