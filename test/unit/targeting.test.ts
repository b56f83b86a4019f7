import { expect } from "chai";
import { buildPlan, deploymentIdOf, Plan } from "../../core/targeting/plan";
import { mergeOptions } from "../../core/targeting/merge";
import { Bundle, BundleTarget } from "../../core/bundles/types";
import { ClusterConfig, ClusterGroupConfig } from "../../core/config/stack";
import { TargetCriteria } from "../../core/config/target-criteria";
import { rejectionOf } from "../support/rejection";

const cluster = (name: string, labels: Record<string, string> = {}, extra: Partial<ClusterConfig> = {}): ClusterConfig => ({
  name,
  labels,
  annotations: {},
  templateValues: {},
  deleteUnreachable: false,
  ...extra,
});
const group = (name: string, matchLabels: Record<string, string>, labels: Record<string, string> = {}): ClusterGroupConfig => ({
  name,
  labels,
  selector: { matchLabels },
});

/** A bundle as the reader builds it: customizations first, then GitRepo targets mirrored as restrictions. */
function bundle(gitTargets: TargetCriteria[], customizations: Partial<BundleTarget>[] = [], over: Partial<Bundle> = {}): Bundle {
  const restrictions = gitTargets.length ? gitTargets : [{ name: "default", clusterGroup: "default" }];
  return {
    name: "b",
    gitRepo: "repo",
    path: ".",
    dir: "/tmp",
    labels: {},
    options: {},
    restrictions,
    targets: [...customizations.map((c, i) => ({ name: `target00${i}`, ...c })), ...restrictions.map((t) => ({ ...t, name: t.name ?? "" }))],
    targetCustomizationMode: "FirstMatch",
    dependsOn: [],
    paused: false,
    style: { kind: "yaml" },
    files: [],
    manifestId: "s-abc",
    ...over,
  };
}

const clustersOf = (plan: Plan) => plan.entries.map((e) => e.cluster);

