/**
 * The watcher (`npm run watch`, automation/watch/): its pure decisions (which GitRepos are due, when
 * `up` runs, the backoff's growth and cap, a stack file edit), its loop with fake facts (no clock,
 * remote or engine), pollingInterval as the stack file states it, and the poll of a real git remote.
 */
import { expect } from "chai";
import { parseStackConfig } from "../../core/config/stack";
import { DEFAULT_POLLING_INTERVAL_MS, parseGoDuration } from "../../core/config/polling";
import { remoteHead } from "../../core/source/remote-head";
import { afterUp, backoffMs, decideUp, duePolls, MAX_BACKOFF_MS, pollIntervals, polled, reschedule, wakeAt, WatchMemory } from "../../automation/watch/decide";
import { UpOutcome, watchLoop } from "../../automation/watch/loop";
import { configHash } from "../../automation/watch/live";
import * as fs from "node:fs";
import * as path from "node:path";
import { errorOf } from "../support/errors";
import { gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { silentRemote } from "../support/silent-remote";

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);

describe("watch: the decisions", () => {
  it("runs up once at start, then only when a polled commit or the stack file changed", () => {
    const inputs = { commits: { apps: A }, stackHash: "h1" };
    expect(decideUp({}, inputs, 0)).to.deep.equal({ run: true, reason: "first run: bringing the stack up to date" });
    const deployed: WatchMemory = afterUp({}, inputs, { ok: true, resolved: { apps: A } }, 0, 15_000);
    expect(decideUp(deployed, inputs, 1)).to.deep.equal({ run: false });
    expect(decideUp(deployed, { commits: { apps: B }, stackHash: "h1" }, 1)).to.deep.equal({
      run: true,
      reason: `gitRepo apps is at ${B.slice(0, 12)} (was ${A.slice(0, 12)})`,
    });
    expect(decideUp(deployed, { commits: { apps: A }, stackHash: "h2" }, 1)).to.deep.equal({ run: true, reason: "the stack file changed" });
    // A GitRepo whose poll never answered is not in the inputs: it triggers nothing.
    expect(decideUp(deployed, { commits: {}, stackHash: "h1" }, 1)).to.deep.equal({ run: false });
  });

  it("records the commits the up itself read, newer than the poll's", () => {
    const m = afterUp({}, { commits: { apps: A, lib: C }, stackHash: "h" }, { ok: true, resolved: { apps: B } }, 0, 15_000);
    expect(m.deployed).to.deep.equal({ commits: { apps: B, lib: C }, stackHash: "h" });
    expect(decideUp(m, { commits: { apps: B, lib: C }, stackHash: "h" }, 0)).to.deep.equal({ run: false });
  });

  it("backs off from the polling interval, doubling, capped, and resets on success", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => backoffMs(n, 15_000))).to.deep.equal([
      15_000,
      30_000,
      60_000,
      120_000,
      240_000,
      MAX_BACKOFF_MS,
      MAX_BACKOFF_MS,
      MAX_BACKOFF_MS,
    ]);
    expect(MAX_BACKOFF_MS).to.equal(300_000);
    const inputs = { commits: { apps: A }, stackHash: "h" };
    let m: WatchMemory = {};
    m = afterUp(m, inputs, { ok: false }, 1000, 15_000);
    expect(m.failed).to.deep.equal({ inputs, failures: 1, retryAt: 16_000 });
    expect(decideUp(m, inputs, 15_999)).to.deep.equal({ run: false, wait: "the last up failed; trying again in 1 s" });
    expect(decideUp(m, inputs, 16_000)).to.deep.equal({ run: true, reason: "trying again after 1 failed up(s) with these inputs" });
    m = afterUp(m, inputs, { ok: false }, 16_000, 15_000);
    expect(m.failed!.retryAt).to.equal(46_000);
    // New inputs may be the fix: they run at once, whatever the backoff.
    expect(decideUp(m, { commits: { apps: B }, stackHash: "h" }, 17_000).run).to.equal(true);
    m = afterUp(m, inputs, { ok: true, resolved: {} }, 50_000, 15_000);
    expect(m).to.deep.equal({ deployed: inputs });
  });

  it("polls each GitRepo at its own interval and wakes at the earliest thing due", () => {
    const intervals = pollIntervals(
      [
        { name: "fast", paused: false, pollingInterval: 5000 },
        { name: "default", paused: false },
        { name: "paused", paused: true },
        { name: "off", paused: false, disablePolling: true },
      ],
      DEFAULT_POLLING_INTERVAL_MS,
    );
    expect(intervals).to.deep.equal({ fast: 5000, default: 15_000 });
    let s = reschedule({}, intervals, 100);
    expect(duePolls(s, 100)).to.deep.equal(["default", "fast"]);
    s = polled(s, ["default", "fast"], intervals, 100);
    expect(s).to.deep.equal({ default: 15_100, fast: 5100 });
    expect(duePolls(s, 5100)).to.deep.equal(["fast"]);
    expect(wakeAt(s, {}, 100 + 15_000)).to.equal(5100);
    expect(wakeAt(s, { failed: { inputs: { commits: {}, stackHash: "" }, failures: 1, retryAt: 3000 } }, 99_999)).to.equal(3000);
    // A GitRepo added by a stack file edit is due at once; a removed one is no longer polled.
    expect(reschedule(s, { fast: 5000, added: 15_000 }, 200)).to.deep.equal({ added: 200, fast: 5100 });
  });
});

