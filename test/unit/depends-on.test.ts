/**
 * dependsOn between GitRepos (core/targeting/depends-on.ts, issue 53): a name is the dependant's own
 * GitRepo's bundle; another GitRepo's is reached only by a selector naming fleet.cattle.io/repo-name
 * (what Fleet reads the same way), so no other team's new bundle or labels change what a bundle waits for.
 */
import { expect } from "chai";
import { buildPlan, Plan } from "../../core/targeting/plan";
import { Bundle, DependsOn } from "../../core/bundles/types";
import { ClusterConfig } from "../../core/config/stack";
import { FleetError } from "../../core/base/errors";

const clusters: ClusterConfig[] = ["c1", "c2"].map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false }));

function bundle(gitRepo: string, name: string, over: Partial<Bundle> = {}): Bundle {
  const restrictions = [{ name: "all", clusterSelector: {} }];
  return {
    name,
    gitRepo,
    path: name,
    fleetYaml: `${name}/fleet.yaml`,
    dir: "/tmp",
    labels: {},
    options: {},
    restrictions,
    targets: restrictions,
    targetCustomizationMode: "FirstMatch",
    dependsOn: [],
    paused: false,
    style: { kind: "yaml" },
    files: [],
    manifestId: `s-${gitRepo}-${name}`,
    ...over,
  };
}
const dependant = (gitRepo: string, ...dependsOn: DependsOn[]) => bundle(gitRepo, "app", { dependsOn });
const onCluster = (clusterNames: string[]) => ({
  restrictions: [{ name: "some", clusterName: clusterNames[0] }],
  targets: [{ name: "some", clusterName: clusterNames[0] }],
});

async function plan(bundles: Bundle[]): Promise<{ plan: Plan; failures: string[]; waits: Record<string, string[]> }> {
  const failures: string[] = [];
  const p = await buildPlan(bundles, clusters, [], undefined, {
    unread: new Set(),
    onFailure: (pair, err: FleetError) => failures.push(`${pair.cluster}/${pair.gitRepo}/${pair.bundle}: ${err.reason}`),
  });
  const waits: Record<string, string[]> = {};
  for (const e of p.entries) if (e.bundle === "app") waits[`${e.cluster}/${e.gitRepo}`] = e.dependsOn;
  return { plan: p, failures, waits };
}

const platformRepo = (name = "cert-manager") => ({ selector: { matchLabels: { "fleet.cattle.io/repo-name": "platform" } }, name });

