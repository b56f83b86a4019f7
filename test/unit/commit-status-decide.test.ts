/** What each deployed commit is told after an up (pure): its state per host, its description's bounds, and the PR comment's escaping. */
import { expect } from "chai";
import { CommitFacts, decideCommitStatuses, DESCRIPTION_LIMITS, hostDescription, hostState } from "../../automation/commit-status/decide";
import { commentMarkdown, commentMarker, MAX_COMMENT_CHARS } from "../../automation/commit-status/comment";
import { DeploymentFailure } from "../../core/plan/failures";

const A = "a".repeat(40);
const B = "b".repeat(40);
const fail = (cluster: string, gitRepo: string, bundle: string, reason: string, held = false): DeploymentFailure =>
  ({
    cluster,
    gitRepo,
    bundle,
    reason,
    message: reason,
    ...(held ? { held: { kind: "window" } } : {}),
  }) as unknown as DeploymentFailure;

function facts(over: Partial<CommitFacts> = {}): CommitFacts {
  return {
    host: "github",
    apiUrl: "https://api.github.com",
    gitRepos: [
      { name: "apps", repo: "https://github.com/acme/apps.git" },
      { name: "infra", repo: "git@github.com:acme/infra.git" },
    ],
    commits: { apps: A, infra: B },
    entries: [
      { cluster: "c1", gitRepo: "apps", bundle: "web" },
      { cluster: "c2", gitRepo: "apps", bundle: "web" },
      { cluster: "c1", gitRepo: "infra", bundle: "dns" },
    ],
    failed: [],
    held: [],
    ready: () => true,
    ...over,
  };
}

describe("commit status: the decision", () => {
  it("success when every pair of the commit is Ready; one result per repository and commit", () => {
    const d = decideCommitStatuses(facts());
    expect(d.skipped).to.deep.equal([]);
    expect(d.results.map((r) => [r.repository.path, r.commit, r.state, r.description])).to.deep.equal([
      ["acme/apps", A, "success", "2/2 bundle deployment(s) Ready on 2 cluster(s)"],
      ["acme/infra", B, "success", "1/1 bundle deployment(s) Ready on 1 cluster(s)"],
    ]);
    expect(d.results[0].clusters).to.deep.equal([
      { cluster: "c1", bundles: 1, ready: 1, failed: 0, held: 0 },
      { cluster: "c2", bundles: 1, ready: 1, failed: 0, held: 0 },
    ]);
  });

  it("failure when any pair of the commit failed (only that commit); the first failure is in the description", () => {
    const d = decideCommitStatuses(facts({ failed: [fail("c2", "apps", "web", "ErrApplied: admission webhook denied")], ready: (k) => k !== "c2/apps/web" }));
    expect(d.results.map((r) => r.state)).to.deep.equal(["failure", "success"]);
    expect(d.results[0].description).to.equal("1/2 bundle deployment(s) Ready on 2 cluster(s), 1 failed; first: c2/web: ErrApplied: admission webhook denied");
    expect(d.results[0].failures).to.deep.equal([{ gitRepo: "apps", bundle: "web", cluster: "c2", reason: "ErrApplied: admission webhook denied" }]);
  });

  it("a bundle that failed before its clusters were known fails its commit", () => {
    const d = decideCommitStatuses(facts({ failed: [fail("", "infra", "broken", "fleet.yaml: bad")] }));
    expect(d.results[1].state).to.equal("failure");
  });

  it("pending while a pair is held or not Ready yet; pairs of an Offline cluster never count as Ready", () => {
    const held = decideCommitStatuses(facts({ held: [fail("c2", "apps", "web", "maintenance window", true)] }));
    expect(held.results[0]).to.include({ state: "pending", description: "1/2 bundle deployment(s) Ready on 2 cluster(s), 1 held" });
    const waiting = decideCommitStatuses(facts({ ready: (k) => k !== "c1/infra/dns" }));
    expect(waiting.results[1]).to.include({ state: "pending", description: "0/1 bundle deployment(s) Ready on 1 cluster(s), 1 not Ready yet" });
    const offline = decideCommitStatuses(facts({ offline: new Set(["c2"]) }));
    expect(offline.results[0]).to.include({ state: "pending", description: "1/2 bundle deployment(s) Ready on 2 cluster(s), 1 cluster(s) Offline" });
    expect(offline.results[0].clusters[1]).to.deep.equal({ cluster: "c2", bundles: 1, ready: 0, failed: 0, held: 0, offline: true });
  });

  it("two GitRepos of one repository at one commit are one status (the worse state); at two commits, two", () => {
    const same = facts({
      gitRepos: [
        { name: "apps", repo: "https://github.com/acme/apps.git" },
        { name: "infra", repo: "https://github.com/Acme/apps" },
      ],
      commits: { apps: A, infra: A },
      failed: [fail("c1", "infra", "dns", "boom")],
    });
    const d = decideCommitStatuses(same);
    expect(d.results).to.have.length(1);
    expect(d.results[0]).to.deep.include({ gitRepos: ["apps", "infra"], state: "failure" });
    expect(decideCommitStatuses({ ...same, commits: { apps: A, infra: B } }).results).to.have.length(2);
  });

  it("skips, with a line each, a GitRepo on another host and a commit that is not a full id; one without a commit is not reported", () => {
    const d = decideCommitStatuses(
      facts({
        gitRepos: [
          { name: "apps", repo: "https://gitlab.com/acme/apps.git" },
          { name: "infra", repo: "https://github.com/acme/infra" },
          { name: "stalled", repo: "https://github.com/acme/stalled" },
        ],
        commits: { apps: A, infra: "main" },
      }),
    );
    expect(d.results).to.deep.equal([]);
    expect(d.skipped).to.deep.equal([
      "GitRepo apps: its repo is on gitlab.com, not on github.com (commitStatus.apiUrl)",
      'GitRepo infra: its commit "main" is not a full commit id',
    ]);
  });

  it("maps the state to each host's words", () => {
    expect(["success", "failure", "pending"].map((s) => hostState("github", s as "success"))).to.deep.equal(["success", "failure", "pending"]);
    expect(["success", "failure", "pending"].map((s) => hostState("gitlab", s as "success"))).to.deep.equal(["success", "failed", "pending"]);
    expect(["success", "failure", "pending"].map((s) => hostState("gitea", s as "success"))).to.deep.equal(["success", "failure", "pending"]);
  });

  it("cuts a description to each API's limit in UTF-16 units, never inside a character; content's control characters never reach it", () => {
    const d = decideCommitStatuses(facts({ failed: [fail("c1", "apps", "web", `\x1b[31mred\r\nline ${"😀".repeat(200)}`)] }));
    const text = d.results[0].description;
    expect(text).to.not.match(/\p{Cc}/u);
    for (const host of ["github", "gitlab", "gitea"] as const) {
      const cut = hostDescription(host, text);
      expect(cut.length).to.be.at.most(DESCRIPTION_LIMITS[host]);
      expect(cut.endsWith("…")).to.equal(true);
      expect(cut).to.not.match(/[\ud800-\udbff](?![\udc00-\udfff])/); // no lone high surrogate
    }
    expect(hostDescription("github", "short")).to.equal("short");
  });
});

