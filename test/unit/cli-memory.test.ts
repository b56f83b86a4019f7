import { expect } from "chai";
import { cliMemoryEnv, usableMemory } from "../../automation/engine/cli-memory";

const GIB = 1024 ** 3;

describe("the engine CLI's garbage collector settings (automation/engine/cli-memory.ts)", () => {
  it("collects a third as often, under a 3 GiB soft limit on a machine of 12 GiB or more", () => {
    expect(cliMemoryEnv(24 * GIB, {})).to.deep.equal({ GOGC: "300", GOMEMLIMIT: "3072MiB" });
    expect(cliMemoryEnv(12 * GIB, {})).to.deep.equal({ GOGC: "300", GOMEMLIMIT: "3072MiB" });
  });

  it("limits the heap to a quarter of a smaller machine's memory", () => {
    expect(cliMemoryEnv(7 * GIB, {}).GOMEMLIMIT).to.equal("1792MiB");
    expect(cliMemoryEnv(2 * GIB, {}).GOMEMLIMIT).to.equal("512MiB");
  });

  it("shares the limit among the operations that run at once (a sharded run's --parallel)", () => {
    expect(cliMemoryEnv(24 * GIB, {}, 2).GOMEMLIMIT).to.equal("3072MiB");
    expect(cliMemoryEnv(24 * GIB, {}, 4).GOMEMLIMIT).to.equal("1536MiB");
    expect(cliMemoryEnv(24 * GIB, { GOMEMLIMIT: "2GiB" }, 4).GOMEMLIMIT).to.equal("2GiB");
  });

  it("leaves the user's own settings as they are", () => {
    expect(cliMemoryEnv(24 * GIB, { GOGC: "100", GOMEMLIMIT: "off" })).to.deep.equal({ GOGC: "100", GOMEMLIMIT: "off" });
    expect(cliMemoryEnv(24 * GIB, { GOGC: "off" })).to.deep.equal({ GOGC: "off", GOMEMLIMIT: "3072MiB" });
  });

  it("takes a container's memory limit where it is below the machine's", () => {
    expect(usableMemory(24 * GIB, 4 * GIB)).to.equal(4 * GIB);
    expect(usableMemory(24 * GIB, undefined)).to.equal(24 * GIB);
    expect(usableMemory(24 * GIB, 0)).to.equal(24 * GIB);
    // Unconstrained, Node reports a number above the machine's memory.
    expect(usableMemory(24 * GIB, 2 ** 63)).to.equal(24 * GIB);
  });
});