describe("watch: the loop, with fake facts", () => {
  /** A world the loop runs in: a clock that jumps to each wake, a remote per GitRepo, ups that succeed or fail as told. */
  function world(opts: { stopAt: number; failUps?: number[]; intervals?: Record<string, string> }) {
    let clock = 0;
    const heads: Record<string, string> = { apps: A };
    let stackHash = "h1";
    const ups: { at: number; reason: string; heads: Record<string, string> }[] = [];
    const logs: string[] = [];
    const pushes: [number, () => void][] = [];
    const deps = {
      now: () => clock,
      stopped: () => clock >= opts.stopAt,
      // A poll that answers (at once, in the fakes) wakes the loop before the clock moves; one that hangs does not.
      sleepUntil: async (at: number, wake: Promise<void>) => {
        const woken = await Promise.race([wake.then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]);
        if (woken) return;
        clock = Math.max(clock, at);
        for (const [when, act] of pushes) if (when <= clock) act();
      },
      stackHash: () => stackHash,
      readConfig: async () => ({
        gitRepos: Object.entries(opts.intervals ?? { apps: "" }).map(([name, i]) =>
          gitRepoConfig({ name, repo: "x", ...(i ? { pollingInterval: parseGoDuration(i)! } : {}) }),
        ),
      }),
      poll: async (repo: { name: string }) => heads[repo.name] ?? A,
      up: async (reason: string): Promise<UpOutcome> => {
        ups.push({ at: clock, reason, heads: { ...heads } });
        clock += 3000; // an up takes time
        if (opts.failUps?.includes(ups.length)) return { ok: false };
        // What the up read: every GitRepo of the stack (a real up reads them all).
        return { ok: true, resolved: Object.fromEntries(Object.keys(opts.intervals ?? { apps: "" }).map((n) => [n, heads[n] ?? A])) };
      },
      log: (l: string) => logs.push(l),
    };
    return {
      deps,
      ups,
      logs,
      at: (when: number, act: () => void) => pushes.push([when, act]),
      push: (commit: string) => (heads.apps = commit),
      editStack: (h: string) => (stackHash = h),
    };
  }

  it("deploys at start, then a pushed commit within one polling interval, and nothing in between", async () => {
    const w = world({ stopAt: 120_000 });
    w.at(40_000, () => w.push(B));
    await watchLoop(w.deps);
    expect(w.ups.map((u) => u.at)).to.deep.equal([0, 45_000]);
    expect(w.ups[1].reason).to.contain(`gitRepo apps is at ${B.slice(0, 12)}`);
  });

  it("a stack file edit deploys at the next wake", async () => {
    const w = world({ stopAt: 60_000 });
    w.at(20_000, () => w.editStack("h2"));
    await watchLoop(w.deps);
    expect(w.ups.map((u) => [u.at, u.reason])).to.deep.equal([
      [0, "first run: bringing the stack up to date"],
      [30_000, "the stack file changed"],
    ]);
  });

  it("what the engine writes into the stack file while reading it (creating the stack) is no edit", async () => {
    const w = world({ stopAt: 60_000 });
    const read = w.deps.readConfig;
    w.deps.readConfig = async () => {
      w.editStack("rewritten by the engine");
      return read();
    };
    await watchLoop(w.deps);
    expect(w.ups.map((u) => u.reason)).to.deep.equal(["first run: bringing the stack up to date"]);
  });

  it("a failed up is tried again after a growing backoff, and a success ends the backoff", async () => {
    const w = world({ stopAt: 200_000, failUps: [1, 2, 3] });
    await watchLoop(w.deps);
    // up 1 fails at 3 s: retry 15 s later (18 s); up 2 fails at 21 s: 30 s later (51 s); up 3 fails at 54 s: 60 s later (114 s), succeeds.
    expect(w.ups.map((u) => u.at)).to.deep.equal([0, 18_000, 51_000, 114_000]);
    expect(w.logs.filter((l) => l.startsWith("up failed"))).to.have.length(3);
  });

  it("a poll that hangs delays no other GitRepo: its pushed commit deploys within its polling interval", async () => {
    const w = world({ stopAt: 120_000, intervals: { apps: "", evil: "" } });
    const poll = w.deps.poll;
    const started: string[] = [];
    w.deps.poll = (repo) => {
      started.push(`${w.deps.now()} ${repo.name}`);
      return repo.name === "evil" ? new Promise<string>(() => undefined) : poll(repo); // accepts, never answers
    };
    w.at(40_000, () => w.push(B));
    await watchLoop(w.deps);
    // The same times as with no hanging GitRepo: at start, and the first apps poll after the push.
    expect(w.ups.map((u) => u.at)).to.deep.equal([0, 45_000]);
    expect(w.ups[1].reason).to.equal(`gitRepo apps is at ${B.slice(0, 12)} (was ${A.slice(0, 12)})`);
    // The hung poll is not started again while it runs; apps is polled every interval meanwhile.
    expect(started.filter((p) => p.endsWith("evil"))).to.deep.equal(["0 evil"]);
    expect(started.filter((p) => p.endsWith("apps"))).to.deep.equal([
      "0 apps",
      "15000 apps",
      "30000 apps",
      "45000 apps",
      "60000 apps",
      "75000 apps",
      "90000 apps",
      "105000 apps",
    ]);
  });

  it("a poll that answered before the up began never overrides the newer commit the up read", async () => {
    const w = world({ stopAt: 40_000 });
    let answer!: (c: string) => void;
    const poll = w.deps.poll;
    let calls = 0;
    w.deps.poll = (repo) => (++calls === 1 ? new Promise<string>((r) => (answer = r)) : poll(repo));
    const up = w.deps.up;
    w.deps.up = async (reason) => {
      w.push(B); // the up reads B; the poll begun before it answers A afterwards
      const outcome = await up(reason);
      answer(A);
      return outcome;
    };
    await watchLoop(w.deps);
    expect(w.ups.map((u) => u.reason)).to.deep.equal(["first run: bringing the stack up to date"]);
  });

  it("each GitRepo at its own interval", async () => {
    const w = world({ stopAt: 20_500, intervals: { apps: "5s", slow: "1m" } });
    const polls: string[] = [];
    const poll = w.deps.poll;
    w.deps.poll = async (repo) => {
      polls.push(`${w.deps.now()} ${repo.name}`);
      return poll(repo);
    };
    await watchLoop(w.deps);
    // The first up (at 0) takes 3 s: apps' poll due at 5 s runs then, and every 5 s after.
    expect(polls).to.deep.equal(["0 apps", "0 slow", "5000 apps", "10000 apps", "15000 apps", "20000 apps"]);
  });
});

