/**
 * Maintenance windows (stack `schedules`) and `up --partition`: the stack file's reading, the windows
 * as fleet-schedule (Fleet's cron library) answers them at a given time, which clusters are outside,
 * which pairs are held, and the PR summary's partition line. The window arithmetic itself (DST, time
 * zones, Quartz fields) is also tested in Go: tools/fleet-schedule/window_test.go.
 */
import { expect } from "chai";
import { parseStackConfig } from "../../core/config/stack";
import { ScheduleConfig } from "../../core/config/schedules";
import { clustersOutsideWindows, clustersOutsideWindowsAt, scheduleWindows } from "../../core/targeting/schedule-windows";
import { clusterViews, decideTargets, partitionClusters } from "../../core/targeting/match";
import { Bundle } from "../../core/bundles/types";
import { keptOutsideWindows, partitionHolds, windowHolds } from "../../core/desired/holds";
import { FailedDeployments, describeFailure } from "../../core/plan/failures";
import { PlanEntry } from "../../core/targeting/plan";
import { BundleRollout, FleetState } from "../../core/plan/pipeline";
import { partitionsMarkdown } from "../../automation/reports/partition-summary";
import { reportFacts } from "../../core/desired/report-facts";
import { rolloutGates } from "../../core/desired/rollout-gates";
import { errorOf } from "../support/errors";

const FILE = "stacks/Pulumi.test.yaml";
const clusters = [
  { name: "eu-1", labels: { region: "eu" } },
  { name: "eu-2", labels: { region: "eu" } },
  { name: "us-1", labels: { region: "us" } },
];
const parse = (schedules: unknown) => parseStackConfig({ clusters, schedules }, FILE, "/project");
const nightly = {
  name: "eu-nights",
  schedule: "0 0 22 ? * MON-FRI",
  duration: "4h",
  location: "Europe/Berlin",
  targets: { clusters: [{ clusterSelector: { matchLabels: { region: "eu" } } }] },
};

async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected a rejection");
}

