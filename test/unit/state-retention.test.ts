/**
 * The history retention (automation/engine/state-retention.ts, state-retention-store.ts): which of the
 * CLI's history entries, checkpoint copies and backups a stack keeps, decided from the listing and the
 * operator's setting; then the act on a real file backend and a real PostgreSQL server with Pulumi's
 * table, where nothing of another stack and nothing that is not an entry, copy or backup is touched.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Client } from "pg";
import { Backend } from "../../automation/engine/backend";
import { historyMark } from "../../automation/engine/history-mark";
import { RETENTION_DEFAULTS, retentionOf, StackFolders, toDrop } from "../../automation/engine/state-retention";
import { pruneStackHistory, stackFolderStore, thenPruned } from "../../automation/engine/state-retention-store";
import { LocalPostgres, startLocalPostgres } from "../../automation/clusters/local-postgres";
import { pulumiKeyPrefix } from "../../automation/engine/postgres-table";

/** What the CLI writes for `n` updates of `stack` (ns times 1..n, as many digits as a real one). */
function written(stack: string, n: number, ext = "json"): StackFolders {
  const t = (i: number) => String(1_700_000_000_000_000_000n + BigInt(i));
  const seq = Array.from({ length: n }, (_, i) => i + 1);
  return {
    history: seq.flatMap((i) => [`${stack}-${t(i)}.history.${ext}`, `${stack}-${t(i)}.checkpoint.${ext}`]),
    backups: seq.map((i) => `${stack}.${t(i)}.${ext}`),
  };
}
const newest = (names: string[], k: number) => [...names].sort().slice(-k);

describe("history retention: the decision (state-retention.ts)", () => {
  it("keeps the newest `updates` entries and the newest `copies` checkpoint copies and backups, dropping the rest", () => {
    const all = written("prod", 15);
    const drop = toDrop("prod", all, { updates: 10, copies: 3 });
    const keptHistory = all.history.filter((n) => !drop.history.includes(n));
    expect(keptHistory.filter((n) => n.includes(".history."))).to.deep.equal(
      newest(
        all.history.filter((n) => n.includes(".history.")),
        10,
      ),
    );
    expect(keptHistory.filter((n) => n.includes(".checkpoint."))).to.deep.equal(
      newest(
        all.history.filter((n) => n.includes(".checkpoint.")),
        3,
      ),
    );
    expect(all.backups.filter((n) => !drop.backups.includes(n))).to.deep.equal(newest(all.backups, 3));
    expect(drop.history).to.have.length(5 + 12);
    expect(drop.backups).to.have.length(12);
  });

  it("orders by the time in the name as a number, not as text (a shorter number is older)", () => {
    const drop = toDrop("s", { history: ["s-999.history.json", "s-1000.history.json"], backups: [] }, { updates: 1, copies: 1 });
    expect(drop.history).to.deep.equal(["s-999.history.json"]);
  });

  it("within the setting, drops nothing; compressed names (.gz, .zst) are entries, copies and backups too", () => {
    expect(toDrop("s", written("s", 3), RETENTION_DEFAULTS)).to.deep.equal({ history: [], backups: [] });
    for (const ext of ["json.gz", "json.zst"]) {
      const drop = toDrop("s", written("s", 5, ext), { updates: 4, copies: 2 });
      expect(drop.history, ext).to.have.length(1 + 3);
      expect(drop.backups, ext).to.have.length(3);
    }
  });

  it("never drops a name of another stack or of another form (a stack whose name starts the same, a user's file, the CLI's attributes)", () => {
    const other = written("prod-eu", 5);
    const stray = ["prod-1.history.json.attrs", "notes.txt", "prod-x.history.json", "prodx-1.history.json", "prod.1.json.bak"];
    const drop = toDrop("prod", { history: [...other.history, ...stray], backups: [...other.backups, ...stray] }, { updates: 1, copies: 1 });
    expect(drop).to.deep.equal({ history: [], backups: [] });
    // A name with dots (a shard stack, `<env>.<shard>`) is matched as itself, not as a pattern.
    expect(toDrop("a.b", { history: ["axb-1.history.json", "axb-2.history.json"], backups: [] }, { updates: 1, copies: 1 }).history).to.deep.equal([]);
  });

  it("always keeps at least the newest entry (the history mark, the shards' skip and the CLI's latest config read it)", () => {
    const drop = toDrop("s", written("s", 3), { updates: 0, copies: 0 });
    expect(drop.history).to.not.include(
      written("s", 3)
        .history.filter((n) => n.includes(".history."))
        .pop(),
    );
  });

  it("the setting: defaults 10 and 3; PULUMI_FLEET_HISTORY_UPDATES and PULUMI_FLEET_STATE_COPIES; anything but a whole number from 1 is an error naming the variable", () => {
    expect(retentionOf({})).to.deep.equal({ updates: 10, copies: 3 });
    expect(retentionOf({ PULUMI_FLEET_HISTORY_UPDATES: "50", PULUMI_FLEET_STATE_COPIES: "1" })).to.deep.equal({ updates: 50, copies: 1 });
    for (const bad of ["0", "-1", "2.5", "ten"]) {
      expect(() => retentionOf({ PULUMI_FLEET_STATE_COPIES: bad }), bad).to.throw(/PULUMI_FLEET_STATE_COPIES/);
      expect(() => retentionOf({ PULUMI_FLEET_HISTORY_UPDATES: bad }), bad).to.throw(/PULUMI_FLEET_HISTORY_UPDATES/);
    }
  });
});

