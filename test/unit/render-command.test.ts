import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { CONFIGMAP, gitRepoConfig, TestRepo } from "../support/git-fixtures";
import { planBundles } from "../../core/plan/pipeline";

const ROOT = path.resolve(__dirname, "../..");
const render = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, "scripts/run-ts.js"), path.join(ROOT, "scripts/render.ts"), ...args], { encoding: "utf8", cwd: ROOT });

describe("render command (like fleet test)", () => {
  it("prints the matched target and the manifests with overlays and namespace rules", () => {
    const out = render("examples", "--path", "simple", "--cluster", "prod-1", "--label", "env=prod");
    expect(out.status, out.stderr).to.equal(0);
    expect(out.stdout).to.contain("# Matched: default (customizations: prod)");
    expect(out.stdout).to.contain("greeting: hello from production");
    expect(out.stdout).to.contain("replicas: 3");
    expect(out.stdout).to.contain("namespace: simple");
  });

  it("prints the rendered manifests of helm and kustomize bundles, per cluster", () => {
    const out = render("examples", "--path", "helm", "--cluster", "eu-9", "--label", "env=dev", "--label", "region=eu");
    expect(out.status, out.stderr).to.equal(0);
    expect(out.stdout)
      .to.contain("# style: helm")
      .and.contain("kind: ConfigMap")
      .and.contain("eu-9")
      .and.match(/# deploymentID: s-[0-9a-f]+:[0-9a-f]{64}/);
    const k = render("examples", "--path", "kustomize", "--cluster", "prod-1", "--label", "env=prod");
    expect(k.status, k.stderr).to.equal(0);
    expect(k.stdout).to.contain("# style: kustomize").and.contain("kind: ConfigMap");
  });

  it("renders a bundle whose dependsOn is outside the paths read, warning by name, as fleet test does; up's planning still refuses it", async () => {
    // Fleet v0.16.0: dependsOn is checked only by the agent (internal/cmd/agent/deployer/deployer.go, checkDependency);
    // `fleet test` (internal/cmd/cli/test.go) matches targets and renders, never looking at dependsOn.
    const repo = new TestRepo({ "crds/cm.yaml": CONFIGMAP("crds"), "app/fleet.yaml": "dependsOn: [{name: web-crds}]\n", "app/cm.yaml": CONFIGMAP("app") });
    const out = render(repo.dir, "--name", "web", "--path", "app");
    expect(out.status, out.stdout + out.stderr).to.equal(0);
    expect(out.stdout)
      .to.contain("# Bundle: web-app (app)")
      .and.contain("name: app")
      .and.contain("# warning: app/fleet.yaml: dependsOn web-crds, which is not among the bundles read: rendered without it");
    // Read with it, the dependency is met: no warning.
    const all = render(repo.dir, "--name", "web", "--path", "app", "--path", "crds");
    expect(all.status, all.stdout + all.stderr).to.equal(0);
    expect(all.stdout).to.contain("name: crds").and.not.contain("# warning");
    // Without the option (up's planning) the dependency that is not deployed fails the bundle.
    const cluster = { name: "local", labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false };
    const up = await planBundles(
      [{ dir: repo.dir, repo: gitRepoConfig({ name: "web", repo: repo.dir, paths: ["app"], targets: [{ name: "default", clusterGroup: "default" }] }) }],
      { clusters: [cluster], clusterGroups: [{ name: "default", labels: {}, selector: {} }] },
    );
    expect(up.plan.entries).to.deep.equal([]);
    expect(
      up.failures
        .list()
        .map((f) => f.message)
        .join("\n"),
    ).to.contain("dependsOn web-crds, which is not deployed to this cluster");
  });

  it("reads a directory as it is on disk, uncommitted edits included", () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("committed") });
    fs.writeFileSync(path.join(repo.dir, "cm.yaml"), CONFIGMAP("on-disk"));
    const out = render(repo.dir, "--name", "web");
    expect(out.status, out.stderr).to.equal(0);
    expect(out.stdout).to.contain("name: on-disk").and.not.contain("name: committed");
  });

  it("reads a git URL at a branch, and fails with the GitRepo named for an unknown one", () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("from-git") });
    repo.git("branch", "release");
    const ok = render(repo.url(), "--branch", "release", "--name", "web");
    expect(ok.status, ok.stderr).to.equal(0);
    expect(ok.stdout).to.contain("# Bundle: web (.)").and.contain("name: from-git");
    const bad = render(repo.url(), "--branch", "nope", "--name", "web");
    expect(bad.status).to.equal(1);
    expect(bad.stderr).to.contain('gitRepo web: branch "nope" not found');
  });
});
