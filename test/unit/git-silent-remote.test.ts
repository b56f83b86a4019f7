/**
 * A remote that accepts the connection and never answers, read with real git (http:// and git://):
 * it costs its own GitRepo the low-speed time (PULUMI_FLEET_GIT_LOW_SPEED_SECONDS), not the overall
 * timeout, and every other GitRepo is read meanwhile (core/plan/pipeline.ts readSources).
 */
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { resolveSource } from "../../core/source/git";
import { remoteHead } from "../../core/source/remote-head";
import { readSources } from "../../core/plan/pipeline";
import { settleLimited } from "../../core/base/settle-limited";
import { gitBounds } from "../../core/source/git-bounds";
import { FleetError } from "../../core/base/errors";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { rejectionWith } from "../support/rejection";
import { withEnv } from "../support/env";
import { silentRemote, SilentRemote } from "../support/silent-remote";

/** The overall timeout stays at its default (600 s): only the low-speed bound can end these reads in time. */
const LOW_SPEED = { PULUMI_FLEET_GIT_LOW_SPEED_SECONDS: "2" };

describe("git source: a silent remote costs its own GitRepo the low-speed time", function () {
  this.timeout(30_000);
  let remote: SilentRemote;
  let cache: string;
  beforeEach(async () => {
    remote = await silentRemote();
    cache = tempDir("pf-cache-");
  });
  afterEach(() => remote.close());

  for (const [scheme, reason] of [
    [
      "http",
      /^gitRepo evil: fatal: unable to access 'http:\/\/127\.0\.0\.1:\d+\/r\.git\/': Operation too slow\. .*\(PULUMI_FLEET_GIT_LOW_SPEED_BYTES, PULUMI_FLEET_GIT_LOW_SPEED_SECONDS\)$/,
    ],
    ["git", /^gitRepo evil: git ls-remote: the remote sent nothing for 2 s \(PULUMI_FLEET_GIT_LOW_SPEED_SECONDS\): it was stopped$/],
  ] as const) {
    it(`${scheme}://: the read fails within the low-speed bound, naming the GitRepo, with no connection left open`, async () => {
      const started = Date.now();
      const err = await withEnv(LOW_SPEED, () =>
        rejectionWith(resolveSource(gitRepoConfig({ name: "evil", repo: `${scheme}://127.0.0.1:${remote.port}/r.git` }), cache), FleetError),
      );
      expect(err.message).to.match(reason);
      // 2 s, with a wide margin for a busy machine; the overall timeout is 600 s.
      expect(Date.now() - started).to.be.below(15_000);
      const deadline = Date.now() + 2_000; // the peer's close reaches the server after git exits
      while (remote.open() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(remote.open(), "connections left open by a surviving git helper").to.equal(0);
    });

    it(`${scheme}://: the watcher's poll gives up at the low-speed time too, not at its own timeout`, async () => {
      const started = Date.now();
      const err = await withEnv(LOW_SPEED, () =>
        rejectionWith(remoteHead(gitRepoConfig({ name: "evil", repo: `${scheme}://127.0.0.1:${remote.port}/r.git` }), 600_000), FleetError),
      );
      expect(err.message).to.match(/^gitRepo evil: /);
      expect(Date.now() - started).to.be.below(15_000);
    });
  }

  it("ssh://: the host that accepts and never sends its banner is given up at the low-speed time (ConnectTimeout)", async () => {
    const keyDir = tempDir("pf-key-");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(keyDir, "k")]);
    const auth = { sshPrivateKey: fs.readFileSync(path.join(keyDir, "k"), "utf8"), knownHosts: "" };
    const started = Date.now();
    const err = await withEnv(LOW_SPEED, () =>
      rejectionWith(resolveSource(gitRepoConfig({ name: "evil", repo: `ssh://git@127.0.0.1:${remote.port}/r.git`, auth }), cache), FleetError),
    );
    expect(err.message).to.match(/^gitRepo evil: .*(timed out.*\(PULUMI_FLEET_GIT_LOW_SPEED_SECONDS\)|the remote sent nothing for 2 s)/);
    expect(Date.now() - started).to.be.below(15_000);
  });

  it("with two GitRepos, the other is read (and done) while the silent one is still waiting; only the silent one fails", async () => {
    const good = new TestRepo({ "cm.yaml": CONFIGMAP("a") });
    const events: string[] = [];
    // The silent GitRepo first: read one after the other, the good one would wait for it.
    const repos = [gitRepoConfig({ name: "evil", repo: `http://127.0.0.1:${remote.port}/r.git` }), gitRepoConfig({ name: "victim", repo: good.url() })];
    const { sources, failed } = await withEnv(LOW_SPEED, () =>
      readSources(repos, cache, async (repo, root) => {
        events.push(`${repo.name} started`);
        try {
          const s = await resolveSource(repo, root);
          events.push(`${repo.name} read`);
          return s;
        } catch (err) {
          events.push(`${repo.name} failed`);
          throw err;
        }
      }),
    );
    expect(events).to.deep.equal(["evil started", "victim started", "victim read", "evil failed"]);
    expect(sources.get("victim")!.commit).to.equal(good.head());
    expect([...failed.keys()]).to.deep.equal(["evil"]);
    expect(failed.get("evil")!.message).to.match(/^gitRepo evil: .*Operation too slow/);
  });
});

describe("git source: how many GitRepos are read at once", () => {
  it("at most the limit, each its own task: one that never ends holds only its slot", async () => {
    let running = 0;
    let most = 0;
    const hang = new Promise<string>(() => undefined);
    const done: string[] = [];
    const settled = settleLimited(["hang", "a", "b", "c", "d"], 2, async (name) => {
      running++;
      most = Math.max(most, running);
      if (name === "hang") return hang;
      await new Promise((r) => setImmediate(r));
      running--;
      done.push(name);
      return name;
    });
    while (done.length < 4) await new Promise((r) => setImmediate(r));
    expect(done).to.deep.equal(["a", "b", "c", "d"]);
    expect(most).to.equal(2);
    void settled; // never settles: the hanging task's slot is its own
  });

  it("reads the limit and the low-speed bounds from the operator's variables, refusing what is not a positive number", () => {
    expect(gitBounds({ PULUMI_FLEET_GIT_CONCURRENCY: "3", PULUMI_FLEET_GIT_LOW_SPEED_SECONDS: "10", PULUMI_FLEET_GIT_LOW_SPEED_BYTES: "500" })).to.include({
      concurrency: 3,
      lowSpeedSeconds: 10,
      lowSpeedBytes: 500,
    });
    expect(gitBounds({}).lowSpeedSeconds).to.equal(30);
    expect(() => gitBounds({ PULUMI_FLEET_GIT_CONCURRENCY: "0" })).to.throw(/PULUMI_FLEET_GIT_CONCURRENCY="0": expected a positive number/);
  });
});