describe("commit status: the pull-request comment", () => {
  it("starts with this stack's hidden marker and has a row per cluster", () => {
    const [r] = decideCommitStatuses(facts()).results;
    const md = commentMarkdown("prod", "pulumi-fleet/prod", r);
    expect(md.startsWith(commentMarker("prod"))).to.equal(true);
    expect(commentMarker("a b<!--")).to.equal("<!-- pulumi-fleet commit-status stack=a_b__-- -->");
    expect(md).to.include("| `c1` | 1 | 1 | 0 | 0 |");
    expect(md).to.include("| `c2` | 1 | 1 | 0 | 0 |");
  });

  it("escapes every content string: no HTML, no second marker, no mention, no link, no table break", () => {
    const reason = "<!-- pulumi-fleet commit-status stack=prod --> @admin see [x](https://evil.example) | col <img src=x>";
    const [r] = decideCommitStatuses(facts({ failed: [fail("c1", "apps", "we`b|x", reason)], entries: [] })).results;
    const md = commentMarkdown("prod", "pulumi-fleet/prod", r);
    expect(md.split(commentMarker("prod"))).to.have.length(2); // only our own marker
    expect(md).to.not.include("<img");
    expect(md).to.not.match(/(^|[^`\\])@admin/);
    expect(md).to.not.include("](https://evil.example)");
    expect(md).to.include("&lt;");
  });

  it("stays under GitHub's comment limit however many clusters and failures", () => {
    const entries = Array.from({ length: 3000 }, (_, i) => ({ cluster: `cluster-${i}-${"x".repeat(60)}`, gitRepo: "apps", bundle: "web" }));
    const failed = entries.map((e) => fail(e.cluster, "apps", "web", "r".repeat(2000)));
    const [r] = decideCommitStatuses(facts({ entries, failed })).results;
    const md = commentMarkdown("prod", "pulumi-fleet/prod", r);
    expect(md.length).to.be.at.most(MAX_COMMENT_CHARS + 100);
    expect(md).to.include("more cluster(s)");
    expect(md).to.include("… and 2970 more");
  });
});
