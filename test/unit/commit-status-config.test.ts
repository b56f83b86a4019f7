/** The stack file's `commitStatus` and which repository a GitRepo's `repo` URL names on the configured host. */
import { expect } from "chai";
import { parseStackConfig } from "../../core/config/stack";
import { contextOf } from "../../core/config/commit-status";
import { gitHostOf, repositoryOf, splitGitUrl } from "../../automation/commit-status/repository";

const FILE = "Pulumi.dev.yaml";
const gitRepos = [{ name: "apps", repo: "https://github.com/acme/apps" }];
const parse = (commitStatus: unknown) => parseStackConfig({ gitRepos, commitStatus }, FILE, "/project").commitStatus;

describe("commit status: configuration", () => {
  it("reads a minimal GitHub setting with its defaults", () => {
    const c = parse({ host: "github", tokenFromEnv: "GH_TOKEN" })!;
    expect(c).to.deep.equal({ host: "github", apiUrl: "https://api.github.com", tokenFromEnv: "GH_TOKEN", pullRequestComment: false });
    expect(contextOf(c, "prod")).to.equal("pulumi-fleet/prod");
    expect(parseStackConfig({}, FILE, "/project").commitStatus).to.equal(undefined);
  });

  it("reads every field; the API's trailing slash goes", () => {
    const c = parse({
      host: "gitlab",
      apiUrl: "https://gitlab.example.com/api/v4/",
      tokenFromEnv: "GL",
      context: "deploy/prod",
      targetUrl: "https://fleet.example.com/status",
      pullRequestComment: true,
      gitRepos: ["apps"],
    })!;
    expect(c).to.deep.equal({
      host: "gitlab",
      apiUrl: "https://gitlab.example.com/api/v4",
      tokenFromEnv: "GL",
      context: "deploy/prod",
      targetUrl: "https://fleet.example.com/status",
      pullRequestComment: true,
      gitRepos: ["apps"],
    });
    expect(contextOf(c, "prod")).to.equal("deploy/prod");
  });

  it("refuses a token in the file, a missing or bad tokenFromEnv, an unknown host, Gitea without apiUrl, credentials in a URL and an unknown GitRepo", () => {
    const fails = (v: unknown, re: RegExp) => expect(() => parse(v)).to.throw(re);
    fails({ host: "github", token: "ghp_x", tokenFromEnv: "T" }, /commitStatus\.token.*credential/);
    fails({ host: "github" }, /commitStatus\.tokenFromEnv/);
    fails({ host: "github", tokenFromEnv: "a-b" }, /tokenFromEnv.*environment variable/);
    fails({ host: "bitbucket", tokenFromEnv: "T" }, /commitStatus\.host/);
    fails({ host: "gitea", tokenFromEnv: "T" }, /commitStatus\.apiUrl.*required for host gitea/);
    fails({ host: "gitea", apiUrl: "https://u:p@gitea.example.com/api/v1", tokenFromEnv: "T" }, /apiUrl.*credentials/);
    fails({ host: "gitea", apiUrl: "ftp://gitea.example.com", tokenFromEnv: "T" }, /apiUrl.*http or https/);
    fails({ host: "github", tokenFromEnv: "T", gitRepos: ["nope"] }, /commitStatus\.gitRepos\[0\].*names no GitRepo/);
    fails({ host: "github", tokenFromEnv: "T", gitRepos: [] }, /lists no GitRepo/);
    fails({ host: "github", tokenFromEnv: "T", context: "a\nb" }, /commitStatus\.context/);
    fails({ host: "github", tokenFromEnv: "T", extra: 1 }, /extra/);
  });
});

describe("commit status: the repository of a GitRepo", () => {
  it("splits https, ssh:// and scp-like URLs; a local path is none", () => {
    expect(splitGitUrl("https://github.com/acme/apps.git")).to.deep.equal({ host: "github.com", path: "/acme/apps.git" });
    expect(splitGitUrl("ssh://git@GitLab.example.com:2222/g/s/p.git")).to.deep.equal({ host: "gitlab.example.com", path: "/g/s/p.git" });
    expect(splitGitUrl("git@github.com:acme/apps.git")).to.deep.equal({ host: "github.com", path: "acme/apps.git" });
    expect(splitGitUrl("/srv/git/apps")).to.equal(undefined);
    expect(splitGitUrl("file:///srv/git/apps")).to.equal(undefined);
  });

  it("api.github.com serves github.com; a self-hosted API serves its own host", () => {
    expect(gitHostOf("https://api.github.com")).to.equal("github.com");
    expect(gitHostOf("https://ghe.example.com/api/v3")).to.equal("ghe.example.com");
  });

  it("reads owner/name (GitHub, Gitea) and the whole project path (GitLab)", () => {
    expect(repositoryOf("git@github.com:acme/apps.git", "github", "https://api.github.com")).to.deep.equal({ path: "acme/apps" });
    expect(repositoryOf("https://gitlab.com/acme/platform/apps.git", "gitlab", "https://gitlab.com/api/v4")).to.deep.equal({ path: "acme/platform/apps" });
    expect(repositoryOf("https://git.example.com/gitea/acme/apps", "gitea", "https://git.example.com/gitea/api/v1")).to.deep.equal({ path: "acme/apps" });
  });

  it("skips, saying why, a repo on another host, a local path and a path that is not a repository's (never a guess)", () => {
    const skip = (repo: string, host: "github" | "gitlab" | "gitea", api: string) => (repositoryOf(repo, host, api) as { skip: string }).skip;
    expect(skip("https://gitlab.com/acme/apps", "github", "https://api.github.com")).to.match(/on gitlab\.com, not on github\.com/);
    expect(skip("https://github.com.evil.example/acme/apps", "github", "https://api.github.com")).to.match(/not on github\.com/);
    expect(skip("/srv/git/apps", "github", "https://api.github.com")).to.match(/not a remote URL/);
    expect(skip("https://github.com/acme/apps/tree/main", "github", "https://api.github.com")).to.match(/not owner\/name/);
    expect(skip("https://github.com/acme/..", "github", "https://api.github.com")).to.match(/not a repository path/);
    expect(skip("https://gitlab.com/apps", "gitlab", "https://gitlab.com/api/v4")).to.match(/not group\/project/);
  });
});
