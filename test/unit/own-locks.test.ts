/**
 * The lock a stopped command's own CLI left (automation/engine/own-locks.ts): removed at the stop, on
 * a file backend and a real PostgreSQL backend, and nothing else is.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawn } from "node:child_process";
import { Client } from "pg";
import { Backend } from "../../automation/engine/backend";
import { afterStop } from "../../automation/engine/locks";
import { ownLeftovers, StackLock, stackLockStore } from "../../automation/engine/own-locks";
import { HeldLease, LeaseWindow, stackLeaseStore, takeLease } from "../../automation/engine/stack-lease";
import { LocalPostgres, startLocalPostgres } from "../../automation/clusters/local-postgres";

const DEAD_PID = 999_999_99; // above pid_max: no process here has it
const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

describe("the lock a stopped command's CLI left (automation/engine/own-locks.ts)", function () {
  this.timeout(120_000);

  it("ownLeftovers: only locks of this host, taken since the lease started, by processes that are gone", () => {
    const t0 = Date.now() - 10_000;
    const lease: LeaseWindow = { id: "l", host: "box", pid: 1, startedAt: t0, expiresAt: t0 + 60_000 };
    const lock = (key: string, hostname: string, at: number, pid = DEAD_PID): StackLock => ({ key, hostname, pid, timestamp: new Date(at).toISOString() });
    const locks = [
      lock("own", "box", t0 + 500),
      lock("other-host", "elsewhere", t0 + 500),
      lock("before", "box", t0 - 60_000),
      lock("live", "box", t0 + 500, process.pid),
    ];
    expect(ownLeftovers(locks, lease, Date.now(), (pid) => pid === process.pid).map((l) => l.key)).to.deep.equal(["own"]);
  });

  const cases = (backendOf: () => Backend, writeLock: (stack: string, id: string, lock: object) => Promise<void>) => {
    let n = 0;
    const stack = () => `stopped${n}`;
    beforeEach(() => n++);
    const held = async () => (await takeLease(stackLeaseStore(backendOf(), "pulumi-fleet", stack()), { hostname: os.hostname() })) as HeldLease;

    it("the CLI died in its window (a lock left): the lock is removed at the stop and the lease ended; another host's lock is kept", async () => {
      const lease = await held();
      const locks = stackLockStore(backendOf(), "pulumi-fleet", stack())!;
      await writeLock(stack(), "mine", { pid: DEAD_PID, username: "u", hostname: os.hostname(), timestamp: new Date().toISOString() });
      await writeLock(stack(), "theirs", { pid: DEAD_PID, username: "u", hostname: "another-host", timestamp: new Date().toISOString() });
      await afterStop(lease, { stack: stack(), warn: (m) => expect.fail(m), locks });
      expect((await locks.list()).map((l) => l.hostname)).to.deep.equal(["another-host"]);
      const book = await stackLeaseStore(backendOf(), "pulumi-fleet", stack()).read();
      expect(book?.current?.endedAt, "the lease is ended").to.be.a("number");
    });

    it("a lock of this lease's time still held by a live process (the CLI finishing): kept, and the lease left to expire", async () => {
      const lease = await held();
      const locks = stackLockStore(backendOf(), "pulumi-fleet", stack())!;
      const cli = spawn("sleep", ["30"]);
      await new Promise((r) => cli.once("spawn", r));
      try {
        await writeLock(stack(), "finishing", { pid: cli.pid, username: "u", hostname: os.hostname(), timestamp: new Date().toISOString() });
        await afterStop(lease, { stack: stack(), warn: (m) => expect.fail(m), locks });
        expect(await locks.list()).to.have.length(1);
        const book = await stackLeaseStore(backendOf(), "pulumi-fleet", stack()).read();
        expect(book?.current?.endedAt, "the lease is not ended").to.equal(undefined);
      } finally {
        cli.kill("SIGKILL");
      }
    });
  };

  describe("file backend", () => {
    const state = tmp("pf-own-locks-");
    const backend = (): Backend => ({ url: `file://${state}`, source: "test", fileDir: state, localDir: tmp("pf-machine-") });
    cases(backend, async (stack, id, lock) => {
      const dir = path.join(state, ".pulumi/locks/organization/pulumi-fleet", stack);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `${id}.json`), JSON.stringify(lock));
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
    const backend = (): Backend => ({ url: pg.url, source: "test", localDir: tmp("pf-machine-") });
    cases(backend, async (stack, id, lock) => {
      const c = new Client({ connectionString: pg.url });
      await c.connect();
      try {
        // Pulumi's schema (pkg/backend/diy/postgres/schema.sql); its keys after the database name, as the CLI writes them (test/e2e/history-retention.test.ts).
        await c.query("create table if not exists pulumi_state (key text primary key, data json not null, updated_at timestamptz not null default now())");
        await c.query("insert into pulumi_state (key, data) values ($1, $2)", [
          `fleet/.pulumi/locks/organization/pulumi-fleet/${stack}/${id}.json`,
          JSON.stringify(lock),
        ]);
      } finally {
        await c.end();
      }
    });
  });
});