describe("dependsOn between GitRepos", () => {
  it("a name is the dependant's own GitRepo's bundle, even when another GitRepo has one of that name", async () => {
    const { waits, failures } = await plan([
      bundle("platform", "cert-manager"),
      bundle("team-b", "cert-manager"),
      dependant("team-b", { name: "cert-manager" }),
    ]);
    expect(failures).to.deep.equal([]);
    expect(waits).to.deep.equal({ "c1/team-b": ["team-b/cert-manager"], "c2/team-b": ["team-b/cert-manager"] });
  });

  it("another GitRepo's bundle of that name never satisfies a plain name: the pair fails, saying how to reach it as Fleet reads it", async () => {
    const { waits, failures } = await plan([bundle("platform", "cert-manager"), dependant("team-b", { name: "cert-manager" })]);
    expect(waits).to.deep.equal({});
    expect(failures).to.have.length(2);
    expect(failures[0]).to.equal(
      "c1/team-b/app: dependsOn cert-manager, which is not deployed to this cluster: Fleet's agent finds no bundle deployment of it (no bundles matching labels " +
        "fleet.cattle.io/bundle-name=cert-manager) and never deploys this one. A name alone is this GitRepo's bundle; GitRepo platform has a bundle cert-manager: " +
        "to wait for it write {name: cert-manager, selector: {matchLabels: {fleet.cattle.io/repo-name: platform}}} (Fleet reads the same)",
    );
  });

  it("the explicit form (a name with matchLabels fleet.cattle.io/repo-name, valid Fleet) waits for that GitRepo's bundle", async () => {
    const { waits, failures } = await plan([bundle("platform", "cert-manager"), bundle("team-b", "cert-manager"), dependant("team-b", platformRepo())]);
    expect(failures).to.deep.equal([]);
    expect(waits).to.deep.equal({ "c1/team-b": ["platform/cert-manager"], "c2/team-b": ["platform/cert-manager"] });
    // Not deployed where the dependant is: Fleet's words, the pair alone fails.
    const partial = await plan([bundle("platform", "cert-manager", onCluster(["c1"])), dependant("team-b", platformRepo())]);
    expect(partial.waits).to.deep.equal({ "c1/team-b": ["platform/cert-manager"] });
    expect(partial.failures).to.have.length(1);
    expect(partial.failures[0]).to.match(/^c2\/team-b\/app: dependsOn platform\/cert-manager, which is not deployed to this cluster/);
  });

  it("a new bundle in a third GitRepo changes no resolution: not a name's, not an explicit one's, not a selector's", async () => {
    const labelled = { selector: { matchLabels: { role: "db" } } };
    const before = [
      bundle("platform", "cert-manager"),
      bundle("team-b", "cert-manager"),
      bundle("team-b", "db", { labels: { role: "db" } }),
      dependant("team-b", { name: "cert-manager" }, platformRepo(), labelled),
    ];
    const hostile = [
      bundle("team-a", "cert-manager", { labels: { role: "db", "fleet.cattle.io/repo-name": "platform" } }),
      bundle("team-a", "db", { labels: { role: "db" } }),
    ];
    const a = await plan(before);
    const b = await plan([...before, ...hostile]);
    expect(a.failures).to.deep.equal([]);
    expect(b.failures).to.deep.equal([]);
    expect(b.waits).to.deep.equal(a.waits);
    expect(a.waits["c1/team-b"]).to.deep.equal(["platform/cert-manager", "team-b/cert-manager", "team-b/db"]);
    // Fleet's selector would also match team-a's bundles: said on the dependant, never silently.
    expect(before[3].warnings?.join("\n")).to.contain(
      "dependsOn[2].selector waits only for GitRepo team-b's bundles; Fleet would also wait for team-a/cert-manager, team-a/db",
    );
  });

  it("a label set in fleet.yaml cannot claim another GitRepo: fleet.cattle.io/repo-name is the bundle's own", async () => {
    const squatter = bundle("team-a", "cert-manager", { labels: { "fleet.cattle.io/repo-name": "platform" } });
    const { waits, failures } = await plan([squatter, dependant("team-b", platformRepo())]);
    expect(waits).to.deep.equal({});
    expect(failures[0]).to.match(/^c1\/team-b\/app: dependsOn platform\/cert-manager, which is not deployed to this cluster/);
  });

  it("a selector waits for the matching bundles deployed to the cluster, and with none there fails the pair (Fleet's agent finds none)", async () => {
    const db = bundle("team-b", "db", { labels: { role: "db" }, ...onCluster(["c1"]) });
    const { waits, failures } = await plan([db, dependant("team-b", { selector: { matchLabels: { role: "db" } } })]);
    expect(waits).to.deep.equal({ "c1/team-b": ["team-b/db"] });
    expect(failures).to.deep.equal([
      'c2/team-b/app: dependsOn[0] matches no bundle deployed to this cluster: Fleet\'s agent finds no bundle deployment (no bundles matching labels {"matchLabels":{"role":"db"}}) and never deploys this one',
    ]);
  });

  it("a name and a selector are ANDed, as Fleet's agent does: the own bundle not matching the selector is no match", async () => {
    const { failures } = await plan([
      bundle("team-b", "db", { labels: { tier: "cache" } }),
      dependant("team-b", { name: "db", selector: { matchLabels: { tier: "db" } } }),
    ]);
    expect(failures).to.have.length(2);
    expect(failures[0]).to.match(
      /^c1\/team-b\/app: dependsOn\[0\] matches no bundle deployed to this cluster: .*fleet.cattle.io\/bundle-name=db \{"matchLabels":\{"tier":"db"\}\}/,
    );
  });

  it("a selector with matchExpressions on fleet.cattle.io/repo-name reaches the GitRepos it names", async () => {
    const sel = {
      selector: {
        matchExpressions: [{ key: "fleet.cattle.io/repo-name", operator: "In" as const, values: ["platform", "team-b"] }],
        matchLabels: { role: "db" },
      },
    };
    const { waits } = await plan([
      bundle("platform", "pg", { labels: { role: "db" } }),
      bundle("team-a", "pg", { labels: { role: "db" } }),
      bundle("team-b", "db", { labels: { role: "db" } }),
      dependant("team-b", sel),
    ]);
    expect(waits["c1/team-b"]).to.deep.equal(["platform/pg", "team-b/db"]);
  });
});
