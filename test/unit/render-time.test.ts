/**
 * Render time is each GitRepo's own (core/renderer/sandbox.ts): the decision after a sandbox run ends
 * early, the split of a batch by GitRepo, the processes' bound, the budget carried from run to run;
 * and, with the real sandbox, N looping bundles of one GitRepo costing its budget once while another
 * GitRepo of the same batch renders.
 */
import { expect } from "chai";
import { rendererBinary, runRenderer } from "../../core/renderer/fleet-render";
import {
  afterEarlyEnd,
  DEFAULT_SANDBOX_LIMITS,
  GroupOutcome,
  JobKey,
  partitionByGitRepo,
  runIsolating,
  runPerGitRepo,
  SandboxLimits,
  StoppedFor,
} from "../../core/renderer/sandbox";
import type { Renderer, RenderJob } from "../../core/model/renderer-protocol";
import { withRenderBudget } from "../../core/renderer/render-budget";
import { withEnv } from "../support/env";

const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, jobSeconds: 5, gitRepoSeconds: 20, processes: 2 };
type Failed = Extract<GroupOutcome<unknown>, { ok: false }>;
const ended = (o: Partial<Failed>): Failed => ({ ok: false, memory: false, running: [], stopped: new Map(), spentMs: new Map(), stderr: "", ...o });

describe("render time: the decision after a sandbox run ends early", () => {
  it("jobs the sandbox gave up on fail with their limit and never run again; the rest run together once", () => {
    const stopped = new Map<JobKey, StoppedFor>([
      ["renders 1", "time"],
      ["renders 2", "gitRepo"],
    ]);
    const d = afterEarlyEnd(["renders 0", "renders 1", "renders 2", "renders 3"], ended({ memory: true, running: ["renders 3"], stopped }), limits);
    expect(d.failed).to.deep.equal([
      ["renders 1", "rendering took longer than the limit of 5 s per job (PULUMI_FLEET_RENDER_TIMEOUT_SECONDS): stopped"],
      [
        "renders 2",
        "rendering this GitRepo's jobs took longer than the limit of 20 s per GitRepo (PULUMI_FLEET_GITREPO_RENDER_SECONDS): stopped before this one finished",
      ],
      ["renders 3", "rendering needed more than the limit of 2048 MiB of memory (PULUMI_FLEET_RENDER_MEMORY_MIB): stopped"],
    ]);
    expect(d.next).to.deep.equal([["renders 0"]]);
  });

  it("several jobs running at a memory kill each run alone next; a crash after only given-up jobs reruns the rest", () => {
    const d = afterEarlyEnd(["a", "b", "c"], ended({ memory: true, running: ["a", "b"] }), limits);
    expect(d).to.deep.equal({ failed: [], next: [["c"], ["a"], ["b"]] });
    const e = afterEarlyEnd(["a", "b"], ended({ stopped: new Map([["a", "time"]]) }), limits);
    expect(e).to.deep.equal({
      failed: [["a", "rendering took longer than the limit of 5 s per job (PULUMI_FLEET_RENDER_TIMEOUT_SECONDS): stopped"]],
      next: [["b"]],
    });
    expect(() => afterEarlyEnd(["a"], ended({ stderr: "boom" }), limits)).to.throw(/failed with no job running: boom/);
  });

  it("each GitRepo's jobs are apart, in order of first job; jobs of no GitRepo together", () => {
    const of = (j: string) => ({ a1: 0, b1: 1, a2: 0, b2: 1 })[j];
    expect(partitionByGitRepo(["a1", "b1", "x", "a2", "b2", "y"], of)).to.deep.equal([
      ["a1", "a2"],
      ["b1", "b2"],
      ["x", "y"],
    ]);
  });
});

