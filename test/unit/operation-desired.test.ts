/**
 * The desired state an operation computes and hands its program (automation/operation/desired.ts): its
 * plan seen before it settles, the crash journal touched only once the program is given it (under the
 * stack's lock), and an early computation kept only while the stack's history is unchanged
 * (automation/engine/history-mark.ts).
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { historyMark, stillHolds } from "../../automation/engine/history-mark";
import { stateOf } from "../../automation/engine/deployed-objects";
import { DesiredRun } from "../../automation/operation/desired";
import { JournalHooks } from "../../core/desired/facts";
import { discovered, fakeFacts, nothingExists } from "../support/fake-facts";
import { localStack } from "../support/fleet-fixtures";

const KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n";

describe("the desired state an operation computes (automation/operation/desired.ts)", function () {
  this.timeout(60_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-desired-"));
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
    expect(historyMark(undefined, "s"), "another backend: no mark").to.equal(undefined);
  });

  it("an early computation holds only with a mark, and the same one", () => {
    expect(stillHolds("3:a", "3:a")).to.equal(true);
    expect(stillHolds("3:a", "4:b"), "another update finished, or this one's refresh ran").to.equal(false);
    expect(stillHolds(undefined, undefined), "a backend without a history to compare").to.equal(false);
  });

  it("computes once: the plan and the state are values the operation reads; the journal is swept and recorded only when asked (the program's wrapper, once the engine runs it)", async () => {
    const touched: string[] = [];
    const journal: JournalHooks = {
      list: async () => (touched.push("list"), []),
      add: async () => (touched.push("add"), "k1"),
      remove: async () => undefined,
      stateIdentities: async () => new Set<string>(),
      writer: "me",
      onRecorded: (key) => touched.push(`recorded ${key}`),
      warn: () => undefined,
    };
    // Live clusters (no render directory): the journal is kept only where objects reach a cluster.
    const rendered = localStack(path.join(dir, "render"));
    const config = { ...rendered, renderDir: undefined, clusters: rendered.clusters.map((c) => ({ ...c, kubeconfig: KUBECONFIG })) };
    const run = new DesiredRun({
      config,
      state: stateOf({}),
      deploy: { cacheRoot: path.join(dir, "git"), previous: null },
      journal,
      factsOf: (i) => fakeFacts({ journal: i.journal, objects: nothingExists, impersonate: () => ({}), discovery: discovered() }),
    });
    const desired = await run.desired;
    expect(desired.deployments.length).to.be.greaterThan(0);
    expect(run.planned?.plan.entries.length, "the checked plan, kept for a failure's report").to.be.greaterThan(0);
    expect(run.settled).to.equal(desired);
    expect(run.computeMs).to.be.a("number");
    expect(await run.forProgram()).to.equal(desired);
    expect(touched, "computing touches no journal: it may run before the stack's lock is held").to.deep.equal([]);
    await run.recordJournal(desired);
    expect(touched).to.deep.equal(["list", "add", "recorded k1"]);
  });

  it("a computation that fails keeps its checked plan and rejects what the program is given", async () => {
    const config = localStack(path.join(dir, "render"));
    const broken = { ...config, healthChecks: [{ apiVersion: "v1", kind: "ConfigMap", current: "this is not CEL (" }] };
    const run = new DesiredRun({
      config: broken,
      state: stateOf({}),
      deploy: { cacheRoot: path.join(dir, "git"), previous: null },
      factsOf: () => fakeFacts(),
    });
    await run.desired;
    const err = await run.forProgram().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/healthChecks/);
    expect(run.planned).to.not.equal(undefined);
  });
});
