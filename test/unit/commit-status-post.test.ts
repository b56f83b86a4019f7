/**
 * Posting commit statuses and pull-request comments to a local server that answers each API's
 * documented requests (test/support/git-host-api.ts): the request shapes (method, path, headers, JSON
 * body) per host, one comment per pull request updated in place, and every problem a warning with
 * the token redacted, never a failure.
 */
import { expect } from "chai";
import { CommitStatusConfig } from "../../core/config/commit-status";
import { COMMIT_STATUS_POLICY, CommitStatusPolicy, postCommitStatuses, UpCommits } from "../../automation/commit-status/post";
import { commentMarker } from "../../automation/commit-status/comment";
import { PostedMemory } from "../../automation/commit-status/posted-store";
import { DeploymentFailure } from "../../core/plan/failures";
import { fakeGitHost, FakeHost, Host } from "../support/git-host-api";

const SHA = "0123456789abcdef0123456789abcdef01234567";
const TOKEN = "tok-3f9a8b7c6d5e4f3a2b1c";
const FAST: CommitStatusPolicy = { ...COMMIT_STATUS_POLICY, backoffMs: [10, 20], attemptTimeoutMs: 2000, deadlineMs: 10_000 };
const REPOS: Record<Host, string> = {
  github: "https://github.com/acme/apps.git",
  gitlab: "https://gitlab.example.com/acme/platform/apps.git",
  gitea: "https://gitea.example.com/acme/apps.git",
};

/** The fake's own host stands in for the git host: a repo URL on 127.0.0.1 matches its apiUrl. */
const repoOn = (f: FakeHost, host: Host) => REPOS[host].replace(/^https:\/\/[^/]+/, `http://127.0.0.1:${new URL(f.apiUrl).port}`);

function facts(over: Partial<UpCommits> = {}): UpCommits {
  return {
    commits: { apps: SHA },
    entries: [
      { cluster: "c1", gitRepo: "apps", bundle: "web" },
      { cluster: "c2", gitRepo: "apps", bundle: "web" },
    ],
    failed: [],
    held: [],
    ready: () => true,
    ...over,
  };
}

