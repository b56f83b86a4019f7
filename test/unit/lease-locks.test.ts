/**
 * Locks are owned, not guessed (issue 53): the git cache lock (core/source/lock.ts) and pulumi-fleet's
 * lease beside the CLI's stack lock (automation/engine/stack-lease.ts, locks.ts). Two holders here share
 * one hostname (as two containers can) and the pid of a process that does not run on this host: nothing
 * of that decides; only a lease that is over proves a lock left over.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { GIT_LOCK_LEASE_MS, HeldLock, tryLock, withLock } from "../../core/source/lock";
import { Backend } from "../../automation/engine/backend";
import { leftoverProof, StackLockedError, withStackLock } from "../../automation/engine/locks";
import { HeldLease, LeaseStore, stackLeaseStore, takeLease } from "../../automation/engine/stack-lease";
import { LocalPostgres, startLocalPostgres } from "../../automation/clusters/local-postgres";
import { ProcessIdentity, processIdentity } from "../../core/base/process-identity";
import { spawn } from "node:child_process";

/** The identity of a process that ran here and is gone now: a holder killed with SIGKILL. */
async function killedProcess(): Promise<ProcessIdentity> {
  const child = spawn("sleep", ["30"]);
  await new Promise((r) => child.once("spawn", r));
  const id = processIdentity(child.pid!)!;
  expect(id, "/proc tells this process's identity").to.not.equal(undefined);
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
  return id;
}

const HOST = "box"; // both holders' hostname
const DEAD_PID = 999_999_99; // above pid_max: no process here has it
// The module object itself (an `import *` is a read-only view of it), to interleave a waiter inside link(2)'s step.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeFs: { linkSync: typeof fs.linkSync } = require("node:fs");
const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));
const elapse = (ms: number) => new Promise((r) => setTimeout(r, ms)); // a lease's duration passing, not an ordering

describe("the git cache lock (core/source/lock.ts)", () => {
  let file: string;
  const held: HeldLock[] = [];
  const take = (o = {}) => {
    const l = tryLock(file, { hostname: HOST, ...o });
    if (l) held.push(l);
    return l;
  };
  beforeEach(() => {
    file = path.join(tmp("pf-gitlock-"), "lock");
  });
  afterEach(() => held.splice(0).forEach((l) => l.release()));

  it("is published whole: a waiter between the owner's write and its link finds no lock (and takes it); right after, the whole owner record", () => {
    // The window of mkdir-then-write (a lock without its owner) does not exist: the record is written to a
    // temporary file, and link(2) publishes it at once or fails. Interleave a waiter at exactly that step.
    const real = nodeFs.linkSync;
    const seen: unknown[] = [];
    let second: HeldLock | undefined;
    nodeFs.linkSync = (from, to) => {
      nodeFs.linkSync = real;
      if (to === file) second = take(); // before the first holder's link: nothing at the path
      real(from, to);
    };
    try {
      expect(take(), "the first holder: the waiter took the lock before its link").to.equal(undefined);
    } finally {
      nodeFs.linkSync = real;
    }
    expect(second, "the waiter holds it").to.not.equal(undefined);
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).to.deep.equal(second!.owner);
    // Right after a link, a waiter reads the whole record.
    nodeFs.linkSync = (from, to) => {
      nodeFs.linkSync = real;
      real(from, to);
      seen.push(JSON.parse(fs.readFileSync(to as string, "utf8")));
    };
    second!.release();
    try {
      const third = take();
      expect(seen).to.deep.equal([third!.owner]);
    } finally {
      nodeFs.linkSync = real;
    }
  });

  it("a live holder renewing its lease is never removed by a waiter of the same hostname, however long it holds", async () => {
    // Leases of a second (renewed every 250 ms): long enough for a loaded machine's timers.
    const a = take({ leaseMs: 1000 })!;
    await elapse(2500); // more than two leases: a lock not renewed would have expired
    expect(take({ leaseMs: 1000 })).to.equal(undefined);
    expect(a.held()).to.equal(true);
  });

  it("a holder that stopped renewing (crashed) is removed once its lease expired; its late release leaves the new holder's lock", () => {
    const a = take()!;
    const past = new Date(Date.now() - GIT_LOCK_LEASE_MS - 1000);
    fs.utimesSync(file, past, past); // as if its last renewal was a lease ago
    const b = take()!;
    expect(b, "taken after the lease expired").to.not.equal(undefined);
    expect(a.held()).to.equal(false);
    a.release();
    expect(b.held(), "the new holder's lock survives the old holder's release").to.equal(true);
    expect(JSON.parse(fs.readFileSync(file, "utf8")).id).to.equal(b.owner.id);
  });

  it("a holder that this process sees gone (same boot and pid namespace, its pid gone) is removed at once; one seen elsewhere is not", async () => {
    const gone = await killedProcess();
    fs.writeFileSync(file, JSON.stringify({ id: "x", host: HOST, pid: gone.pid, leaseMs: GIT_LOCK_LEASE_MS, proc: gone }));
    expect(take(), "its pid and start time are gone here").to.not.equal(undefined);
    held.splice(0).forEach((l) => l.release());
    // Another container: another pid namespace, whose pids mean nothing here.
    fs.writeFileSync(file, JSON.stringify({ id: "y", host: HOST, pid: gone.pid, leaseMs: GIT_LOCK_LEASE_MS, proc: { ...gone, pidNs: "pid:[1]" } }));
    expect(take(), "another pid namespace's holder").to.equal(undefined);
  });

  it("an unexpired lock of a pid that runs nowhere here is not removed: pids prove nothing", () => {
    fs.writeFileSync(file, JSON.stringify({ id: "x", host: HOST, pid: DEAD_PID, leaseMs: GIT_LOCK_LEASE_MS }));
    expect(take()).to.equal(undefined);
  });

  it("withLock waits for the holder and runs after it", async () => {
    const order: string[] = [];
    const a = take()!;
    const waiting = withLock(file, async () => order.push("waiter"), 5000, { hostname: HOST });
    await elapse(120);
    order.push("holder done");
    a.release();
    await waiting;
    expect(order).to.deep.equal(["holder done", "waiter"]);
    expect(fs.existsSync(file)).to.equal(false);
  });
});