describe("watch: a stack file edit", () => {
  it("is a change of its configuration, not of what the engine writes into the file (a new stack's encryptionsalt)", () => {
    const file = path.join(tempDir("pf-watch-hash-"), "Pulumi.t.yaml");
    fs.writeFileSync(file, "config:\n  pulumi-fleet:gitRepos: []\n");
    const before = configHash(file);
    fs.writeFileSync(file, "encryptionsalt: v1:abc\nconfig:\n  pulumi-fleet:gitRepos: []\n");
    expect(configHash(file)).to.equal(before);
    fs.writeFileSync(file, "encryptionsalt: v1:abc\nconfig:\n  pulumi-fleet:gitRepos: [{name: a}]\n");
    expect(configHash(file)).to.not.equal(before);
    fs.rmSync(file);
    expect(configHash(file)).to.equal("absent");
  });
});

describe("watch: pollingInterval in the stack file", () => {
  const parse = (repo: Record<string, unknown>) =>
    parseStackConfig({ gitRepos: [{ name: "a", repo: "https://example.com/a.git", ...repo }] }, "stacks/Pulumi.t.yaml", "/project").gitRepos[0];

  it("reads Fleet's Go durations; 0 or absent is the default", () => {
    expect(parseGoDuration("15s")).to.equal(15_000);
    expect(parseGoDuration("1m30s")).to.equal(90_000);
    expect(parseGoDuration("1.5h")).to.equal(5_400_000);
    expect(parseGoDuration("15")).to.equal(undefined);
    expect(parse({ pollingInterval: "1m" }).pollingInterval).to.equal(60_000);
    expect(parse({ pollingInterval: "0" }).pollingInterval).to.equal(undefined);
    expect(parse({}).pollingInterval).to.equal(undefined);
    expect(parse({ disablePolling: true }).disablePolling).to.equal(true);
  });

  it("refuses what is not a duration, and less than a second", () => {
    expect(errorOf(() => parse({ pollingInterval: "15" }))).to.contain('gitRepos[0].pollingInterval: "15" is not a Go duration');
    expect(errorOf(() => parse({ pollingInterval: "2d" }))).to.contain("is not a Go duration");
    expect(errorOf(() => parse({ pollingInterval: "500ms" }))).to.contain('"500ms" is below the minimum of 1s');
  });
});