describe("schedules: maintenance windows (core/config/schedules.ts, core/targeting/schedule-windows.ts)", function () {
  this.timeout(120_000); // the first test builds fleet-schedule

  it("reads Fleet's Schedule spec fields, targets as Fleet's ScheduleTarget list", () => {
    const config = parse([nightly]);
    expect(config.schedules).to.deep.equal([
      {
        name: "eu-nights",
        schedule: "0 0 22 ? * MON-FRI",
        duration: "4h",
        location: "Europe/Berlin",
        targets: [{ clusterSelector: { matchLabels: { region: "eu" } } }],
        field: "schedules[0]",
      },
    ]);
    expect(parse(undefined).schedules).to.equal(undefined);
  });

  it("a bad duration, a missing target, a duplicate name or an unknown field: errors naming the file and the field", () => {
    expect(errorOf(() => parse([{ ...nightly, duration: "1d" }]))).to.match(
      /^stacks\/Pulumi\.test\.yaml: schedules\[0\]\.duration: "1d" is not a Go duration .*no d or w/,
    );
    expect(errorOf(() => parse([{ ...nightly, targets: undefined }]))).to.match(/schedules\[0\]\.targets\.clusters: is required/);
    expect(errorOf(() => parse([nightly, nightly]))).to.match(/schedules\[1\]\.name: duplicate name "eu-nights"/);
    expect(errorOf(() => parse([{ ...nightly, timezone: "UTC" }]))).to.match(
      /schedules\[0\]\.timezone: unknown field; valid fields are: duration, location, name, schedule, targets/,
    );
    expect(errorOf(() => parse([{ ...nightly, targets: { clusters: [{ clusterNmae: "x" }] } }]))).to.match(
      /schedules\[0\]\.targets\.clusters\[0\]\.clusterNmae: unknown field/,
    );
  });

  it("the clusters outside their windows from the stack alone (the drift refresh before up asks this), as the desired state decides them", async () => {
    // Monday 12:00 in Berlin: the eu-nights window (22:00, 4 h) is closed, so the eu clusters are outside; us-1 has no schedule.
    const now = new Date("2025-06-02T10:00:00Z");
    const outside = await clustersOutsideWindowsAt(parse([nightly]), now);
    expect([...outside.keys()]).to.deep.equal(["eu-1", "eu-2"]);
    expect(outside.get("eu-1")).to.deep.include({ schedule: "eu-nights" });
    expect((await clustersOutsideWindowsAt(parse([nightly]), new Date("2025-06-02T21:00:00Z"))).size).to.equal(0);
    expect((await clustersOutsideWindowsAt(parse(undefined), now)).size).to.equal(0);
  });

  it("a cron expression, duration or time zone Fleet's library refuses: an error naming the file, the schedule and the field", async () => {
    const one = (s: object) => parse([{ ...nightly, ...s }]).schedules!;
    const now = new Date("2025-06-02T12:00:00Z");
    // Fleet's expressions have a seconds field: a five-field crontab line is refused, as Fleet refuses it.
    expect(await rejection(scheduleWindows(one({ schedule: "0 22 * * 1-5" }), now, FILE))).to.equal(
      `${FILE}: schedules[0].schedule: schedule eu-nights: parse cron expression: invalid expression length`,
    );
    expect(await rejection(scheduleWindows(one({ location: "Europe/Atlantis" }), now, FILE))).to.match(
      /^stacks\/Pulumi\.test\.yaml: schedules\[0\]\.location: schedule eu-nights: unknown time zone "Europe\/Atlantis"/,
    );
    expect(await rejection(scheduleWindows(one({ schedule: "0 0 22 * * ?", duration: "25h" }), now, FILE))).to.match(
      /schedules\[0\]\.duration: schedule eu-nights: 25h is too long and overlaps with the next execution time/,
    );
  });

  it("where a time stands: inside until the window closes (past midnight, in its time zone), outside until the next opens", async () => {
    const schedules = parse([
      nightly,
      { name: "us-sundays", schedule: "0 0 6 ? * SUN", duration: "2h", location: "America/New_York", targets: { clusters: [{ clusterName: "us-1" }] } },
    ]).schedules!;
    // Monday 2025-06-02 23:30 in Berlin (21:30 UTC): inside the night's window, until Tuesday 02:00.
    const monday = await scheduleWindows(schedules, new Date("2025-06-02T21:30:00Z"), FILE);
    expect(monday.get("eu-nights")).to.deep.equal({ name: "eu-nights", active: true, until: "2025-06-03T02:00:00+02:00" });
    expect(monday.get("us-sundays")).to.deep.equal({ name: "us-sundays", active: false, until: "2025-06-08T06:00:00-04:00" });
    // Saturday noon: no window until Monday night.
    const saturday = await scheduleWindows(schedules, new Date("2025-06-07T10:00:00Z"), FILE);
    expect(saturday.get("eu-nights")).to.deep.equal({ name: "eu-nights", active: false, until: "2025-06-09T22:00:00+02:00" });
    // The night before New York's clocks go forward (2025-03-09): Fleet's library opens the 02:30 window at 01:30 EST.
    const dst = parse([
      { name: "ny", schedule: "0 30 2 * * ?", duration: "1h", location: "America/New_York", targets: { clusters: [{ clusterName: "us-1" }] } },
    ]).schedules!;
    expect((await scheduleWindows(dst, new Date("2025-03-09T06:00:00Z"), FILE)).get("ny")).to.deep.equal({
      name: "ny",
      active: false,
      until: "2025-03-09T01:30:00-05:00",
    });
    expect((await scheduleWindows(dst, new Date("2025-03-09T06:45:00Z"), FILE)).get("ny")).to.deep.equal({
      name: "ny",
      active: true,
      until: "2025-03-09T03:30:00-04:00",
    });
  });

  it("a cluster is outside when every schedule targeting it is: several schedules are a union, the first to open is named; untargeted clusters are never held", () => {
    const schedules: ScheduleConfig[] = [
      { name: "a", schedule: "", duration: "", targets: [{ clusterSelector: { matchLabels: { region: "eu" } } }], field: "schedules[0]" },
      { name: "b", schedule: "", duration: "", targets: [{ clusterName: "eu-2" }], field: "schedules[1]" },
    ];
    const targeted = decideTargets({ clusters, clusterGroups: [], schedules }, []).schedules;
    const names = clusters.map((c) => c.name);
    const windows = (bActive: boolean) =>
      new Map([
        ["a", { name: "a", active: false, until: "2025-06-09T22:00:00+02:00" }],
        ["b", { name: "b", active: bActive, until: "2025-06-08T06:00:00-04:00" }],
      ]);
    expect([...clustersOutsideWindows(schedules, windows(false), targeted, names).values()]).to.deep.equal([
      { cluster: "eu-1", schedule: "a", until: "2025-06-09T22:00:00+02:00" },
      { cluster: "eu-2", schedule: "b", until: "2025-06-08T06:00:00-04:00" },
    ]);
    expect([...clustersOutsideWindows(schedules, windows(true), targeted, names).keys()]).to.deep.equal(["eu-1"]);
  });
});

