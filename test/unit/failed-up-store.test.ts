import { expect } from "chai";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Backend } from "../../automation/engine/backend";
import { failedUpStore } from "../../automation/engine/failed-up-store";
import { LocalPostgres, startLocalPostgres } from "../../automation/clusters/local-postgres";

/** Two machines: the same backend, each its own local directory. */
const machines = (url: string, fileDir?: string): [Backend, Backend] =>
  [1, 2].map((n) => ({
    url,
    source: "test",
    fileDir,
    localDir: fs.mkdtempSync(path.join(os.tmpdir(), `pf-machine-${n}-`)),
  })) as [Backend, Backend];

describe("the last failed up's record lives in the stack's backend (automation/engine/failed-up-store.ts)", () => {
  const record = { failed: ["repo/web@c1"], message: "up of stack dev failed" };

  it("file backend: written beside the state, read from another machine, cleared by a successful up", async () => {
    const state = fs.mkdtempSync(path.join(os.tmpdir(), "pf-state-"));
    const [a, b] = machines(`file://${state}`, state);
    await failedUpStore(a, "pulumi-fleet", "dev").write(record);
    expect(fs.existsSync(path.join(state, "last-failed-up.dev.json"))).to.equal(true);
    expect(await failedUpStore(b, "pulumi-fleet", "dev").read()).to.deep.equal(record);
    expect(await failedUpStore(b, "pulumi-fleet", "other").read()).to.equal(undefined);
    await failedUpStore(b, "pulumi-fleet", "dev").clear();
    expect(await failedUpStore(a, "pulumi-fleet", "dev").read()).to.equal(undefined);
  });

  it("other backends: only this machine's directory (said in the module's comment)", async () => {
    const [a, b] = machines("s3://bucket");
    await failedUpStore(a, "pulumi-fleet", "dev").write(record);
    expect(await failedUpStore(a, "pulumi-fleet", "dev").read()).to.deep.equal(record);
    expect(await failedUpStore(b, "pulumi-fleet", "dev").read()).to.equal(undefined);
  });

  describe("PostgreSQL backend (a real server)", function () {
    this.timeout(120_000);
    let pg: LocalPostgres;
    before(async () => {
      pg = await startLocalPostgres();
    });
    after(async () => {
      await pg?.stop();
    });

    it("one row per stack: machine B reads what machine A wrote; rewritten, then cleared by B", async () => {
      const [a, b] = machines(pg.url);
      await failedUpStore(a, "pulumi-fleet", "dev").write(record);
      expect(await failedUpStore(b, "pulumi-fleet", "dev").read()).to.deep.equal(record);
      expect(await failedUpStore(b, "pulumi-fleet", "prod").read()).to.equal(undefined);
      await failedUpStore(b, "pulumi-fleet", "dev").write({ failed: [], message: "x".repeat(5000) });
      expect((await failedUpStore(a, "pulumi-fleet", "dev").read())?.message).to.have.length(2000);
      expect(pg.query("select count(*) from pulumi_fleet_failed_up").trim()).to.equal("1");
      await failedUpStore(b, "pulumi-fleet", "dev").clear();
      expect(await failedUpStore(a, "pulumi-fleet", "dev").read()).to.equal(undefined);
    });

    it("a record an earlier version left on this machine is read until the shared one replaces it", async () => {
      const [a] = machines(pg.url);
      fs.writeFileSync(path.join(a.localDir, "last-failed-up.legacy.json"), JSON.stringify(record));
      expect(await failedUpStore(a, "pulumi-fleet", "legacy").read()).to.deep.equal(record);
      await failedUpStore(a, "pulumi-fleet", "legacy").clear();
      expect(fs.existsSync(path.join(a.localDir, "last-failed-up.legacy.json"))).to.equal(false);
    });
  });
});