describe("render time: sandbox processes per GitRepo", () => {
  it("a GitRepo's early end reruns only its own jobs; the others' run once, and its spent time is carried", async () => {
    const runs: { group: JobKey[]; left: number[] }[] = [];
    const failed: string[] = [];
    const of = (j: string) => (j.startsWith("evil") ? 0 : 1);
    await runPerGitRepo<JobKey[]>(
      ["evil 0", "good 0", "evil 1", "good 1"],
      async (group, left) => {
        runs.push({ group, left });
        if (group.includes("evil 0") && group.length > 1)
          return ended({ memory: true, running: ["evil 0"], stopped: new Map(), spentMs: new Map([[0, 4000]]) });
        return { ok: true, response: group };
      },
      { done: () => {}, failed: (j) => failed.push(j) },
      limits,
      { of, secondsLeft: [20, 20] },
    );
    expect(failed).to.deep.equal(["evil 0"]);
    const good = runs.filter((r) => r.group.some((j) => j.startsWith("good")));
    expect(good.map((r) => r.group)).to.deep.equal([["good 0", "good 1"]]); // once, alone
    expect(runs.filter((r) => r.group.includes("evil 1")).map((r) => r.left[0])).to.deep.equal([20, 16]); // 4 s spent, carried
  });

  it("at most PULUMI_FLEET_RENDER_PROCESSES processes at once, and a slow GitRepo does not hold the others' turn", async () => {
    let now = 0;
    let peak = 0;
    const order: string[] = [];
    const release: (() => void)[] = [];
    const of = (j: string) => Number(j.split(" ")[1]);
    const all = runPerGitRepo<JobKey[]>(
      ["g 0", "g 1", "g 2", "g 3"],
      async (group) => {
        now++;
        peak = Math.max(peak, now);
        order.push(group[0]);
        if (group[0] === "g 0") await new Promise<void>((r) => release.push(r)); // the hostile one: holds its process until released
        now--;
        return { ok: true, response: group };
      },
      { done: () => {}, failed: () => {} },
      limits,
      { of, secondsLeft: [20, 20, 20, 20] },
    );
    await new Promise((r) => setImmediate(r));
    expect(order).to.deep.equal(["g 0", "g 1", "g 2", "g 3"]); // the others went through the second process while g 0 held one
    expect(peak).to.equal(2);
    release.forEach((r) => r());
    await all;
  });

  it("runIsolating: the same GitRepo run after a memory kill carries what it spent, never more than it had", async () => {
    const lefts: number[] = [];
    await runIsolating<JobKey[]>(
      ["a", "b"],
      async (group, left) => {
        lefts.push(left[0]);
        return group.length === 2 ? ended({ memory: true, running: ["a"], spentMs: new Map([[0, 30_000]]) }) : { ok: true, response: group };
      },
      { done: () => {}, failed: () => {} },
      limits,
      [20],
    );
    expect(lefts).to.deep.equal([20, 0]); // 0: the sandbox fails its jobs with the GitRepo limit at once
  });
});

describe("render time: one budget per GitRepo across an operation's batches", () => {
  it("each batch gets what the GitRepo has left; what it spent is charged; batches without GitRepos pass through", async () => {
    const asked: (Record<string, number> | undefined)[] = [];
    const fake: Renderer = async (request) => {
      asked.push(request.gitRepoSecondsLeft);
      const spent = Object.fromEntries(Object.keys(request.gitRepoSecondsLeft ?? {}).map((n) => [n, n === "evil" ? 8 : 0.5]));
      return {
        values: [],
        valueOf: [],
        renders: {},
        pulls: {},
        yaml: {},
        owners: {},
        impersonate: {},
        readiness: {},
        discovery: {},
        lookupReads: {},
        gitRepoSpentSeconds: spent,
      };
    };
    const render = withRenderBudget(fake, 20);
    await render({ yaml: { a: "x" }, gitRepoOf: { yaml: { a: "evil" } } }); // fleet.yaml
    await render({ values: [["c", "h"]], gitRepoOf: { values: ["evil"] } }); // values
    await render({ renders: [], gitRepoOf: { renders: { r1: "evil", r2: "good" } } }); // renders
    await render({ renders: [], gitRepoOf: { renders: { r1: "evil", r2: "good" } } }); // a lookup round
    await render({ discovery: [] });
    expect(asked).to.deep.equal([{ evil: 20 }, { evil: 12 }, { evil: 4, good: 20 }, { evil: 0, good: 19.5 }, undefined]);
  });
});

