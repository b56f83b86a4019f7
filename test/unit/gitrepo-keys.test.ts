/**
 * Each GitRepo's bundles live in its own key space (core/model/keys.ts, issue 41): a fleet.yaml
 * `name:` equal to another GitRepo's bundle names a different bundle. Fake facts, real git and the
 * real renderer; the swap the issue found (the victim's manifests to the attacker's cluster, the
 * attacker's to the victim's, the victim's pruned) is checked in both orders.
 */
import { expect } from "chai";
import { StackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { DesiredState } from "../../core/desired/types";
import { previousFromOutputs } from "../../core/desired/previous";
import { planMigration } from "../../core/migrate/migrate";
import { StateResource } from "../../core/migrate/state-shape";
import { fakeFacts } from "../support/fake-facts";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";

const cacheRoot = tempDir("pf-cache-");

function teams(victimFirst: boolean): StackConfig {
  const victim = new TestRepo({ "app/fleet.yaml": "name: web\n", "app/cm.yaml": CONFIGMAP("victim-secret", { token: "victim" }) });
  const attacker = new TestRepo({ "x/fleet.yaml": "name: web\n", "x/cm.yaml": CONFIGMAP("attacker", { owned: "yes" }) });
  const repos = [
    gitRepoConfig({ name: "alpha", repo: victimFirst ? victim.dir : attacker.dir, targets: [{ clusterName: victimFirst ? "prod" : "dev" }] }),
    gitRepoConfig({ name: "beta", repo: victimFirst ? attacker.dir : victim.dir, targets: [{ clusterName: victimFirst ? "dev" : "prod" }] }),
  ];
  return {
    file: "stacks/Pulumi.test.yaml",
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    renderDir: "/tmp/pulumi-fleet-render",
    clusterGroups: [],
    clusters: ["dev", "prod"].map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false })),
    gitRepos: repos,
  };
}

const deployed = (s: DesiredState) =>
  s.deployments
    .map(
      (d) =>
        `${d.key}: ${d.objects.map((o) => o.manifest.metadata.name).join(",")} ` + `(${d.objects[0].manifest.metadata.labels!["fleet.cattle.io/repo-name"]})`,
    )
    .sort();

describe("a bundle is its GitRepo's own (core/model/keys.ts)", function () {
  this.timeout(60_000);

  for (const victimFirst of [true, false]) {
    it(`two GitRepos' bundles of one name are two bundles, each on its own clusters with its own files (victim listed ${victimFirst ? "first" : "second"})`, async () => {
      const config = teams(victimFirst);
      const [victim, attacker] = victimFirst ? ["alpha", "beta"] : ["beta", "alpha"];
      const s = await desiredState(config, fakeFacts(), { cacheRoot });
      expect(deployed(s)).to.deep.equal([`dev/${attacker}/web: attacker (${attacker})`, `prod/${victim}/web: victim-secret (${victim})`].sort());
      expect(s.failures).to.deep.equal([]);
      expect(s.summary.gitRepos[victim].bundles).to.deep.equal(["web"]);
      expect(s.summary.gitRepos[victim].clusters).to.deep.equal(["prod"]);
      expect(s.summary.gitRepos[attacker].clusters).to.deep.equal(["dev"]);
    });
  }

  it("an earlier version's pairs and records (\"<cluster>/<bundle>\") are renamed by the state's migration, every reference with them, and read back under their GitRepo", async () => {
    const config = teams(true);
    const first = await desiredState(config, fakeFacts(), { cacheRoot });
    const legacyRecords = Object.fromEntries(Object.values(first.records).map((r) => [`${r.cluster}/${r.bundle}`, r]));
    const urn = (name: string) =>
      `urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::${name}`;
    const root = "urn:pulumi:s::pulumi-fleet::pulumi:pulumi:Stack::pulumi-fleet-s";
    const pair = (name: string, gitRepo: string | undefined, more: Record<string, unknown> = {}): StateResource =>
      ({
        urn: urn(name),
        type: "pulumi-fleet:index:BundleDeployment",
        custom: true,
        parent: root,
        inputs: gitRepo ? { deletePolicy: { ownerLabels: { "fleet.cattle.io/repo-name": gitRepo } } } : {},
        ...more,
      }) as StateResource;
    const states = Object.fromEntries(Object.keys(legacyRecords).map((k) => [k, { state: "Ready" }]));
    const resources: StateResource[] = [
      {
        urn: root,
        type: "pulumi:pulumi:Stack",
        outputs: { summary: first.summary, deployments: legacyRecords, deploymentStates: { ...states, "x/unknown": {} } },
      },
      pair("dev/web", "beta"),
      // Its GitRepo from its record when its inputs name none; its references to the other pair renamed with it.
      pair("prod/web", undefined, { dependencies: [urn("dev/web")], propertyDependencies: { waitFor: [urn("dev/web")] }, deletedWith: urn("dev/web") }),
      // No GitRepo known: left as it is.
      pair("x/unknown", undefined),
    ];
    const m = planMigration({ deployment: { resources } }, { configured: new Set(["dev", "prod"]) });
    expect(m.from).to.equal(3);
    expect(m.aliases).to.deep.equal({ "dev/beta/web": "dev/web", "prod/alpha/web": "prod/web" });
    const after = m.state.deployment!.resources!;
    expect(after.map((r) => r.urn)).to.deep.equal([root, urn("dev/beta/web"), urn("prod/alpha/web"), urn("x/unknown")]);
    expect(after[2]).to.deep.include({
      dependencies: [urn("dev/beta/web")],
      propertyDependencies: { waitFor: [urn("dev/beta/web")] },
      deletedWith: urn("dev/beta/web"),
    });
    const outputs = after[0].outputs as Record<string, Record<string, unknown>>;
    expect(Object.keys(outputs.deployments).sort()).to.deep.equal(["dev/beta/web", "prod/alpha/web"]);
    expect(Object.keys(outputs.deploymentStates).sort(), "a key whose GitRepo nothing tells is dropped").to.deep.equal(["dev/beta/web", "prod/alpha/web"]);
    expect(resources[1].urn, "the state given is not changed").to.equal(urn("dev/web"));
    expect(planMigration(m.state, { configured: new Set(["dev", "prod"]) }).state, "a migrated state migrates to itself").to.equal(m.state);

    const previous = previousFromOutputs(outputs.summary, outputs.deployments)!;
    expect(Object.keys(previous.records!).sort()).to.deep.equal(["dev/beta/web", "prod/alpha/web"]);
    const next = await desiredState(config, fakeFacts({ previous }), { cacheRoot });
    // Unchanged since: the deploymentIDs read back under the new keys match.
    expect(next.warnings.join("\n")).to.contain("2 unchanged bundle deployment(s) were rendered again");
  });
});
