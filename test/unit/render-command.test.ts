import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { CONFIGMAP, TestRepo } from "../support/git-fixtures";

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
    expect(out.stdout).to.contain("# style: helm").and.contain("kind: ConfigMap").and.contain("eu-9").and.match(/# deploymentID: s-[0-9a-f]+:[0-9a-f]{64}/);
    const k = render("examples", "--path", "kustomize", "--cluster", "prod-1", "--label", "env=prod");
    expect(k.status, k.stderr).to.equal(0);
    expect(k.stdout).to.contain("# style: kustomize").and.contain("kind: ConfigMap");
  });

  it("reads a directory as it is on disk, uncommitted edits included", () => {
    const repo = new TestRepo({ "cm.yaml": CONFIGMAP("committed") });
    require("node:fs").writeFileSync(path.join(repo.dir, "cm.yaml"), CONFIGMAP("on-disk"));
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
