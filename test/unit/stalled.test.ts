/**
 * Stalled pairs (core/plan/stalled.ts, issue 56 item 2): a pair that fails `stalledAfter` times in a row
 * with the same inputs is not applied again until its inputs, its cluster's credentials or `--retry`
 * change. The decisions on values, then the desired state on fake facts, real git and the real renderer:
 * a Stalled pair is kept exactly as the state holds it, paused, and fails the update naming it.
 */
import { expect } from "chai";
import { holdMessage } from "../../core/targeting/rollout-hold";
import { parseStackConfig, StackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { DesiredState } from "../../core/desired/types";
import { DeploymentFailure } from "../../core/plan/failures";
import {
  accessDigest,
  afterUp,
  onlyStalled,
  DEFAULT_STALLED_AFTER,
  pairInputs,
  retried,
  retrySelector,
  StalledRecord,
  stalledPairs,
  upAttempts,
} from "../../core/plan/stalled";
import { PlanEntry } from "../../core/targeting/plan";
import { fakeFacts } from "../support/fake-facts";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { deployedAfter } from "../support/deployed-after";
import { errorOf } from "../support/errors";

const FILE = "stacks/Pulumi.test.yaml";
const entry = (cluster: string, deploymentId = "m:1", options = {}): PlanEntry =>
  ({ gitRepo: "t", bundle: "t-a", cluster, deploymentId, options, dependsOn: [] }) as unknown as PlanEntry;
const ACCESS = accessDigest({ kubeconfig: "apiVersion: v1\nusers: [{name: u, user: {token: s3cret}}]" });
const inputsOf = (e: PlanEntry) => pairInputs(e, ACCESS);
const KEY = "c1/t/t-a";

/** The record after `n` ups in which the pair failed with these inputs. */
function failedTimes(n: number, e = entry("c1"), start?: StalledRecord): StalledRecord {
  let r = start;
  for (let i = 0; i < n; i++) r = afterUp(r, [{ key: KEY, inputs: inputsOf(e), failed: `ErrApplied: refused (${i})` }], `2026-11-29T0${i}:00:00Z`);
  return r!;
}

const stalledNow = (r: StalledRecord | undefined, e = entry("c1"), after = 3) =>
  stalledPairs([e], r, after, inputsOf).map(([p, err, f]) => ({ key: p.cluster, err, f }));

describe("Stalled pairs: the decisions (core/plan/stalled.ts)", () => {
  it("N-1 failures in a row are not Stalled; N are, with the count, the first failure's time and the last reason", () => {
    expect(stalledNow(failedTimes(2))).to.deep.equal([]);
    const [s] = stalledNow(failedTimes(3));
    expect(s.f).to.deep.equal({ failures: 3, since: "2026-11-29T00:00:00Z", reason: "ErrApplied: refused (2)" });
    expect(s.err.message).to.match(/^Stalled after 3 failures with the same inputs \(since 2026-11-29T00:00:00Z\): not applied, `--retry` tries again/);
    expect(s.err.message).to.contain("Last failure: ErrApplied: refused (2)");
    expect(DEFAULT_STALLED_AFTER).to.equal(3);
  });

  it("its words do not change while it stays Stalled (a notification's memory sends them once)", () => {
    const three = stalledNow(failedTimes(3))[0].err.message;
    const record = failedTimes(3);
    // A Stalled pair is not tried: its run stays as it was.
    const kept = afterUp(record, [{ key: KEY, inputs: inputsOf(entry("c1")), untouched: true }], "2026-11-29T09:00:00Z");
    expect(stalledNow(kept)[0].err.message).to.equal(three);
  });

  it("a new deploymentId (content, options), correctDrift or diff, or new cluster credentials are new inputs: not Stalled, and a failure with them starts a new run", () => {
    const r = failedTimes(3);
    expect(stalledNow(r, entry("c1", "m:2")), "new content").to.deep.equal([]);
    expect(stalledNow(r, entry("c1", "m:1", { correctDrift: { enabled: true } })), "new options outside the deploymentId").to.deep.equal([]);
    const newAccess = pairInputs(entry("c1"), accessDigest({ kubeconfig: "rotated" }));
    expect(
      stalledPairs([entry("c1")], r, 3, () => newAccess),
      "new credentials",
    ).to.deep.equal([]);
    expect(afterUp(r, [{ key: KEY, inputs: newAccess, failed: "again" }], "2026-11-29T10:00:00Z").pairs[KEY]).to.deep.equal({
      inputs: newAccess,
      failures: 1,
      since: "2026-11-29T10:00:00Z",
      reason: "again",
    });
  });

  it("the access digest holds no credential", () => {
    expect(ACCESS).to.match(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(failedTimes(3))).to.not.contain("s3cret");
  });

  it("a success ends the run; a pair no longer planned loses it", () => {
    expect(afterUp(failedTimes(2), [{ key: KEY, inputs: inputsOf(entry("c1")) }], "t").pairs).to.deep.equal({});
    expect(afterUp(failedTimes(2), [], "t").pairs).to.deep.equal({});
  });

  it("--retry clears every run, --retry-pair the one it names; stalledAfter 0 never stalls", () => {
    const both: StalledRecord = { pairs: { ...failedTimes(3).pairs, "c2/t/t-a": failedTimes(3).pairs[KEY] } };
    expect(retried(both, true).pairs).to.deep.equal({});
    expect(Object.keys(retried(both, ["c2/t/t-a"]).pairs)).to.deep.equal([KEY]);
    expect(stalledNow(retried(both, [KEY]))).to.deep.equal([]);
    expect(stalledNow(failedTimes(5), entry("c1"), 0)).to.deep.equal([]);
  });

  it("the command line's selector: --retry is every pair, --retry-pair names CLUSTER/GITREPO/BUNDLE", () => {
    expect(retrySelector(undefined, undefined)).to.equal(undefined);
    expect(retrySelector(true, undefined)).to.equal(true);
    expect(retrySelector(undefined, [KEY])).to.deep.equal([KEY]);
    expect(errorOf(() => retrySelector(undefined, ["t/t-a"]))).to.match(/--retry-pair.*"t\/t-a" is not a bundle deployment: name it CLUSTER\/GITREPO\/BUNDLE/);
  });

  it("an up's attempts: a pair waiting for another (dependsOn, a stopped rollout), held, Stalled or on a cluster left out is not counted", () => {
    const f = (cluster: string, over: Partial<DeploymentFailure>): DeploymentFailure => ({
      gitRepo: "t",
      bundle: "t-a",
      cluster,
      message: "",
      reason: "refused",
      ...over,
    });
    const inputs = new Map(["c1", "c2", "c3", "c4", "c5", "c6", "c6b", "c7"].map((c) => [`${c}/t/t-a`, `in-${c}`]));
    const attempts = upAttempts(
      inputs,
      [
        f("c1", {}),
        f("c2", { field: "dependsOn", reason: "dependent bundle(s) are not ready" }),
        f("c3", { reason: "WaitApplied: a rollout stopped" }),
        // Held behind its rollout's stopped partition, in the plan's own words (core/desired/rollout-gates.ts).
        f("c6b", { field: "rolloutStrategy", reason: holdMessage({ bundle: "t-a", partition: "p1", notReady: ["c1"], held: ["c6b"] }) }),
        f("c4", { held: "paused" }),
        f("c5", { stalled: { failures: 3, since: "t", reason: "r" } }),
        // The plan's failure comes first: the provider's word on the same pair does not count again.
        f("c5", { reason: "ErrApplied: paused" }),
      ],
      new Set(["c7"]),
    );
    expect(attempts.map((a) => `${a.key} ${a.untouched ? "untouched" : (a.failed ?? "ok")}`)).to.deep.equal([
      "c1/t/t-a refused",
      "c2/t/t-a untouched",
      "c3/t/t-a untouched",
      "c4/t/t-a untouched",
      "c5/t/t-a untouched",
      "c6/t/t-a ok",
      "c6b/t/t-a untouched",
      "c7/t/t-a untouched",
    ]);
  });

  it("the watcher's word: an up that failed only by Stalled pairs is not retried; one with another failure is", () => {
    const f = (stalled: boolean): DeploymentFailure => ({
      gitRepo: "t",
      bundle: "t-a",
      cluster: "c1",
      message: "",
      reason: "r",
      ...(stalled ? { stalled: { failures: 3, since: "t", reason: "r" } } : {}),
    });
    expect(onlyStalled([f(true), f(true)])).to.equal(true);
    expect(onlyStalled([f(true), f(false)])).to.equal(false);
    expect(onlyStalled([])).to.equal(false);
  });

  it("stalledAfter in the stack file: a whole number, 0 or more, named in the error", () => {
    const parse = (v: unknown) => parseStackConfig({ stalledAfter: v }, FILE, "/project").stalledAfter;
    expect(parse(5)).to.equal(5);
    expect(parse(0)).to.equal(0);
    expect(parseStackConfig({}, FILE, "/project").stalledAfter).to.equal(undefined);
    expect(errorOf(() => parse(-1))).to.match(/stalledAfter: must be a whole number of failures, 0 or more/);
    expect(errorOf(() => parse(1.5))).to.match(/stalledAfter: must be a whole number/);
    // The CLI writes a new stack's `3` back as `"3"` (Pulumi keeps scalar config as strings): the same value.
    expect(parse("3")).to.equal(3);
    expect(errorOf(() => parse("three"))).to.match(/stalledAfter: must be a number/);
  });
});

describe("Stalled pairs in the desired state (core/desired/state-steps.ts stalled)", function () {
  this.timeout(60_000);
  const cacheRoot = tempDir("pf-cache-");

  function fleetOf(repo: string, over: { kubeconfig?: string; stalledAfter?: number } = {}): StackConfig {
    return {
      file: FILE,
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com" },
      renderDir: "/tmp/pulumi-fleet-render",
      clusterGroups: [],
      clusters: ["c1", "c2"].map((name) => ({
        name,
        labels: { name },
        annotations: {},
        templateValues: {},
        deleteUnreachable: false,
        ...(name === "c2" && over.kubeconfig ? { kubeconfig: over.kubeconfig } : {}),
      })),
      gitRepos: [gitRepoConfig({ name: "t", repo, paths: ["a", "b"], targets: [{ clusterName: "c1" }, { clusterName: "c2" }] })],
      ...(over.stalledAfter !== undefined ? { stalledAfter: over.stalledAfter } : {}),
    };
  }
  const after = (first: DesiredState) => {
    const { previous, deployed } = deployedAfter(first);
    return { ...fakeFacts({ previous: { ...previous, agents: first.summary.agents } }), deployed };
  };
  /** The record of `key` failing three times with the inputs `state` planned it with. */
  const stalledIn = (state: DesiredState, key: string): StalledRecord => ({
    pairs: { [key]: { inputs: state.fleet.pairInputs!.get(key)!, failures: 3, since: "2026-11-29T05:00:00Z", reason: "ErrApplied: admission webhook denied" } },
  });

  it("a Stalled pair is kept as the state holds it, paused, and fails naming it; every other pair deploys", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a"), "b/cm.yaml": CONFIGMAP("b") });
    const first = await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot });
    expect([...first.fleet.pairInputs!.keys()].sort()).to.deep.equal(["c1/t/t-a", "c1/t/t-b", "c2/t/t-a", "c2/t/t-b"]);
    const second = await desiredState(fleetOf(repo.url()), after(first), { cacheRoot, stalled: stalledIn(first, "c2/t/t-a") });
    const held = second.deployments.find((d) => d.key === "c2/t/t-a")!;
    expect(held.held).to.equal(true);
    expect(held.spec).to.deep.equal({ ...first.deployments.find((d) => d.key === "c2/t/t-a")!.spec, paused: true });
    const f = second.failures.find((x) => x.cluster === "c2" && x.bundle === "t-a")!;
    expect(f.held).to.equal(undefined);
    expect(f.stalled).to.deep.equal({ failures: 3, since: "2026-11-29T05:00:00Z", reason: "ErrApplied: admission webhook denied" });
    expect(f.reason).to.match(/^Stalled after 3 failures with the same inputs/);
    expect(second.failures.map((x) => `${x.cluster}/${x.bundle}`)).to.deep.equal(["c2/t-a"]);
    for (const key of ["c1/t/t-a", "c1/t/t-b", "c2/t/t-b"]) expect(second.deployments.find((d) => d.key === key)!.held).to.equal(undefined);
  });

  it("a new commit of the pair's bundle, new credentials of its cluster or stalledAfter 0 end it: the pair is applied again", async () => {
    const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a"), "b/cm.yaml": CONFIGMAP("b") });
    const first = await desiredState(fleetOf(repo.url()), fakeFacts(), { cacheRoot });
    const record = stalledIn(first, "c2/t/t-a");
    const notStalled = (s: DesiredState) => expect(s.failures.filter((x) => x.stalled)).to.deep.equal([]);
    notStalled(await desiredState(fleetOf(repo.url(), { kubeconfig: "rotated: true" }), after(first), { cacheRoot, stalled: record }));
    notStalled(await desiredState(fleetOf(repo.url(), { stalledAfter: 0 }), after(first), { cacheRoot, stalled: record }));
    repo.commit({ "a/cm.yaml": CONFIGMAP("a", { fixed: "yes" }) });
    notStalled(await desiredState(fleetOf(repo.url()), after(first), { cacheRoot, stalled: record }));
  });
});
