import { expect } from "chai";
import * as os from "node:os";
import { lockHolders, withStackLock } from "../../automation/engine/locks";
import { resolveBackend, redactedUrl } from "../../automation/engine/backend";

// As the CLI prints it (pkg/backend/diy/lock.go), inside the Automation API's CommandError text.
const ERROR = `code: 255
 stdout: Updating (team):
 stderr: error: the stack is currently locked by 2 lock(s). Either wait for the other process(es) to end or delete the lock file with \`pulumi cancel\`.
  postgres://****:****@127.0.0.1:5432/fleet/.pulumi/locks/organization/pulumi-fleet/team/0b6c.json?sslmode=disable: created by alice@ci-7 (pid 4242) at 2026-11-23T10:00:00Z
  file:///srv/state/.pulumi/locks/organization/pulumi-fleet/team/9f1e.json: created by bob@laptop (pid 17) at 2026-11-23T10:01:02Z
`;

describe("stack locks", () => {
  it("reads every holder from the CLI's error, and nothing from other errors", () => {
    expect(lockHolders(ERROR)).to.deep.equal([
      {
        where: "postgres://****:****@127.0.0.1:5432/fleet/.pulumi/locks/organization/pulumi-fleet/team/0b6c.json?sslmode=disable",
        user: "alice",
        host: "ci-7",
        pid: 4242,
        since: "2026-11-23T10:00:00Z",
      },
      {
        where: "file:///srv/state/.pulumi/locks/organization/pulumi-fleet/team/9f1e.json",
        user: "bob",
        host: "laptop",
        pid: 17,
        since: "2026-11-23T10:01:02Z",
      },
    ]);
    expect(lockHolders("error: resource failed to create")).to.equal(undefined);
  });

  it("a live holder fails at once with the stack and holder named, or is waited for with --wait-lock", async () => {
    // This process, on this host, since now: alive, so never removed.
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const live = ERROR.replace(/\n {2}file:.*\n/, "\n")
      .replace("locked by 2", "locked by 1")
      .replace("ci-7", os.hostname())
      .replace("4242", String(process.pid))
      .replace("2026-11-23T10:00:00Z", now);
    const failing = () => Promise.reject(new Error(live));
    const noStack = {} as never;
    const err = await withStackLock(noStack, { stack: "team", warn: () => undefined }, failing).catch((e: Error) => e);
    expect((err as Error).message).to.contain(`stack team is locked by alice@${os.hostname()} (pid ${process.pid}) since ${now}`);
    let calls = 0;
    const warnings: string[] = [];
    const result = await withStackLock(noStack, { stack: "team", waitLock: true, pollMs: 10, warn: (m) => warnings.push(m) }, () =>
      ++calls < 4 ? Promise.reject(new Error(live)) : Promise.resolve("done"),
    );
    expect(result).to.equal("done");
    expect(calls).to.equal(4);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.contain("waiting for it (--wait-lock)");
  });

  it("other errors pass through untouched", async () => {
    const err = await withStackLock({} as never, { stack: "s", warn: () => undefined }, () => Promise.reject(new Error("boom"))).catch((e: Error) => e);
    expect((err as Error).message).to.equal("boom");
  });
});

describe("the state backend", () => {
  it("PULUMI_BACKEND_URL wins, then Pulumi.yaml, then PULUMI_FLEET_STATE_DIR, then the embedded default", () => {
    expect(resolveBackend({}, { PULUMI_BACKEND_URL: "postgres://u:p@db/fleet" })).to.include({
      url: "postgres://u:p@db/fleet",
      source: "PULUMI_BACKEND_URL",
      fileDir: undefined,
    });
    expect(resolveBackend({}, { PULUMI_FLEET_STATE_DIR: "/srv/state" })).to.include({ url: "file:///srv/state", fileDir: "/srv/state", localDir: "/srv" });
    expect(resolveBackend({}, {}).url).to.match(/^file:\/\/.*\/\.pulumi-fleet\/state$/);
    expect(resolveBackend({ stateDir: "/tmp/s" }, { PULUMI_BACKEND_URL: "postgres://x" }).url).to.equal("file:///tmp/s");
    expect(redactedUrl("postgres://fleet:secret@127.0.0.1:5432/fleet")).to.equal("postgres://fleet:***@127.0.0.1:5432/fleet");
  });
});