const entry = (bundle: string, cluster: string, deploymentId: string) =>
  ({ gitRepo: "g", bundle, cluster, deploymentId, dependsOn: [] }) as unknown as PlanEntry;
const record = (bundle: string, cluster: string, deploymentId: string) => ({ gitRepo: "g", bundle, cluster, deploymentId, commit: "c", objectCount: 1 });

describe("held pairs: outside a window, after --partition (core/desired/holds.ts)", () => {
  const outside = new Map([["eu-1", { cluster: "eu-1", schedule: "eu-nights", until: "2025-06-09T22:00:00+02:00" }]]);
  const previous = {
    gitRepos: {},
    deploymentIds: { "eu-1/g/app": "id1", "eu-1/g/same": "s1", "eu-1/g/gone": "x", "eu-1/g/left": "y" },
    records: {
      "eu-1/g/app": record("app", "eu-1", "id1"),
      "eu-1/g/same": record("same", "eu-1", "s1"),
      "eu-1/g/gone": record("gone", "eu-1", "x"),
      "eu-1/g/left": record("left", "eu-1", "y"),
    },
  };

  it("outside its window a cluster's changed and new pairs are held with until when; unchanged ones and other clusters are not", () => {
    const changing = [entry("app", "eu-1", "id2"), entry("same", "eu-1", "s1"), entry("new", "eu-1", "n1"), entry("app", "us-1", "id2")];
    const held = windowHolds(changing, outside, previous as never);
    expect(held.map(([p]) => `${p.bundle}/${p.cluster}`)).to.deep.equal(["app/eu-1", "new/eu-1"]);
    const failures = new FailedDeployments();
    for (const [p, err] of held) failures.hold(p, err, "schedule");
    const f = failures.get({ gitRepo: "g", bundle: "app", cluster: "eu-1" })!;
    expect(f.held).to.equal("schedule");
    expect(f.reason).to.equal("held: cluster eu-1 is outside its schedule eu-nights until 2025-06-09T22:00:00+02:00 (schedules; it keeps what it has)");
    expect(describeFailure(f)).to.match(/\(not deployed yet\)$/);
  });

  it("a pair whose bundle no longer targets a cluster outside its window is kept; one whose bundle is gone is pruned, as Fleet deletes a deleted bundle's", () => {
    const kept = keptOutsideWindows(
      [entry("app", "eu-1", "id2"), entry("same", "eu-1", "s1")],
      outside,
      previous as never,
      new Set(["g/app", "g/same", "g/left"]),
    );
    expect(kept.map(([p]) => p.bundle)).to.deep.equal(["left"]);
  });

  const rollout = (bundle: string, waves: [string, string[]][]): BundleRollout => ({
    gitRepo: "g",
    bundle,
    partitions: [],
    unpartitioned: [],
    warnings: [],
    waves: waves.map(([partition, cs], i) => ({ partition, clusters: cs, afterPrevious: i > 0 })),
  });
  const rollouts = new Map([
    [
      "g/app",
      rollout("app", [
        ["canary", ["eu-1"]],
        ["eu", ["eu-2"]],
        ["rest", ["us-1"]],
      ]),
    ],
    [
      "g/db",
      rollout("db", [
        ["eu", ["eu-1", "eu-2"]],
        ["rest", ["us-1"]],
      ]),
    ],
  ]);
  const entries = ["eu-1", "eu-2", "us-1"].flatMap((c) => [entry("app", c, "new"), entry("db", c, "new"), entry("plain", c, "new")]);

  it("--partition NAME deploys each rollout's partitions up to and including NAME and holds the later ones; a rollout without NAME is held whole", () => {
    const at = (p: string, unchanged = new Set<PlanEntry>()) =>
      partitionHolds(rollouts, entries, unchanged, p).map(([e, err]) => `${e.bundle}/${e.cluster}: ${err.reason}`);
    expect(at("canary")).to.deep.equal([
      "db/eu-1: held by --partition canary: the rollout of bundle db has no partition canary (its partitions: eu, rest); a plain `up` deploys it",
      "app/eu-2: held by --partition canary: cluster eu-2 is in partition eu, after canary in the rollout of bundle app",
      "db/eu-2: held by --partition canary: the rollout of bundle db has no partition canary (its partitions: eu, rest); a plain `up` deploys it",
      "app/us-1: held by --partition canary: cluster us-1 is in partition rest, after canary in the rollout of bundle app",
      "db/us-1: held by --partition canary: the rollout of bundle db has no partition canary (its partitions: eu, rest); a plain `up` deploys it",
    ]);
    expect(at("eu").map((l) => l.split(":")[0])).to.deep.equal(["app/us-1", "db/us-1"]);
    expect(at("rest")).to.deep.equal([]);
    // An unchanged pair has nothing to hold.
    expect(at("eu", new Set(entries.filter((e) => e.cluster === "us-1" && e.bundle === "app"))).map((l) => l.split(":")[0])).to.deep.equal(["db/us-1"]);
  });

  it("an unknown partition is an error listing the known ones in rollout order", () => {
    expect(errorOf(() => partitionHolds(rollouts, entries, new Set(), "canray"))).to.equal(
      '--partition: --partition "canray" is no partition of this update\'s rollouts; they are: canary, eu, rest',
    );
    expect(errorOf(() => partitionHolds(new Map(), entries, new Set(), "canary"))).to.match(/no bundle has a rolloutStrategy/);
  });

  it("the PR summary names the partitions a change touches, in order, with the command for each", () => {
    const config = { clusters: [], clusterGroups: [], gitRepos: [] };
    const state = {
      config,
      plan: { entries: [entry("app", "eu-1", "new"), entry("app", "us-1", "new"), entry("db", "us-1", "same")] },
      rollouts,
      failures: new FailedDeployments(),
    } as unknown as FleetState;
    const before = { "us-1/g/db": record("db", "us-1", "same") } as never;
    expect(partitionsMarkdown("prod", reportFacts(state, before).touchedPartitions)).to.deep.equal([
      "**Partitions** this change touches, in rollout order: `canary` → `rest`. To approve between them, run " +
        "`npm run up -- --stack prod --partition canary`, then `npm run up -- --stack prod --partition rest` (each deploys its partitions up to that one and holds the later ones).",
      "",
    ]);
    expect(partitionsMarkdown("prod", reportFacts({ ...state, plan: { entries: [] } } as unknown as FleetState, {}).touchedPartitions)).to.deep.equal([]);
  });
});

