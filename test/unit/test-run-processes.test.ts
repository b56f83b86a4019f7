/** The leftover check counts its own test run's processes, not another run's on the same machine (test/support/processes.ts). */
import { expect } from "chai";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { engineProcesses, TEST_PROGRAMS, testRunOf } from "../support/processes";

describe("leftover processes: this test run's, not another's", () => {
  it("a process naming another run is left out; one naming this run, or none, counts", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-run-"));
    const fake = path.join(dir, "kwok"); // a test program's name, run by sleep
    fs.symlinkSync(fs.realpathSync("/bin/sleep"), fake);
    const start = (run?: string) => {
      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env.PULUMI_FLEET_TEST_RUN;
      if (run) env.PULUMI_FLEET_TEST_RUN = run;
      return spawn(fake, ["30"], { env, stdio: "ignore" });
    };
    const mine = start("run-a");
    const other = start("run-b");
    const unnamed = start();
    try {
      // Until each has exec'd (its command line is the fake's): before that /proc shows this process's environment.
      const execd = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith(fake);
      const deadline = Date.now() + 10_000;
      while (![mine, other, unnamed].every((p) => execd(p.pid!)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(testRunOf(mine.pid!)).to.equal("run-a");
      const pids = (run?: string) => new Set(engineProcesses(new Set(), TEST_PROGRAMS, run).map((p) => p.pid));
      const seen = pids("run-a");
      expect(seen.has(mine.pid!)).to.equal(true);
      expect(seen.has(unnamed.pid!)).to.equal(true);
      expect(seen.has(other.pid!)).to.equal(false);
      expect(pids(undefined).has(other.pid!)).to.equal(true); // no run given: every process counts, as before
    } finally {
      for (const p of [mine, other, unnamed]) p.kill("SIGKILL");
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
