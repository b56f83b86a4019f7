import { expect } from "chai";
import { parseStackConfig } from "../../core/config/stack";
import { gitRepoEntry } from "../../core/config/git-repo";
import { errorOf } from "../support/errors";

const FILE = "stacks/Pulumi.test.yaml";
const parse = (raw: Record<string, unknown>) => parseStackConfig(raw, FILE, "/project");

describe("stack configuration", () => {
  it("names the file and field path of a bad selector operator", () => {
    const msg = errorOf(() =>
      parse({
        gitRepos: [
          { name: "a", repo: "https://example.com/a.git" },
          {
            name: "b",
            repo: "https://example.com/b.git",
            targets: [{ clusterSelector: { matchExpressions: [{ key: "env", operator: "in", values: ["x"] }] } }],
          },
        ],
      }),
    );
    expect(msg).to.equal(
      `${FILE}: gitRepos[1].targets[0].clusterSelector.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist (got "in")`,
    );
  });

  it("a GitRepo entry built by a command (gitRepoEntry) is what the stack file naming only name and repo reads", () => {
    const read = parseStackConfig({ gitRepos: [{ name: "apps", repo: "https://git.example.com/apps.git" }] }, "stacks/Pulumi.test.yaml", "/project");
    expect(gitRepoEntry("apps", "https://git.example.com/apps.git")).to.deep.equal(read.gitRepos[0]);
  });

  it("rejects unknown fields and lists the valid ones", () => {
    const msg = errorOf(() => parse({ clusters: [{ name: "c1", lables: { a: "b" } }] }));
    expect(msg).to.contain("clusters[0].lables: unknown field; valid fields are: agent, annotations, apiVersions, context");
  });

  it("rejects duplicate names, invalid names and invalid label values", () => {
    expect(errorOf(() => parse({ clusters: [{ name: "c1" }, { name: "c1" }] }))).to.contain("clusters[1]: duplicate name");
    expect(errorOf(() => parse({ clusters: [{ name: "C_1" }] }))).to.contain("clusters[0].name: invalid name");
    expect(errorOf(() => parse({ clusters: [{ name: "c1", labels: { user: "system:kube-controller-manager" } }] }))).to.contain(
      'clusters[0].labels.user: invalid label value "system:kube-controller-manager"',
    );
  });

  it("kubeVersion and apiVersions: render mode only, checked as Helm's --kube-version and --api-versions", () => {
    const c = parse({
      renderDir: "r",
      clusters: [{ name: "c1", kubeVersion: "v1.31.2", apiVersions: ["example.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"] }],
    }).clusters[0];
    expect([c.kubeVersion, c.apiVersions]).to.deep.equal(["v1.31.2", ["example.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"]]);
    expect(errorOf(() => parse({ clusters: [{ name: "c1", kubeVersion: "v1.31.2" }] }))).to.equal(
      `${FILE}: clusters[0].kubeVersion: applies in render mode only (renderDir): a live cluster's version and API versions are read from it, as Fleet's agent does`,
    );
    expect(errorOf(() => parse({ renderDir: "r", clusters: [{ name: "c1", kubeVersion: "latest" }] }))).to.contain(
      "clusters[0].kubeVersion: must be a Kubernetes version such as v1.30.2 or 1.30",
    );
    expect(errorOf(() => parse({ renderDir: "r", clusters: [{ name: "c1", apiVersions: ["not a version"] }] }))).to.contain(
      "clusters[0].apiVersions[0]: must be group/version or group/version/Kind",
    );
  });

  it("refuses credentials in repository URLs", () => {
    expect(errorOf(() => parse({ gitRepos: [{ name: "a", repo: "https://user:tok@example.com/a.git" }] }))).to.contain(
      "gitRepos[0].repo: must not embed credentials",
    );
  });

  it("requires known_hosts with an SSH key and rejects paths escaping the repository", () => {
    expect(errorOf(() => parse({ gitRepos: [{ name: "a", repo: "git@example.com:a.git", auth: { sshPrivateKey: "KEY" } }] }))).to.contain(
      "gitRepos[0].auth.knownHosts: is required",
    );
    expect(errorOf(() => parse({ gitRepos: [{ name: "a", repo: "https://example.com/a", paths: ["../x"] }] }))).to.contain(
      'gitRepos[0].paths[0]: path "../x" escapes',
    );
  });

  it("resolves local repository paths against the project directory and keeps typed values", () => {
    const cfg = parse({
      clusters: [{ name: "c1", labels: { env: "dev" }, kubeconfig: "apiVersion: v1" }],
      clusterGroups: [{ name: "dev", selector: { matchLabels: { env: "dev" } } }],
      gitRepos: [{ name: "a", repo: "./examples", branch: "main", paths: ["apps/*"], targets: [{ clusterGroup: "dev" }] }],
    });
    expect(cfg.gitRepos[0].repo).to.equal("/project/examples");
    expect(cfg.gitRepos[0].targets).to.deep.equal([{ clusterGroup: "dev" }]);
    expect(cfg.clusters[0].kubeconfig).to.equal("apiVersion: v1");
  });
});