describe("a rollout behind a cluster outside its window (core/desired/rollout-gates.ts)", () => {
  const views = clusterViews(clusters, []);
  const bundle = {
    gitRepo: "g",
    name: "app",
    fleetYaml: "app/fleet.yaml",
    rolloutStrategy: {
      partitions: [
        { name: "canary", clusterName: "eu-1", maxUnavailable: 0 },
        { name: "rest", clusterSelector: {} },
      ],
    },
  } as never;
  const later = [entry("app", "eu-2", "new"), entry("app", "us-1", "new")];

  it("the partitions after it are held, not failed; a failed canary still fails them; a --partition hold stops nothing", () => {
    const behind = (kind: "schedule" | "partition" | "failed") => {
      const failures = new FailedDeployments();
      const canary = { gitRepo: "g", bundle: "app", cluster: "eu-1" };
      if (kind === "failed") failures.fail(canary, new Error("ErrApplied"));
      else failures.hold(canary, new Error("held"), kind);
      const r = rolloutGates(later, [bundle], new Map([[bundle, partitionClusters((bundle as Bundle).rolloutStrategy!, views)]]), failures);
      return { heldBack: r.heldBack.map(([e]) => e.cluster), waiting: r.waiting.map(([e]) => e.cluster) };
    };
    expect(behind("schedule")).to.deep.equal({ heldBack: ["eu-2", "us-1"], waiting: [] });
    expect(behind("failed")).to.deep.equal({ heldBack: [], waiting: ["eu-2", "us-1"] });
    expect(behind("partition")).to.deep.equal({ heldBack: [], waiting: [] });
  });
});
