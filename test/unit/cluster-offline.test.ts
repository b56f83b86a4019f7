import { expect } from "chai";
import { observe, offlineOf, offlineWords, unreachableWithOffline } from "../../automation/clusters/observed";
import { clusterMetrics } from "../../automation/metrics/pairs";
import * as fs from "node:fs";
import { fleetStateExposition, runExposition } from "../../automation/metrics/exposition";
import { ClusterConfig } from "../../core/config/stack";
import { observedAfterUp } from "../../automation/notify/observe";
import { decideAfterUp } from "../../automation/notify/events";
import { headline } from "../../automation/notify/chat-lines";

const t = (min: number) => new Date(Date.UTC(2026, 10, 29, 7, min));

describe("Offline: when each cluster was last seen, kept between runs", () => {
  it("a cluster that answers is seen now; one that stops keeps its last sighting and the first failure", () => {
    const down = new Map([["b", "connect ECONNREFUSED"]]);
    const r1 = observe(undefined, ["a", "b"], new Map(), t(0));
    expect(r1.clusters).to.deep.equal({ a: { lastSeen: t(0).toISOString() }, b: { lastSeen: t(0).toISOString() } });
    const r2 = observe(r1, ["a", "b"], down, t(5));
    const r3 = observe(r2, ["a", "b"], down, t(10));
    expect(r3.clusters.b).to.deep.equal({ lastSeen: t(0).toISOString(), offlineSince: t(5).toISOString() });
    expect(r3.clusters.a).to.deep.equal({ lastSeen: t(10).toISOString() });
    expect(offlineOf(r3, down, t(10)).get("b")).to.deep.equal({ since: t(5).toISOString(), lastSeen: t(0).toISOString() });
    // Back: online again, seen now, the offline spell forgotten.
    const r4 = observe(r3, ["a", "b"], new Map(), t(15));
    expect(r4.clusters.b).to.deep.equal({ lastSeen: t(15).toISOString() });
    expect(offlineOf(r4, new Map(), t(15)).size).to.equal(0);
  });

  it("a cluster never seen says so; a cluster removed from the stack file drops out", () => {
    const r = observe({ clusters: { gone: { lastSeen: t(0).toISOString() } } }, ["new"], new Map([["new", "timeout"]]), t(1));
    expect(Object.keys(r.clusters)).to.deep.equal(["new"]);
    const o = offlineOf(r, new Map([["new", "timeout"]]), t(1)).get("new")!;
    expect(offlineWords(o)).to.equal(`Offline since ${t(1).toISOString()}, never seen by this stack`);
  });

  it("the words every report shows are the probe's reason and the Offline state, the same on every run while it stays down", () => {
    const down = new Map([["b", "no answer within 3000 ms"]]);
    const r2 = observe(observe(undefined, ["b"], new Map(), t(0)), ["b"], down, t(5));
    const words = (r: typeof r2, now: Date) => unreachableWithOffline(down, offlineOf(r, down, now)).get("b");
    expect(words(r2, t(5))).to.equal(`no answer within 3000 ms; Offline since ${t(5).toISOString()}, last seen ${t(0).toISOString()}`);
    expect(words(observe(r2, ["b"], down, t(9)), t(9))).to.equal(words(r2, t(5)));
  });

  it("metrics: per cluster whether it is offline and paused, and when it was last seen; nothing probed, no offline series", () => {
    const down = new Map([["b", "timeout"]]);
    const r = observe(observe(undefined, ["a", "b"], new Map(), t(0)), ["a", "b"], down, t(5));
    const clusters = [{ name: "a" }, { name: "b", paused: { reason: "incident 42" } }] as ClusterConfig[];
    const text = fleetStateExposition({ stack: "prod", observedAt: t(5), pairs: [], clusters: clusterMetrics(clusters, r, down) });
    expect(text).to.contain('pulumi_fleet_cluster_paused{stack="prod",cluster="a"} 0');
    expect(text).to.contain('pulumi_fleet_cluster_paused{stack="prod",cluster="b"} 1');
    expect(text).to.contain('pulumi_fleet_cluster_offline{stack="prod",cluster="a"} 0');
    expect(text).to.contain('pulumi_fleet_cluster_offline{stack="prod",cluster="b"} 1');
    expect(text).to.contain(`pulumi_fleet_cluster_last_seen_timestamp_seconds{stack="prod",cluster="b"} ${t(0).getTime() / 1000}`);
    expect(text).to.contain(`pulumi_fleet_cluster_last_seen_timestamp_seconds{stack="prod",cluster="a"} ${t(5).getTime() / 1000}`);
    const rendered = fleetStateExposition({ stack: "prod", observedAt: t(5), pairs: [], clusters: clusterMetrics(clusters, undefined, new Map()) });
    expect(rendered).to.not.contain("pulumi_fleet_cluster_offline").and.not.contain("last_seen");
  });
});

describe("docs/metrics.md lists exactly the metrics the exposition writes", () => {
  it("every family written (state and run, every optional series present) is in the table, and the table has no other", () => {
    const state = fleetStateExposition({
      stack: "s",
      observedAt: t(0),
      pairs: [{ gitRepo: "g", bundle: "b", cluster: "c", state: "NotReady", condition: "Offline", objects: 1, deployedAt: t(0).toISOString() }],
      clusters: [{ cluster: "c", paused: false, offline: true, lastSeen: t(0).toISOString() }],
      pinned: false,
    });
    const run = runExposition({ stack: "s", operation: "up", success: true, durationMs: 1, finishedAt: t(0), engine: { same: 1 } });
    const written = [...`${state}${run}`.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]).sort();
    const documented = [...fs.readFileSync("docs/metrics.md", "utf8").matchAll(/^\| `(pulumi_fleet_[a-z_]+)`/gm)].map((m) => m[1]).sort();
    expect(documented).to.deep.equal(written);
  });
});

describe("an up's notifications of an Offline cluster", () => {
  it("its pairs are NotReady (Offline) whatever the state last said: one event when it goes, none while it stays, one when it is back", () => {
    const entries = [{ gitRepo: "g", bundle: "b", cluster: "c1", deploymentId: "s-1:a" }];
    const ready = { "c1/g/b": { state: "Ready" as const, messages: [], appliedDeploymentId: "s-1:a" } };
    const down = new Map([["c1", "timeout; Offline since 2026-11-29T07:05:00.000Z, last seen 2026-11-29T07:00:00.000Z"]]);
    const ctx = { stack: "s", time: "t" };
    const observed = observedAfterUp(ready, {}, [], { entries, unreachable: down });
    expect(observed.map((o) => `${o.state} ${o.condition}`)).to.deep.equal(["NotReady Offline"]);
    const went = decideAfterUp({ "c1/g/b": { state: "Ready", message: "" } }, observed, new Map(), [], ctx);
    expect(went.events.map((e) => `${e.type} ${headline(e)}`)).to.deep.equal(["failed g/b failed on c1: NotReady (Offline) (was Ready)"]);
    expect(decideAfterUp(went.memory, observedAfterUp(ready, {}, [], { entries, unreachable: down }), new Map(), [], ctx).events).to.deep.equal([]);
    const back = decideAfterUp(went.memory, observedAfterUp(ready, {}, []), new Map(), [], ctx);
    expect(back.events.map((e) => `${e.type} ${e.state} ${e.condition}`)).to.deep.equal(["deployed Ready null"]);
  });
});
