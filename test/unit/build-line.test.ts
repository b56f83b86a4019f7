import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

describe("a tool build says one line: what it builds and how long its last build took (tools/lib.sh)", function () {
  this.timeout(300_000);
  let cache: string;
  beforeEach(() => (cache = fs.mkdtempSync(path.join(os.tmpdir(), "build-line-"))));
  afterEach(() => fs.rmSync(cache, { recursive: true, force: true }));
  const build = () =>
    spawnSync("nice", ["-n", "10", "bash", "tools/build-guard.sh"], {
      cwd: ROOT,
      env: { ...process.env, PULUMI_FLEET_CACHE: cache, PULUMI_FLEET_VERBOSE: "" },
      encoding: "utf8",
    });

  it("first build, a rebuild after its sources changed (a new directory), then a warm run that says nothing", () => {
    const first = build();
    expect(first.status, first.stderr).to.equal(0);
    expect(first.stderr).to.equal("building proc-guard (first build here: minutes; cached after)\n");
    for (const dir of fs.readdirSync(path.join(cache, "tools")).filter((d) => d.startsWith("proc-guard-"))) {
      fs.rmSync(path.join(cache, "tools", dir), { recursive: true });
    }
    expect(build().stderr).to.match(/^building proc-guard \(last build (\d+ min )?\d+ s; cached after\)\n$/);
    expect(build().stderr).to.equal("");
  });
});