const chart = (template: string) => [
  { name: "Chart.yaml", content: "apiVersion: v2\nname: c\nversion: 0.1.0\n" },
  { name: "templates/cm.yaml", content: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  x: "${template}"\n` },
];
const FOREVER = "{{ range until 100000 }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}{{ end }}";

describe("render time: the real sandbox", function () {
  this.timeout(120_000);

  it("6 looping bundles of one GitRepo on 2 clusters cost its budget once; another GitRepo's bundle in the batch renders", async () => {
    rendererBinary(); // built before the clock starts
    const bundles = {
      loop: { name: "loop", manifestId: "m", commit: "c", files: chart(FOREVER) },
      good: { name: "good", manifestId: "m", commit: "c", files: chart("{{ .Chart.Name }}") },
    };
    const renders: RenderJob[] = [];
    const gitRepoOf: Record<string, string> = {};
    for (let b = 0; b < 6; b++)
      for (const c of ["c1", "c2"]) {
        renders.push({ id: `loop${b}-${c}`, bundle: "loop", releaseName: `r${b}`, namespace: c, options: { helm: { chart: "." }, kustomize: {}, yaml: {} } });
        gitRepoOf[`loop${b}-${c}`] = "evil";
      }
    renders.push({ id: "victim", bundle: "good", releaseName: "v", namespace: "default", options: { helm: { chart: "." }, kustomize: {}, yaml: {} } });
    gitRepoOf.victim = "victim";
    const start = Date.now();
    const r = await withEnv({ PULUMI_FLEET_RENDER_TIMEOUT_SECONDS: "60", PULUMI_FLEET_GITREPO_RENDER_SECONDS: "3" }, () =>
      runRenderer({ bundles, renders, gitRepoOf: { renders: gitRepoOf } }),
    );
    const elapsed = (Date.now() - start) / 1000;
    for (const id of Object.keys(gitRepoOf).filter((i) => i !== "victim"))
      expect(r.renders[id].error, id).to.match(/longer than the limit of 3 s per GitRepo \(PULUMI_FLEET_GITREPO_RENDER_SECONDS\)/);
    expect((r.renders.victim.objects![0] as unknown as { data: Record<string, string> }).data.x).to.equal("c");
    // Once: 3 s and a process start. One after the other it was 12 x 60 s (per job) or 3 s per rerun.
    expect(elapsed).to.be.lessThan(3 + 4);
    expect(r.gitRepoSpentSeconds!.evil).to.be.within(3, 3 + 4); // charged to the operation's account (render-budget.ts)
    expect(r.gitRepoSpentSeconds!.victim).to.be.lessThan(3);
  });

  it("a GitRepo with little of its budget left in this operation gets that much, and its jobs fail naming the limit", async () => {
    const bundles = { loop: { name: "loop", manifestId: "m", commit: "c", files: chart(FOREVER) } };
    const start = Date.now();
    const r = await runRenderer({
      bundles,
      renders: [{ id: "l", bundle: "loop", releaseName: "r", namespace: "default", options: { helm: { chart: "." }, kustomize: {}, yaml: {} } }],
      gitRepoOf: { renders: { l: "evil" } },
      gitRepoSecondsLeft: { evil: 0.5 },
    });
    expect(r.renders.l.error).to.match(/PULUMI_FLEET_GITREPO_RENDER_SECONDS/);
    expect((Date.now() - start) / 1000).to.be.lessThan(0.5 + 3);
  });
});