describe("history retention: the act (state-retention-store.ts)", function () {
  this.timeout(120_000);
  const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

  it("runs the prune after the engine command, also after one that failed, but not after a lock error or a stop", async () => {
    const pruned: string[] = [];
    const prune = async () => void pruned.push("pruned");
    expect(
      await thenPruned(
        async () => "ok",
        prune,
        () => false,
      ),
    ).to.equal("ok");
    await thenPruned(
      async () => Promise.reject(new Error("update failed")),
      prune,
      () => false,
    ).catch(() => undefined);
    expect(pruned).to.have.length(2);
    const locked = new Error("the stack is currently locked by 1 lock(s)\n  file:///x/.pulumi/locks/a.json: created by u@h (pid 1) at 2026-01-01T00:00:00Z\n");
    await thenPruned(
      async () => Promise.reject(locked),
      prune,
      () => false,
    ).catch(() => undefined);
    await thenPruned(
      async () => "ok",
      prune,
      () => true,
    );
    expect(pruned).to.have.length(2);
  });

  describe("file backend", () => {
    const dir = tmp("pf-retention-");
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const folder = (kind: string, stack: string) => path.join(dir, ".pulumi", kind, "pulumi-fleet", stack);
    const put = (stack: string, listing: StackFolders) => {
      for (const [kind, names] of Object.entries(listing)) {
        fs.mkdirSync(folder(kind, stack), { recursive: true });
        // Each with the attributes file the CLI's file bucket writes beside it.
        for (const n of names) for (const f of [n, `${n}.attrs`]) fs.writeFileSync(path.join(folder(kind, stack), f), "{}");
      }
    };
    const backend: Backend = { url: `file://${dir}`, source: "test", fileDir: dir, localDir: dir };

    it("prunes the stack's own folders to the setting; the state, another stack's folders and stray files stay", async () => {
      put("prod", written("prod", 15));
      put("prod.eu", written("prod.eu", 15));
      fs.writeFileSync(path.join(folder("history", "prod"), "notes.txt"), "mine");
      fs.mkdirSync(path.join(dir, ".pulumi", "stacks", "pulumi-fleet"), { recursive: true });
      fs.writeFileSync(path.join(dir, ".pulumi", "stacks", "pulumi-fleet", "prod.json"), "{}");
      const markBefore = historyMark(dir, "prod");
      const removed = await pruneStackHistory(stackFolderStore(backend, "prod")!, "prod", { updates: 10, copies: 3 });
      expect(removed).to.deep.equal({ history: 5 + 12, backups: 12 });
      expect(fs.readdirSync(folder("history", "prod")).filter((n) => n.endsWith(".history.json"))).to.have.length(10);
      expect(fs.readdirSync(folder("history", "prod")).filter((n) => n.endsWith(".checkpoint.json"))).to.have.length(3);
      expect(fs.readdirSync(folder("history", "prod"))).to.include("notes.txt");
      expect(fs.readdirSync(folder("backups", "prod"))).to.have.length(3 * 2);
      expect(fs.readdirSync(folder("history", "prod")), "each kept name with its attributes, no other").to.have.length((10 + 3) * 2 + 1);
      expect(fs.readdirSync(folder("history", "prod.eu"))).to.have.length(30 * 2);
      expect(fs.readdirSync(folder("backups", "prod.eu"))).to.have.length(15 * 2);
      expect(fs.existsSync(path.join(dir, ".pulumi", "stacks", "pulumi-fleet", "prod.json"))).to.equal(true);
      // The history mark still changes when an update adds an entry, pruned or not (automation/engine/history-mark.ts).
      const markPruned = historyMark(dir, "prod");
      fs.writeFileSync(path.join(folder("history", "prod"), "prod-1800000000000000000.history.json"), "{}");
      await pruneStackHistory(stackFolderStore(backend, "prod")!, "prod", { updates: 10, copies: 3 });
      expect(historyMark(dir, "prod")).to.not.equal(markPruned).and.to.not.equal(markBefore);
      expect(fs.readdirSync(folder("history", "prod")).filter((n) => n.endsWith(".history.json"))).to.have.length(10);
    });

    it("a stack that never wrote history, or a name with an organization, has nothing to prune", async () => {
      expect(await pruneStackHistory(stackFolderStore(backend, "new")!, "new")).to.deep.equal({ history: 0, backups: 0 });
      expect(stackFolderStore(backend, "org/proj/s")).to.equal(undefined);
      expect(stackFolderStore({ url: "s3://bucket", source: "test", localDir: dir }, "s")).to.equal(undefined);
    });
  });

  describe("PostgreSQL backend (a real server, Pulumi's table)", () => {
    let pg: LocalPostgres;
    before(async () => {
      pg = await startLocalPostgres();
    });
    after(async () => {
      await pg?.stop();
    });

    it("the CLI's key prefix is the URL's path (its database name), as the CLI prefixes a DIY bucket", () => {
      expect(pulumiKeyPrefix("postgres://u:p@db:5432/fleet?sslmode=disable&table=t")).to.equal("fleet/");
      expect(pulumiKeyPrefix("postgres://u:p@db:5432/team%20a")).to.equal("team a/");
      expect(pulumiKeyPrefix("postgres://db:5432")).to.equal("");
    });

    it("deletes exactly the rows of the stack's folders the decision drops, in the URL's table", async () => {
      const table = "fleet_state";
      const url = `${pg.url}&table=${table}`;
      const c = new Client({ connectionString: pg.url });
      await c.connect();
      // As the CLI writes them: after its prefix, the database name (test/e2e/history-retention.test.ts sees it).
      const keys = (stack: string, db = "fleet") => {
        const l = written(stack, 15);
        return [
          ...l.history.map((n) => `${db}/.pulumi/history/pulumi-fleet/${stack}/${n}`),
          ...l.backups.map((n) => `${db}/.pulumi/backups/pulumi-fleet/${stack}/${n}`),
          `${db}/.pulumi/history/pulumi-fleet/${stack}/nested/${stack}-1.history.json`,
          `${db}/.pulumi/stacks/pulumi-fleet/${stack}.json`,
        ];
      };
      try {
        // Pulumi's schema (pkg/backend/diy/postgres/schema.sql).
        await c.query(`create table ${table} (key text primary key, data json not null, updated_at timestamptz not null default now())`);
        const others = [...keys("prod.eu"), ...keys("prodx"), ...keys("prod", "otherdb")];
        for (const k of [...keys("prod"), ...others]) await c.query(`insert into ${table} (key, data) values ($1, '{}')`, [k]);
        const backend: Backend = { url, source: "test", localDir: tmp("pf-machine-") };
        const removed = await pruneStackHistory(stackFolderStore(backend, "prod")!, "prod", { updates: 10, copies: 3 });
        expect(removed).to.deep.equal({ history: 5 + 12, backups: 12 });
        const left = (await c.query(`select key from ${table} order by key`)).rows.map((r) => r.key as string);
        const prod = left.filter((k) => k.startsWith("fleet/") && (k.includes("/prod/") || k.endsWith("/prod.json")));
        expect(prod.filter((k) => k.endsWith(".history.json") && !k.includes("/nested/"))).to.have.length(10);
        expect(prod.filter((k) => k.endsWith(".checkpoint.json"))).to.have.length(3);
        expect(prod.filter((k) => k.startsWith("fleet/.pulumi/backups/"))).to.have.length(3);
        expect(left).to.include.members(["fleet/.pulumi/stacks/pulumi-fleet/prod.json", "fleet/.pulumi/history/pulumi-fleet/prod/nested/prod-1.history.json"]);
        expect(left).to.include.members(others);
      } finally {
        await c.end();
      }
    });
  });
});