describe("targeting (Fleet rules)", () => {
  const clusters = [cluster("dev-1", { env: "dev" }), cluster("dev-2", { env: "dev", region: "us" }), cluster("prod-1", { env: "prod" })];
  const groups = [group("dev", { env: "dev" }, { tier: "low" }), group("prod", { env: "prod" }, { tier: "high" })];

  it("selects by clusterName, clusterSelector, clusterGroup and clusterGroupSelector, criteria ANDed", async () => {
    expect(clustersOf(await buildPlan([bundle([{ clusterName: "dev-2" }])], clusters, groups))).to.deep.equal(["dev-2"]);
    expect(
      clustersOf(await buildPlan([bundle([{ clusterSelector: { matchExpressions: [{ key: "region", operator: "Exists" }] } }])], clusters, groups)),
    ).to.deep.equal(["dev-2"]);
    expect(clustersOf(await buildPlan([bundle([{ clusterGroup: "dev" }])], clusters, groups))).to.deep.equal(["dev-1", "dev-2"]);
    expect(clustersOf(await buildPlan([bundle([{ clusterGroupSelector: { matchLabels: { tier: "high" } } }])], clusters, groups))).to.deep.equal(["prod-1"]);
    expect(
      clustersOf(await buildPlan([bundle([{ clusterGroup: "dev", clusterSelector: { matchLabels: { region: "us" } } }])], clusters, groups)),
    ).to.deep.equal(["dev-2"]);
    expect(
      clustersOf(
        await buildPlan([bundle([{ clusterSelector: { matchExpressions: [{ key: "env", operator: "NotIn", values: ["dev"] }] } }])], clusters, groups),
      ),
    ).to.deep.equal(["prod-1"]);
  });

  it("a target with no criteria matches nothing; an empty selector matches everything", async () => {
    expect(clustersOf(await buildPlan([bundle([{ name: "empty" }])], clusters, groups))).to.deep.equal([]);
    expect(clustersOf(await buildPlan([bundle([{ clusterSelector: {} }])], clusters, groups))).to.have.length(3);
  });

  it("defaults to cluster group `default`", async () => {
    expect(clustersOf(await buildPlan([bundle([])], clusters, groups))).to.deep.equal([]);
    expect(clustersOf(await buildPlan([bundle([])], clusters, [...groups, group("default", { env: "prod" })]))).to.deep.equal(["prod-1"]);
  });

  it("customizations configure but never select; GitRepo targets are the allow-list", async () => {
    const b = bundle(
      [{ name: "dev", clusterGroup: "dev" }],
      [{ name: "prod-custom", clusterSelector: { matchLabels: { env: "prod" } }, defaultNamespace: "p" }],
    );
    expect(clustersOf(await buildPlan([b], clusters, groups))).to.deep.equal(["dev-1", "dev-2"]);
  });

  it("FirstMatch applies the first matching customization; AllMatches merges every match in order", async () => {
    const customs: Partial<BundleTarget>[] = [
      { name: "c1", clusterGroup: "dev", helm: { values: { a: 1, deep: { x: 1 } } }, yaml: { overlays: ["one"] } },
      { name: "c2", clusterSelector: { matchLabels: { region: "us" } }, helm: { values: { b: 2, deep: { y: 2 } } }, yaml: { overlays: ["two"] } },
    ];
    const first = (await buildPlan([bundle([{ clusterGroup: "dev" }], customs)], clusters, groups)).entries.find((e) => e.cluster === "dev-2")!;
    expect(first.customizations).to.deep.equal(["c1"]);
    expect(first.options.helm!.values).to.deep.equal({ a: 1, deep: { x: 1 } });
    const all = (await buildPlan([bundle([{ clusterGroup: "dev" }], customs, { targetCustomizationMode: "AllMatches" })], clusters, groups)).entries.find(
      (e) => e.cluster === "dev-2",
    )!;
    expect(all.customizations).to.deep.equal(["c1", "c2"]);
    expect(all.options.helm!.values).to.deep.equal({ a: 1, b: 2, deep: { x: 1, y: 2 } });
    expect(all.options.yaml!.overlays).to.deep.equal(["one", "two"]);
  });

  it("doNotDeploy on the first matching customization skips the cluster", async () => {
    const plan = await buildPlan([bundle([{ clusterGroup: "dev" }], [{ name: "skip", clusterName: "dev-1", doNotDeploy: true }])], clusters, groups);
    expect(clustersOf(plan)).to.deep.equal(["dev-2"]);
    expect(plan.skipped).to.deep.equal([{ gitRepo: "repo", bundle: "b", cluster: "dev-1", target: "" }]);
  });

  it("merges options like Fleet: scalars override, values deep-merge, flags OR, negative timeout resets", () => {
    const merged = mergeOptions(
      { defaultNamespace: "a", keepResources: true, helm: { values: { x: { y: 1, l: [1, 2] } }, force: true, timeoutSeconds: 30 } },
      { defaultNamespace: "b", helm: { values: { x: { z: 2, l: [3] } }, atomic: true, timeoutSeconds: -1 } },
    );
    expect(merged).to.deep.equal({
      defaultNamespace: "b",
      keepResources: true,
      helm: { values: { x: { y: 1, z: 2, l: [3] } }, force: true, atomic: true, timeoutSeconds: 0 },
    });
  });

  it("is identical whatever the order of clusters, groups and targets in the stack", async () => {
    const targets = [
      { name: "d", clusterGroup: "dev" },
      { name: "p", clusterGroup: "prod" },
    ];
    const a = await buildPlan([bundle(targets)], clusters, groups);
    const b = await buildPlan([bundle([...targets].reverse())], [...clusters].reverse(), [...groups].reverse());
    expect(b).to.deep.equal(a);
  });

  it("deploymentId ignores diff and correctDrift, and changes with anything else", () => {
    const base = deploymentIdOf("s-1", { defaultNamespace: "a" });
    expect(deploymentIdOf("s-1", { defaultNamespace: "a", diff: { comparePatches: [{ kind: "X" }] }, correctDrift: { enabled: true } })).to.equal(base);
    expect(deploymentIdOf("s-1", { defaultNamespace: "b" })).not.to.equal(base);
    expect(deploymentIdOf("s-2", { defaultNamespace: "a" })).not.to.equal(base);
    expect(base).to.match(/^s-1:[0-9a-f]{64}$/);
  });

  it("the plan's deploymentIds (made from a shared base with the values slotted in) equal deploymentIdOf of each entry's options", async () => {
    const many = Array.from({ length: 12 }, (_, i) =>
      cluster(`c-${i}`, { env: i % 2 ? "prod" : "dev", region: `r${i % 3}` }, { templateValues: { n: i % 4 } }),
    );
    const b = bundle(
      [{ name: "all", clusterSelector: {} }],
      [{ clusterGroup: "prod", helm: { values: { tier: "high", "key with \u0000 and \u2028": ["x"] } } }],
      {
        options: {
          defaultNamespace: "ns",
          diff: { comparePatches: [{ kind: "X" }] },
          helm: {
            releaseName: "r",
            values: {
              name: "${ .ClusterName }",
              region: "global.fleet.clusterLabels.region",
              n: "${ .ClusterValues.n }",
              fixed: { z: 1, a: [2, { y: null }] },
            },
          },
        },
      },
    );
    const plain = bundle([{ name: "all", clusterSelector: {} }], [], { name: "plain", options: { helm: { values: { fixed: true } } } });
    const plan = await buildPlan([b, plain], many, [group("prod", { env: "prod" })]);
    expect(plan.entries).to.have.length(24);
    for (const e of plan.entries) expect(e.deploymentId, `${e.bundle} on ${e.cluster}`).to.equal(deploymentIdOf(e.manifestId, e.options));
    expect(new Set(plan.entries.filter((e) => e.bundle === "b").map((e) => e.deploymentId)).size).to.equal(12);
  });

  describe("helm values per cluster", () => {
    const helmBundle = (values: Record<string, unknown>, templateValues?: Record<string, string>) =>
      bundle([{ clusterSelector: {} }], [], { options: { helm: { values, templateValues } } });
    const valuesFor = async (b: Bundle, c: ClusterConfig) => (await buildPlan([b], [c], [])).entries[0].options.helm!.values;
    const c1 = cluster("c1", { env: "prod", region: "eu" }, { annotations: { owner: "ops" }, templateValues: { replicas: 3, nested: { a: "b" } } });

    it("substitutes global.fleet.clusterLabels and renders ${ } templates", async () => {
      const v = await valuesFor(
        helmBundle({
          env: "global.fleet.clusterLabels.env",
          missing: "global.fleet.clusterLabels.nope",
          name: "${ .ClusterName }",
          ns: "${ .ClusterNamespace }",
          region: "${ .ClusterLabels.region | upper }",
          owner: "${ .ClusterAnnotations.owner }",
          replicas: "${ .ClusterValues.replicas }",
          q: "${ .ClusterName | quote }",
          dflt: '${ get .ClusterLabels "tier" | default "standard" }',
          escaped: "${`${PWD}`}",
        }),
        c1,
      );
      expect(v).to.deep.equal({
        env: "prod",
        missing: "",
        name: "c1",
        ns: "fleet-default",
        region: "EU",
        owner: "ops",
        replicas: 3,
        q: "c1",
        dflt: "standard",
        escaped: "${PWD}",
      });
    });

    it("renders templateValues as YAML over the values", async () => {
      const v = await valuesFor(helmBundle({ a: 1 }, { nested: "${ toJson .ClusterValues.nested }", a: "${ .ClusterValues.replicas }" }), c1);
      expect(v).to.deep.equal({ a: 3, nested: { a: "b" } });
      // toYaml is Helm's, not sprig's: Fleet has no such function in values templates.
      expect(await rejectionOf(valuesFor(helmBundle({ a: 1 }, { nested: "${ toYaml .ClusterValues.nested }" }), c1))).to.match(
        /cluster c1: helm.templateValues.nested: failed to parse helm values template: .*function "toYaml" not defined/,
      );
    });

    it("a missing key is an error naming bundle, cluster and expression", async () => {
      expect(await rejectionOf(valuesFor(helmBundle({ x: "${ .ClusterLabels.nope }" }), c1))).to.match(
        /gitRepo repo, bundle b, cluster c1: helm.values: failed to render helm values template: .*at <.ClusterLabels.nope>: map has no entry for key "nope"/,
      );
    });

    it("a function Fleet removes or one that is not deterministic is an error, never a silent value", async () => {
      expect(await valuesFor(helmBundle({ x: '${ semverCompare ">=1.2" "1.10.0" }' }), c1)).to.deep.equal({ x: true });
      expect(await rejectionOf(valuesFor(helmBundle({ x: "${ uuidv4 }" }), c1))).to.match(/uuidv4" is not deterministic/);
      expect(await rejectionOf(valuesFor(helmBundle({ x: '${ env "HOME" }' }), c1))).to.match(
        /cluster c1: helm.values: failed to parse helm values template: .*function "env" not defined/,
      );
    });

    it("does no templating for a cluster without labels, nor with disablePreProcess (as Fleet)", async () => {
      expect(await valuesFor(helmBundle({ x: "${ .ClusterName }" }), cluster("bare"))).to.deep.equal({ x: "${ .ClusterName }" });
      const b = bundle([{ clusterSelector: {} }], [], {
        options: { helm: { values: { x: "${ .ClusterName }", e: "global.fleet.clusterLabels.env" }, disablePreProcess: true } },
      });
      expect(await valuesFor(b, c1)).to.deep.equal({ x: "${ .ClusterName }", e: "prod" });
    });
  });
});