describe("watch: the poll of a real remote (git ls-remote, nothing fetched)", () => {
  it("gives the commit the branch, a tag or a full revision names, and fails naming a missing branch", async () => {
    const repo = new TestRepo({ "a.yaml": "a: 1\n" });
    const first = repo.head();
    repo.git("tag", "-a", "v1", "-m", "v1");
    const second = repo.commit({ "a.yaml": "a: 2\n" });
    expect(await remoteHead(gitRepoConfig({ repo: repo.url(), branch: "master" }), 10_000)).to.equal(second);
    expect(await remoteHead(gitRepoConfig({ repo: repo.url(), revision: "v1" }), 10_000)).to.equal(first);
    expect(await remoteHead(gitRepoConfig({ repo: repo.url(), revision: first }), 10_000)).to.equal(first);
    const missing = await remoteHead(gitRepoConfig({ repo: repo.url(), branch: "nope" }), 10_000).then(
      () => "",
      (e: Error) => e.message,
    );
    expect(missing).to.contain('branch "nope" not found');
  });
});

describe("watch: the loop with real polls, one remote silent (real git, real clock)", () => {
  it("another GitRepo's pushed commit starts an up while the silent remote's poll is still waiting", async function () {
    this.timeout(60_000);
    const remote = await silentRemote();
    const repo = new TestRepo({ "a.yaml": "a: 1\n" });
    const repos = [
      gitRepoConfig({ name: "evil", repo: `http://127.0.0.1:${remote.port}/r.git`, pollingInterval: 1000 }),
      gitRepoConfig({ name: "apps", repo: repo.url(), branch: "master", pollingInterval: 1000 }),
    ];
    const events: string[] = [];
    let stop = false;
    let pushed = "";
    try {
      await watchLoop({
        now: () => Date.now(),
        stopped: () => stop,
        sleepUntil: (at, wake) => Promise.race([wake, new Promise<void>((r) => setTimeout(r, Math.max(0, at - Date.now())))]),
        stackHash: () => "h",
        readConfig: async () => ({ gitRepos: repos }),
        // The overall poll timeout and the low-speed time (30 s by default) both outlast the test.
        poll: async (r) => {
          try {
            return await remoteHead(r, 600_000);
          } finally {
            events.push(`${r.name} poll ended`);
          }
        },
        up: async (reason) => {
          events.push(`up: ${reason}`);
          const read = repo.head();
          if (!pushed)
            pushed = repo.commit({ "a.yaml": "a: 2\n" }); // pushed after the first up read
          else stop = true; // the up that deploys the push
          return { ok: true, resolved: { apps: read } };
        },
        log: () => undefined,
      });
      const ups = events.filter((e) => e.startsWith("up:"));
      expect(ups[1]).to.contain(`gitRepo apps is at ${pushed.slice(0, 12)}`);
      // Detected and deployed before the silent remote's one poll ended.
      expect(events.indexOf("evil poll ended")).to.equal(-1);
    } finally {
      await remote.close();
    }
  });
});
