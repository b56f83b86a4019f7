/**
 * The desired state computed while the CLI starts (automation/engine/early-desired.ts): taken by the program
 * once, and only while the stack's history is as it was when the state was read.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { historyMark, startEarly } from "../../automation/engine/early-desired";
import { stateOf } from "../../automation/engine/deployed-objects";
import { FleetState } from "../../core/plan/pipeline";
import { DesiredState } from "../../core/desired/types";
import { fakeFacts } from "../support/fake-facts";
import { localStack } from "../support/fleet-fixtures";

describe("the desired state computed early (automation/engine/early-desired.ts)", function () {
  this.timeout(60_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-early-"));
  const history = path.join(dir, ".pulumi", "history", "pulumi-fleet", "s");
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("the history mark changes when an update, refresh or import adds an entry, and only then", () => {
    expect(historyMark(dir, "s")).to.equal("none");
    fs.mkdirSync(history, { recursive: true });
    const empty = historyMark(dir, "s");
    fs.writeFileSync(path.join(history, "s-1.checkpoint.json"), "{}");
    fs.writeFileSync(path.join(history, "s-1.history.json.attrs"), "{}");
    expect(historyMark(dir, "s")).to.equal(empty);
    fs.writeFileSync(path.join(history, "s-1.history.json"), "{}");
    expect(historyMark(dir, "s")).to.not.equal(empty);
    expect(historyMark(undefined, "s"), "another backend: never early").to.equal(undefined);
  });

  it("is taken once while the mark holds; the operation sees its plan and state only when taken", async () => {
    let mark = "m1";
    const seen: string[] = [];
    const start = (m: string) =>
      startEarly({
        config: localStack(path.join(dir, "render")),
        state: stateOf({}),
        mark: m,
        markNow: () => mark,
        deploy: {
          cacheRoot: path.join(dir, "git"),
          onPlanned: (_s: FleetState) => seen.push("planned"),
          onDesired: (_d: DesiredState) => seen.push("desired"),
        },
        factsOf: () => fakeFacts(),
      });
    const early = start("m1");
    await new Promise((r) => setTimeout(r, 50));
    expect(seen, "nothing reaches the operation before the program takes it").to.deep.equal([]);
    const taken = early();
    expect(taken).to.not.equal(undefined);
    expect((await taken!.desired()).deployments.length).to.be.greaterThan(0);
    expect(seen).to.deep.equal(["planned", "desired"]);
    expect(early(), "a second program run computes its own").to.equal(undefined);
    mark = "m2"; // another update finished after the state was read
    expect(start("m1")(), "a changed history: the program computes afresh").to.equal(undefined);
  });
});
