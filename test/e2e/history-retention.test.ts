/**
 * The history retention on the real CLI (render mode): after more ups than the setting keeps, the stack's
 * history holds the newest entries and state copies and no more, `pulumi stack history` still lists them,
 * the CLI's backups are off (they would be byte for byte the history's copies) and, where the user turns
 * them on, pruned the same way; on a file backend and on a real PostgreSQL server (Pulumi's table).
 * Nothing of the state itself is touched: a following preview has nothing to do.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "pg";
import * as ops from "../../automation/operations";
import { openStack } from "../../automation/engine/stack";
import { toolchain } from "../../automation/engine/toolchain";
import { LocalPostgres, startLocalPostgres } from "../../automation/clusters/local-postgres";
import { localStack } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

/** Sets environment variables for the duration of a test, restoring what was there. */
function withEnv(vars: Record<string, string>): () => void {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

describe("history retention on the real CLI (render mode)", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-retention-");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  const options = (stack: string, extra: Partial<ops.OperationOptions> = {}): ops.OperationOptions => ({
    stack,
    stackConfigDir: path.join(work, "stacks"),
    config: localStack(path.join(work, "render", stack)),
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "retention" },
    ...extra,
  });

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
  });

  it("file backend, the defaults: 13 ups and a refresh leave 10 history entries, 3 state copies, no backups; stack history lists the 10", async () => {
    const o = options("files", { stateDir: path.join(work, "state") });
    const history = path.join(work, "state", ".pulumi", "history", "pulumi-fleet", "files");
    for (let i = 0; i < 13; i++) await ops.up(o);
    await ops.refresh(o);
    const names = fs.readdirSync(history);
    expect(names.filter((n) => n.endsWith(".history.json"))).to.have.length(10);
    expect(names.filter((n) => n.endsWith(".checkpoint.json"))).to.have.length(3);
    expect(names, "each kept with its attributes file (the CLI's file bucket), no other").to.have.length((10 + 3) * 2);
    expect(fs.existsSync(path.join(work, "state", ".pulumi", "backups", "pulumi-fleet", "files")), "the CLI's backups are off").to.equal(false);
    // The copies are the newest ones, and the newest is the state as it is now.
    const entries = names.filter((n) => n.endsWith(".history.json")).sort();
    const copies = names.filter((n) => n.endsWith(".checkpoint.json")).sort();
    expect(copies.map((n) => n.replace(".checkpoint.", "."))).to.deep.equal(entries.slice(-3).map((n) => n.replace(".history.", ".")));
    const state = fs.readFileSync(path.join(work, "state", ".pulumi", "stacks", "pulumi-fleet", "files.json"), "utf8");
    expect(fs.readFileSync(path.join(history, copies[2]), "utf8")).to.equal(state);

    const stack = await openStack({ ...o, deploy: undefined });
    const listed = await stack.history();
    expect(listed).to.have.length(10);
    expect(listed[0]).to.include({ kind: "refresh", result: "succeeded" });
    expect(listed.slice(1).every((u) => u.kind === "update" && u.result === "succeeded")).to.equal(true);
    const preview = await ops.preview(o);
    expect(preview.changes).to.not.have.any.keys("create", "update", "delete", "replace");
  });

  describe("PostgreSQL backend (a real server)", () => {
    let pg: LocalPostgres;
    let restore = () => undefined as void;
    before(async () => {
      pg = await startLocalPostgres();
    });
    after(async () => {
      restore();
      await pg?.stop();
    });

    it("the operator's setting, backups turned on by the user: 6 ups leave 4 entries, 2 copies and 2 backups in Pulumi's table", async () => {
      restore = withEnv({ PULUMI_FLEET_HISTORY_UPDATES: "4", PULUMI_FLEET_STATE_COPIES: "2", PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS: "false" });
      const o = options("team", { backendUrl: pg.url });
      for (let i = 0; i < 6; i++) await ops.up(o);
      const c = new Client({ connectionString: pg.url });
      await c.connect();
      let keys: string[];
      try {
        keys = (await c.query("select key from pulumi_state order by key")).rows.map((r) => r.key as string);
      } finally {
        await c.end();
      }
      // The CLI puts the URL's database name before its keys (postgres-table.ts pulumiKeyPrefix).
      const under = (dir: string, suffix: string) => keys.filter((k) => k.startsWith(`fleet/${dir}`) && k.endsWith(suffix));
      expect(under(".pulumi/history/pulumi-fleet/team/", ".history.json")).to.have.length(4);
      expect(under(".pulumi/history/pulumi-fleet/team/", ".checkpoint.json")).to.have.length(2);
      expect(under(".pulumi/backups/pulumi-fleet/team/", ".json")).to.have.length(2);
      expect(keys).to.include("fleet/.pulumi/stacks/pulumi-fleet/team.json");
      const stack = await openStack({ ...o, deploy: undefined });
      expect(await stack.history()).to.have.length(4);
      const preview = await ops.preview(o);
      expect(preview.changes).to.not.have.any.keys("create", "update", "delete", "replace");
    });
  });
});
