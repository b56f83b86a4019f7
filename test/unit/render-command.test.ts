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

  it("prints the chart and final values for helm bundles, per cluster", () => {
    const out = render("examples", "--path", "helm", "--cluster", "eu-9", "--label", "env=dev", "--label", "region=eu");
    expect(out.status, out.stderr).to.equal(0);
    expect(out.stdout).to.contain("path: helm/chart").and.contain("cluster: eu-9").and.contain("environment: dev").and.contain("region: eu");
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