/** A CLI lock error as the Automation API reports it (pkg/backend/diy/lock.go's words). */
const lockError = (lockFile: string, since: number, host = HOST, pid = DEAD_PID) =>
  new Error(
    `code: 255\n stderr: error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with \`pulumi cancel\`.\n` +
      `  file://${lockFile}: created by alice@${host} (pid ${pid}) at ${new Date(since).toISOString().replace(/\.\d+Z$/, "Z")}\n`,
  );

function leaseCases(storeFor: (machine: number) => LeaseStore) {
  const LEASE = 1000; // renewed every 250 ms: long enough for a loaded machine's timers
  const opts = { hostname: HOST, leaseMs: LEASE };
  const leases: HeldLease[] = [];
  afterEach(async () => {
    for (const l of leases.splice(0)) await l.release();
  });
  const held = async (store: LeaseStore) => {
    const got = await takeLease(store, opts);
    expect(got).to.not.have.property("heldBy");
    leases.push(got as HeldLease);
    return got as HeldLease;
  };

  it("a live command's lease, renewed, is never taken over nor its lock removed by a command of the same hostname", async () => {
    const [a, b] = [storeFor(1), storeFor(2)];
    const lease = await held(a);
    await elapse(LEASE * 2.5);
    const got = await takeLease(b, opts);
    expect(got).to.have.property("heldBy").that.deep.includes({ id: lease.window.id, host: HOST });
    const lockFile = path.join(tmp("pf-cli-lock-"), "lock.json");
    fs.writeFileSync(lockFile, "{}");
    const err = await withStackLock({} as never, { stack: "team", warn: () => undefined, leases: b, lease: opts }, () =>
      Promise.reject(lockError(lockFile, Date.now())),
    ).catch((e: Error) => e);
    expect(err).to.be.instanceOf(StackLockedError);
    expect((err as Error).message).to.contain(`stack team is locked by pulumi-fleet@${HOST}`);
    expect(fs.existsSync(lockFile)).to.equal(true);
  });

  it("a command that crashed (stopped renewing): its lease expires by itself, and the lock its CLI took is removed", async () => {
    const [a, b] = [storeFor(1), storeFor(2)];
    const crashed = (await takeLease(a, opts)) as HeldLease;
    crashed.abandon();
    const lockFile = path.join(tmp("pf-cli-lock-"), "lock.json");
    fs.writeFileSync(lockFile, "{}");
    const since = crashed.window.startedAt + 100;
    await elapse(LEASE + 100);
    const warnings: string[] = [];
    let calls = 0;
    const result = await withStackLock({} as never, { stack: "team", warn: (m) => warnings.push(m), leases: b, lease: opts }, () =>
      ++calls === 1 ? Promise.reject(lockError(lockFile, since)) : Promise.resolve("done"),
    );
    expect(result).to.equal("done");
    expect(fs.existsSync(lockFile)).to.equal(false);
    expect(warnings[0]).to.match(
      new RegExp(
        `removing the lock on stack team left by alice@${HOST} \\(pid ${DEAD_PID}\\).*lease ${crashed.window.id}\\) held the stack, and that command stopped renewing`,
      ),
    );
  });

  it("a command killed where this process sees its processes: its lease is taken at once, and its CLI's lock removed", async () => {
    const [a, b] = [storeFor(1), storeFor(2)];
    const gone = await killedProcess();
    const started = Date.now() - 1000;
    await a.update(() => ({ current: { id: "killed", host: HOST, pid: gone.pid, startedAt: started, expiresAt: Date.now() + 60_000, proc: gone }, past: [] }));
    const lockFile = path.join(tmp("pf-cli-lock-"), "lock.json");
    fs.writeFileSync(lockFile, "{}");
    const warnings: string[] = [];
    let calls = 0;
    await withStackLock({} as never, { stack: "team", warn: (m) => warnings.push(m), leases: b, lease: opts }, () =>
      ++calls === 1 ? Promise.reject(lockError(lockFile, started + 500)) : Promise.resolve(),
    );
    expect(fs.existsSync(lockFile)).to.equal(false);
    expect(warnings[0]).to.contain(`(pid ${gone.pid} on ${HOST}, lease killed) is no longer running on this host`);
    // The same record from another pid namespace (another container of that hostname) is waited for.
    const c = storeFor(3);
    await c.update(() => ({
      current: { id: "elsewhere", host: HOST, pid: gone.pid, startedAt: started, expiresAt: Date.now() + 60_000, proc: { ...gone, pidNs: "pid:[1]" } },
      past: [],
    }));
    expect(await takeLease(c, opts))
      .to.have.property("heldBy")
      .that.deep.includes({ id: "elsewhere" });
  });

  it("a command that ended while its CLI was killed (out of memory): the lock taken in its lease is removed by the next command", async () => {
    const [a, b] = [storeFor(1), storeFor(2)];
    const ended = await held(a);
    const since = ended.window.startedAt + 100;
    await ended.release();
    leases.splice(leases.indexOf(ended), 1);
    const lockFile = path.join(tmp("pf-cli-lock-"), "lock.json");
    fs.writeFileSync(lockFile, "{}");
    const warnings: string[] = [];
    let calls = 0;
    await withStackLock({} as never, { stack: "team", warn: (m) => warnings.push(m), leases: b, lease: opts }, () =>
      ++calls === 1 ? Promise.reject(lockError(lockFile, since)) : Promise.resolve(),
    );
    expect(fs.existsSync(lockFile)).to.equal(false);
    expect(warnings[0]).to.match(/held the stack, and that command ended at /);
    // The same lock taken on another host (its hostname differs): no lease of that host accounts for it.
    fs.writeFileSync(lockFile, "{}");
    const err = await withStackLock({} as never, { stack: "team", warn: () => undefined, leases: b, lease: opts }, () =>
      Promise.reject(lockError(lockFile, since, "another-host")),
    ).catch((e: Error) => e);
    expect(err).to.be.instanceOf(StackLockedError);
    expect(fs.existsSync(lockFile)).to.equal(true);
  });

  it("a lock taken by a live process just after a lease ended is not that lease's leftover, for up and cancel alike (leftoverProof)", () => {
    const t0 = Date.now() - 10_000;
    const ended = {
      id: "l1",
      host: os.hostname(),
      pid: DEAD_PID,
      startedAt: t0,
      expiresAt: t0 + 60_000,
      endedAt: t0 + 5_000,
      proc: processIdentity(process.pid)!,
    };
    const book = { past: [ended] };
    const lockOf = (pid: number) => ({ where: "file:///x", user: "someone", host: os.hostname(), pid, since: new Date(t0 + 5_500).toISOString() });
    expect(leftoverProof(lockOf(process.pid), book, Date.now()), "its pid runs here: another holder, or the CLI finishing").to.equal(undefined);
    expect(leftoverProof(lockOf(DEAD_PID), book, Date.now())?.id, "no process of its pid here: the lease accounts for it").to.equal("l1");
  });

  it("a lock no lease accounts for (a plain pulumi command's) is never removed without --force-unlock, and the error says so", async () => {
    const b = storeFor(2);
    const lockFile = path.join(tmp("pf-cli-lock-"), "lock.json");
    fs.writeFileSync(lockFile, "{}");
    const before = Date.now() - 60_000;
    const err = await withStackLock({} as never, { stack: "team", warn: () => undefined, leases: b, lease: opts }, () =>
      Promise.reject(lockError(lockFile, before)),
    ).catch((e: Error) => e);
    expect((err as Error).message).to.contain("never removed without --force-unlock");
    expect(fs.existsSync(lockFile)).to.equal(true);
    let calls = 0;
    await withStackLock({} as never, { stack: "team", forceUnlock: true, warn: () => undefined, leases: b, lease: opts }, () =>
      ++calls === 1 ? Promise.reject(lockError(lockFile, before)) : Promise.resolve(),
    );
    expect(fs.existsSync(lockFile)).to.equal(false);
  });
}

describe("pulumi-fleet's lease on a stack (automation/engine/stack-lease.ts)", function () {
  this.timeout(60_000);
  describe("file backend: two machines, one state directory", () => {
    const state = tmp("pf-lease-state-");
    const machine = (n: number): Backend => ({ url: `file://${state}`, source: "test", fileDir: state, localDir: tmp(`pf-machine-${n}-`) });
    let stack = 0;
    beforeEach(() => stack++);
    leaseCases((n) => stackLeaseStore(machine(n), "pulumi-fleet", `s${stack}`));
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
    let stack = 0;
    beforeEach(() => stack++);
    leaseCases((n) => stackLeaseStore({ url: pg.url, source: "test", localDir: tmp(`pf-machine-${n}-`) }, "pulumi-fleet", `s${stack}`));
  });
});
