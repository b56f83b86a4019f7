import { expect } from "chai";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
const PINNED = "v3.259.0";

/** tools/pulumi-choice.sh's pure decision: override, found path, its version, language host beside it. */
function choice(override: string, found: string, version: string, langhost: boolean): string {
  const script = `source tools/pulumi-choice.sh && pulumi_choice "$@"`;
  return execFileSync("bash", ["-c", script, "choice", override, found, version, langhost ? "1" : "0", PINNED], { cwd: ROOT, encoding: "utf8" }).trim();
}

describe("which pulumi CLI runs (tools/pulumi-choice.sh)", () => {
  it("uses a CLI on PATH of the pinned major and at least the pinned version, with its language host", () => {
    expect(choice("", "/usr/bin/pulumi", "v3.259.0", true)).to.equal("use v3.259.0 at /usr/bin/pulumi");
    expect(choice("", "/usr/bin/pulumi", "v3.300.1", true)).to.equal("use v3.300.1 at /usr/bin/pulumi");
  });

  it("builds one when none fits, saying why", () => {
    expect(choice("", "", "", false)).to.equal("build no pulumi on PATH");
    expect(choice("", "/usr/bin/pulumi", "v3.100.0", true)).to.equal("build /usr/bin/pulumi is v3.100.0, outside >= v3.259.0 < v4.0.0");
    expect(choice("", "/usr/bin/pulumi", "v3.258.9", true)).to.match(/^build .* outside/);
    expect(choice("", "/usr/bin/pulumi", "v4.0.0", true)).to.match(/^build .* outside/);
    expect(choice("", "/usr/bin/pulumi", "garbage", true)).to.equal("build /usr/bin/pulumi reports no version (garbage)");
    expect(choice("", "/usr/bin/pulumi", "v3.259.0", false)).to.equal("build /usr/bin/pulumi has no pulumi-language-nodejs beside it");
  });

  it("PULUMI_FLEET_USE_SYSTEM_PULUMI=0 always builds; =1 uses PATH's whatever its version", () => {
    expect(choice("0", "/usr/bin/pulumi", "v3.259.0", true)).to.equal("build PULUMI_FLEET_USE_SYSTEM_PULUMI=0");
    expect(choice("1", "/usr/bin/pulumi", "v3.1.0", false)).to.equal("use v3.1.0 at /usr/bin/pulumi (PULUMI_FLEET_USE_SYSTEM_PULUMI=1)");
  });

  describe("tools/build-pulumi.sh with a pulumi on PATH (real script, warm cache)", function () {
    this.timeout(300_000);
    let dir: string;
    beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-choice-"))));
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
    const run = () => {
      const out = execFileSync("bash", ["tools/build-pulumi.sh", "--env"], {
        cwd: ROOT,
        encoding: "utf8",
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, PULUMI_FLEET_USE_SYSTEM_PULUMI: "", PULUMI_FLEET_VERBOSE: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      return /^export PULUMI_FLEET_PULUMI_ROOT=(.*)$/m.exec(out)![1].replace(/^'(.*)'$/, "$1");
    };
    const builtRoot = () => run(); // no other pulumi on PATH here (none installed on the machine)

    it("refuses an old CLI on PATH and runs its own build", () => {
      const own = builtRoot();
      fs.writeFileSync(path.join(dir, "pulumi"), "#!/bin/sh\necho v3.100.0\n", { mode: 0o755 });
      fs.writeFileSync(path.join(dir, "pulumi-language-nodejs"), "#!/bin/sh\n", { mode: 0o755 });
      expect(run()).to.equal(own);
    });

    it("uses a compatible CLI on PATH (the real build, copied outside the cache)", () => {
      const own = builtRoot();
      for (const f of ["pulumi", "pulumi-language-nodejs"]) fs.copyFileSync(path.join(own, "bin", f), path.join(dir, f));
      fs.chmodSync(path.join(dir, "pulumi"), 0o755);
      fs.chmodSync(path.join(dir, "pulumi-language-nodejs"), 0o755);
      // The root the Automation API and proc-guard run <root>/bin/pulumi of: links to the CLI on PATH and its
      // language host, wherever those are (this directory is not named bin: a root of its parent ran nothing).
      const root = run();
      for (const f of ["pulumi", "pulumi-language-nodejs"]) expect(fs.realpathSync(path.join(root, "bin", f)), f).to.equal(fs.realpathSync(path.join(dir, f)));
    });
  });
});