describe("commit status: posting to each host's API", function () {
  const open: FakeHost[] = [];
  const serve = async (host: Host) => {
    const f = await fakeGitHost(host);
    open.push(f);
    return f;
  };
  after(async () => {
    for (const f of open) await f.close();
  });

  // Each fake host's posted memory, kept between its ups as the stack's record keeps it.
  const memories = new Map<FakeHost, PostedMemory | undefined>();
  const memoryOf = (f: FakeHost) => ({
    where: "test",
    read: async () => memories.get(f),
    write: async (r: PostedMemory) => void memories.set(f, r),
    clear: async () => void memories.delete(f),
    update: async () => memories.get(f)!,
  });
  async function run(f: FakeHost, host: Host, config: Partial<CommitStatusConfig> = {}, up: Partial<UpCommits> = {}, env = { FLEET_TOKEN: TOKEN }) {
    const warnings: string[] = [];
    const posted = await postCommitStatuses(
      {
        stack: "prod",
        config: { host, apiUrl: f.apiUrl, tokenFromEnv: "FLEET_TOKEN", pullRequestComment: false, ...config },
        gitRepos: [{ name: "apps", repo: repoOn(f, host) }],
        warn: (m) => warnings.push(m),
        env,
        policy: FAST,
        memory: memoryOf(f),
      },
      facts(up),
    );
    return { posted, warnings };
  }

  it("GitHub: POST /repos/{owner}/{repo}/statuses/{sha} with a bearer token, the API version and state/description/context/target_url", async () => {
    const f = await serve("github");
    const { posted, warnings } = await run(f, "github", { targetUrl: "https://fleet.example.com/" });
    expect(warnings).to.deep.equal([]);
    expect(posted).to.deep.equal([{ repository: "acme/apps", commit: SHA, state: "success", comments: [] }]);
    const [r] = f.requests;
    expect(r).to.deep.include({ method: "POST", path: `/repos/acme/apps/statuses/${SHA}` });
    expect(r.headers).to.include({
      authorization: `Bearer ${TOKEN}`,
      accept: "application/vnd.github+json",
      "x-github-api-version": "2022-11-28",
      "content-type": "application/json",
    });
    expect(r.body).to.deep.equal({
      state: "success",
      description: "2/2 bundle deployment(s) Ready on 2 cluster(s)",
      context: "pulumi-fleet/prod",
      target_url: "https://fleet.example.com/",
    });
  });

  it("GitLab: POST /projects/:id/statuses/:sha, the project's path as one encoded id, PRIVATE-TOKEN, name for the context and failed for a failure", async () => {
    const f = await serve("gitlab");
    const failed = [{ cluster: "c2", gitRepo: "apps", bundle: "web", reason: "denied", message: "ErrApplied: denied" } as DeploymentFailure];
    const { warnings } = await run(f, "gitlab", { context: "deploy/prod" }, { failed });
    expect(warnings).to.deep.equal([]);
    const [r] = f.requests;
    expect(r).to.deep.include({ method: "POST", path: `/api/v4/projects/acme%2Fplatform%2Fapps/statuses/${SHA}` });
    expect(r.headers).to.include({ "private-token": TOKEN });
    expect(r.headers).to.not.have.property("authorization");
    expect(r.body).to.deep.equal({
      state: "failed",
      name: "deploy/prod",
      description: "1/2 bundle deployment(s) Ready on 2 cluster(s), 1 failed; first: c2/web: ErrApplied: denied",
    });
  });

  it("GitLab: a status equal to the commit's (400 Cannot transition status) is no warning", async () => {
    const f = await serve("gitlab");
    f.refuse = { path: /statuses/, status: 400, body: '{"message":"Cannot transition status via :run from :running"}' };
    const { warnings, posted } = await run(f, "gitlab", {}, { ready: () => false });
    expect(warnings).to.deep.equal([]);
    expect(posted[0].state).to.equal("pending");
  });

  it("Gitea: POST /repos/{owner}/{repo}/statuses/{sha} with `token` authorization under its /api/v1", async () => {
    const f = await serve("gitea");
    const { warnings } = await run(
      f,
      "gitea",
      {},
      { held: [{ cluster: "c1", gitRepo: "apps", bundle: "web", reason: "maintenance window", held: {} } as unknown as DeploymentFailure] },
    );
    expect(warnings).to.deep.equal([]);
    const [r] = f.requests;
    expect(r).to.deep.include({ method: "POST", path: `/api/v1/repos/acme/apps/statuses/${SHA}` });
    expect(r.headers).to.include({ authorization: `token ${TOKEN}` });
    expect(r.body).to.deep.equal({ state: "pending", description: "1/2 bundle deployment(s) Ready on 2 cluster(s), 1 held", context: "pulumi-fleet/prod" });
  });

  for (const host of ["github", "gitlab", "gitea"] as const) {
    it(`${host}: one comment per pull request, found by its marker and updated in place on the next up`, async () => {
      const f = await serve(host);
      f.pulls.set(SHA, [7]);
      f.comments.set(7, [{ id: 1, body: "a reviewer's comment" }]);
      const first = await run(f, host, { pullRequestComment: true });
      expect(first.warnings).to.deep.equal([]);
      expect(first.posted[0].comments).to.deep.equal(["7:created"]);
      const failed = [{ cluster: "c1", gitRepo: "apps", bundle: "web", reason: "x", message: "ErrApplied: <b>x</b>" } as DeploymentFailure];
      const second = await run(f, host, { pullRequestComment: true }, { failed });
      expect(second.warnings).to.deep.equal([]);
      expect(second.posted[0].comments).to.deep.equal(["7:updated"]);
      const list = f.comments.get(7)!;
      expect(list).to.have.length(2);
      expect(list[0].body).to.equal("a reviewer's comment");
      expect(list[1].body.startsWith(commentMarker("prod"))).to.equal(true);
      expect(list[1].body).to.include("ErrApplied: &lt;b&gt;x&lt;/b&gt;");
      const writes = f.requests.filter((r) => r.method !== "GET" && !r.path.includes("/statuses/"));
      expect(writes.map((r) => r.method)).to.deep.equal(["POST", host === "gitlab" ? "PUT" : "PATCH"]);
      const expected = {
        github: ["/repos/acme/apps/issues/7/comments", "/repos/acme/apps/issues/comments/"],
        gitlab: ["/api/v4/projects/acme%2Fplatform%2Fapps/merge_requests/7/notes", "/api/v4/projects/acme%2Fplatform%2Fapps/merge_requests/7/notes/"],
        gitea: ["/api/v1/repos/acme/apps/issues/7/comments", "/api/v1/repos/acme/apps/issues/comments/"],
      }[host];
      expect(writes[0].path).to.equal(expected[0]);
      expect(writes[1].path.startsWith(expected[1])).to.equal(true);
      expect(writes[0].body).to.have.keys("body");
    });

    it(`${host}: a comment opening with the marker by someone else is not the stack's: it creates its own and edits only that`, async () => {
      const f = await serve(host);
      f.pulls.set(SHA, [8]);
      const mallory = host === "gitlab" ? { author: { username: "mallory" } } : { user: { login: "mallory" } };
      f.comments.set(8, [{ id: 5, body: `${commentMarker("prod")}\nlooks like the stack's`, ...mallory }]);
      expect((await run(f, host, { pullRequestComment: true })).posted[0].comments).to.deep.equal(["8:created"]);
      const failed = [{ cluster: "c1", gitRepo: "apps", bundle: "web", reason: "x", message: "ErrApplied: x" } as DeploymentFailure];
      expect((await run(f, host, { pullRequestComment: true }, { failed })).posted[0].comments).to.deep.equal(["8:updated"]);
      const list = f.comments.get(8)!;
      expect(list.map((c) => c.id === 5 && c.body.endsWith("looks like the stack's"))).to.deep.equal([true, false]);
      expect(list[1].body).to.include("ErrApplied: x");
    });
  }

  it("no pull request for the commit: the status alone (Gitea's 404 included)", async () => {
    for (const host of ["github", "gitea"] as const) {
      const f = await serve(host);
      const { warnings, posted } = await run(f, host, { pullRequestComment: true });
      expect(warnings).to.deep.equal([]);
      expect(posted[0].comments).to.deep.equal([]);
    }
  });

  it("a refusal is a warning naming the repository and commit, with the token redacted even when the answer quotes it; never a throw", async () => {
    const f = await serve("github");
    f.refuse = { path: /statuses/, status: 422, body: `{"message":"Validation Failed for token ${TOKEN}"}` };
    const { warnings, posted } = await run(f, "github");
    expect(posted).to.deep.equal([]);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(/^warning: stack prod: commitStatus: acme\/apps@0123456789ab: status not posted \(HTTP 422 after 1 attempt\(s\)/);
    expect(warnings[0]).to.not.include(TOKEN);
  });

  it("retries a 502 and posts on the answer that follows; an API that is down costs a warning within the deadline", async () => {
    const f = await serve("github");
    f.refuse = { path: /statuses/, status: 502, body: "bad gateway" };
    const started = Date.now();
    const down = await run(f, "github");
    expect(Date.now() - started).to.be.below(5000);
    expect(down.warnings[0]).to.match(/HTTP 502 after 3 attempt\(s\)/);
    f.refuse = undefined;
    expect((await run(f, "github")).warnings).to.deep.equal([]);
  });

  it("the token's variable unset: a warning naming it, nothing sent", async () => {
    const f = await serve("github");
    const { warnings } = await run(f, "github", {}, {}, {} as { FLEET_TOKEN: string });
    expect(warnings).to.deep.equal(["warning: stack prod: commitStatus: environment variable FLEET_TOKEN is not set; 1 commit status(es) not posted"]);
    expect(f.requests).to.deep.equal([]);
  });

  it("a GitRepo on another host: a warning, and its token never leaves for that host", async () => {
    const f = await serve("github");
    const warnings: string[] = [];
    await postCommitStatuses(
      {
        stack: "prod",
        config: { host: "github", apiUrl: f.apiUrl, tokenFromEnv: "T", pullRequestComment: false },
        gitRepos: [{ name: "apps", repo: "https://github.com/acme/apps" }],
        warn: (m) => warnings.push(m),
        env: { T: TOKEN },
        policy: FAST,
      },
      facts(),
    );
    expect(warnings).to.deep.equal([
      "warning: stack prod: commitStatus: GitRepo apps: its repo is on github.com, not on 127.0.0.1 (commitStatus.apiUrl): no status posted for it",
    ]);
    expect(f.requests).to.deep.equal([]);
  });

  it("an answer larger than the bound is refused, not read whole", async () => {
    const f = await serve("github");
    f.pulls.set(SHA, [7]);
    f.comments.set(7, [{ id: 1, body: "x".repeat(5000) }]);
    const { warnings } = await run(f, "github", { pullRequestComment: true });
    expect(warnings).to.deep.equal([]);
    const small = { ...FAST, maxAnswerBytes: 1000 };
    const w: string[] = [];
    await postCommitStatuses(
      {
        stack: "prod",
        config: { host: "github", apiUrl: f.apiUrl, tokenFromEnv: "T", pullRequestComment: true },
        gitRepos: [{ name: "apps", repo: repoOn(f, "github") }],
        warn: (m) => w.push(m),
        env: { T: TOKEN },
        policy: small,
        memory: memoryOf(f), // knows the stack's comments' author from the first up: it reads the comments
      },
      facts(),
    );
    expect(w).to.have.length(1);
    expect(w[0]).to.match(/comments of pull request 7 not read \(answer longer than 1000 bytes/);
  });
});

describe("commit status: what was posted is remembered", function () {
  let f: FakeHost;
  before(async () => (f = await fakeGitHost("github")));
  after(async () => f.close());

  it("an up whose result for a commit is the one posted sends nothing; a changed result, or one not delivered, is sent", async () => {
    let record: PostedMemory | undefined;
    const memory = {
      where: "test",
      read: async () => record,
      write: async (r: PostedMemory) => void (record = r),
      clear: async () => void (record = undefined),
      update: async () => record!,
    };
    const warnings: string[] = [];
    const post = (up: Partial<UpCommits> = {}) =>
      postCommitStatuses(
        {
          stack: "prod",
          config: { host: "github", apiUrl: f.apiUrl, tokenFromEnv: "T", pullRequestComment: false },
          gitRepos: [{ name: "apps", repo: repoOn(f, "github") }],
          warn: (m) => warnings.push(m),
          env: { T: TOKEN },
          policy: FAST,
          memory,
        },
        facts(up),
      );
    f.refuse = { path: /statuses/, status: 500, body: "down" };
    await post();
    expect(record).to.deep.equal({}); // not delivered: not remembered
    f.refuse = undefined;
    const sent = f.requests.length;
    expect((await post())[0]).to.not.have.property("unchanged");
    expect(f.requests.length).to.equal(sent + 1);
    expect((await post())[0]).to.include({ unchanged: true, state: "success" });
    expect(f.requests.length).to.equal(sent + 1);
    await post({ ready: () => false });
    expect(f.requests.length).to.equal(sent + 2);
    expect(Object.keys(record!)).to.deep.equal([`acme/apps@${SHA}`]);
    expect(warnings).to.have.length(1);
  });
});

describe("commit status: secrets stay out", function () {
  let f: FakeHost;
  before(async () => (f = await fakeGitHost("github")));
  after(async () => f.close());

  it("a failure quoting a Secret's value or the token reaches neither the status nor the comment", async () => {
    f.pulls.set(SHA, [9]);
    const message = `ErrApplied: Secret "db" is invalid: data: {"password": "hunter2-s3cret"}; token=${TOKEN}; password: hunter2-s3cret`;
    await postCommitStatuses(
      {
        stack: "prod",
        config: { host: "github", apiUrl: f.apiUrl, tokenFromEnv: "T", pullRequestComment: true },
        gitRepos: [{ name: "apps", repo: repoOn(f, "github") }],
        warn: () => undefined,
        env: { T: TOKEN },
        policy: FAST,
      },
      facts({ failed: [{ cluster: "c1", gitRepo: "apps", bundle: "web", reason: "x", message } as DeploymentFailure] }),
    );
    const sent = JSON.stringify(f.requests.map((r) => r.body ?? {}));
    expect(sent).to.include("[secret]");
    expect(sent).to.not.include("hunter2");
    expect(sent).to.not.include(TOKEN);
    expect(f.comments.get(9)).to.have.length(1);
  });
});
