import { expect } from "chai";
import * as fs from "node:fs";
import { runInGroup } from "../../core/base/child-group";

const alive = (pid: number) => {
  try {
    return !fs
      .readFileSync(`/proc/${pid}/stat`, "utf8")
      .replace(/^.*\) /, "")
      .startsWith("Z");
  } catch {
    return false;
  }
};

describe("a child in its own process group (core/base/child-group.ts)", () => {
  it("past its deadline it is killed with what it started, and says why", async () => {
    const t0 = Date.now();
    // The grandchild prints its pid and outlives the child's own shell unless the group is killed.
    const r = await runInGroup("sh", ["-c", "sleep 30 & echo $!; wait"], { env: {}, maxOutputBytes: 1024, deadlineMs: 500, deadlineReason: "too slow" });
    expect(Date.now() - t0).to.be.lessThan(5000);
    expect(r.stopped).to.equal("too slow");
    expect(r.aborted).to.equal(undefined);
    const grandchild = Number(r.stdout.toString().trim());
    expect(grandchild).to.be.greaterThan(0);
    await new Promise((done) => setTimeout(done, 100));
    expect(alive(grandchild), "the grandchild is gone").to.equal(false);
  });

  it("output past its bound stops it; a child that ends gives its status, output and standard input's answer", async () => {
    const big = await runInGroup("sh", ["-c", "yes"], { env: {}, maxOutputBytes: 64 * 1024, name: "yes" });
    expect(big.stopped).to.equal("yes printed more than 0.0625 MiB");
    const ok = await runInGroup("sh", ["-c", "cat; echo err >&2; exit 3"], { env: {}, input: "in", maxOutputBytes: 1024 });
    expect([ok.code, ok.stdout.toString(), ok.stderr, ok.stopped]).to.deep.equal([3, "in", "err\n", undefined]);
  });
});
