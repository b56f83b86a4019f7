/**
 * A process that runs several engine commands (the watcher, one up per commit) keeps none of a finished
 * run's resources: the SDK's store of a run stayed reachable through the gRPC client's DNS channel, and
 * with it the whole resource graph of every run (automation/engine/inline-program.ts releaseRun).
 * The real engine in render mode; fails without the release (the first run's stack resource survives).
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import * as v8 from "node:v8";
import * as vm from "node:vm";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { localStack } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

/** A full garbage collection, then a turn of the event loop (a WeakRef is cleared only after the job that last read it). */
async function collected(): Promise<void> {
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
  await new Promise((resolve) => setImmediate(resolve));
}

describe("a finished program run is let go (e2e, render mode)", function () {
  this.timeout(10 * 60_000);
  const work = tempDir("pf-e2e-released-");
  const options = (): ops.OperationOptions => ({
    stack: "released",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config: localStack(path.join(work, "render")),
    deploy: { cacheRoot: path.join(work, "git") },
    env: { PULUMI_CONFIG_PASSPHRASE: "e2e" },
  });
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
  });

  it("the first preview's stack resource is collected once a second preview has run", async () => {
    await ops.up(options());
    let first: WeakRef<object> | undefined;
    // Read while the program runs: the SDK sets the run's stack resource before registering anything.
    await ops.preview({
      ...options(),
      onEvent: () => {
        const s = (globalThis as { stackResource?: object }).stackResource;
        if (!first && s) first = new WeakRef(s);
      },
    });
    expect(first, "the run's stack resource was seen").to.not.equal(undefined);
    await ops.preview(options());
    await collected();
    expect(first!.deref(), "the first preview's resources are still reachable").to.equal(undefined);
  });
});
