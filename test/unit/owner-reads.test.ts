/**
 * The reads of clusters before apply are each GitRepo's own (issue 53, core/desired/cluster-reads.ts):
 * through the whole desired state with fake facts, one GitRepo's owners read or lookup read that fails
 * or times out on a cluster fails only that GitRepo's pairs there; the other GitRepo, on the same
 * cluster, deploys; nothing throws.
 */
import { expect } from "chai";
import { StackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { LookupJob, OwnersJob } from "../../core/model/renderer-protocol";
import { discovered, fakeFacts, nothingExists } from "../support/fake-facts";
import { gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";

const cacheRoot = tempDir("pf-cache-");
const KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n";
const TIMED_OUT = "the read did not finish within 2s: context deadline exceeded";

/** GitRepos "victim" and "attacker", each a chart whose template looks a ConfigMap of its namespace up, both on c1 and c2. */
function twoTeams(o: { valuesFrom?: boolean } = {}): StackConfig {
  const valuesFrom = (name: string) =>
    o.valuesFrom ? `helm:\n  valuesFrom:\n    - configMapKeyRef: {name: vals, namespace: ${name}, key: values.yaml}\n` : "";
  const team = (name: string) =>
    new TestRepo({
      "app/fleet.yaml": `defaultNamespace: ${name}\n${valuesFrom(name)}`,
      "app/Chart.yaml": `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`,
      "app/templates/cm.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}-config\ndata:\n  seen: {{ (lookup "v1" "ConfigMap" "${name}" "x") | toJson | quote }}\n`,
    });
  const [victim, attacker] = [team("victim"), team("attacker")];
  return {
    file: "stacks/Pulumi.test.yaml",
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    clusterGroups: [],
    clusters: ["c1", "c2"].map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: KUBECONFIG })),
    gitRepos: [
      gitRepoConfig({ name: "attacker", repo: attacker.url(), paths: ["app"], targets: [{ clusterSelector: {} }], allowedTargetNamespaces: ["attacker"] }),
      gitRepoConfig({ name: "victim", repo: victim.url(), paths: ["app"], targets: [{ clusterSelector: {} }] }),
    ],
  };
}

/** A cluster serving ConfigMaps: the renderer asks the cluster for kinds it serves. */
const CAPS = { kubeVersion: { version: "v1.36.3", major: "1", minor: "36" }, apiVersions: ["v1", "v1/ConfigMap"] };
const deployed = (s: { deployments: { key: string }[] }) => s.deployments.map((d) => d.key).sort();

describe("each GitRepo's reads of a cluster are its own (desired state, fake facts)", function () {
  this.timeout(60_000);
  const answers = (jobs: LookupJob[]) => Object.fromEntries(jobs.map((j) => [j.id, { answers: j.keys.map((key) => ({ key })) }]));

  it("the attacker's owners read timing out on c1 fails only its pair there; the victim deploys on c1; nothing throws", async () => {
    const asked: OwnersJob[] = [];
    const objects = (jobs: OwnersJob[]) => {
      asked.push(...jobs);
      return { ...nothingExists(jobs), "c1\u0000attacker": { error: TIMED_OUT } };
    };
    const s = await desiredState(twoTeams(), fakeFacts({ objects, lookup: answers, discovery: discovered(CAPS) }), { cacheRoot });
    expect(s.failures.map((f) => [f.gitRepo, f.cluster])).to.deep.equal([["attacker", "c1"]]);
    expect(s.failures[0].message).to.contain("cannot tell who owns").and.contain("PULUMI_FLEET_CLUSTER_READ_SECONDS");
    expect(deployed(s)).to.deep.equal(["c1/victim/victim-app", "c2/attacker/attacker-app", "c2/victim/victim-app"]);
    expect(new Set(asked.map((j) => j.id).filter((id) => id.includes("\u0000")))).to.deep.equal(
      new Set(["c1\u0000attacker", "c1\u0000victim", "c2\u0000attacker", "c2\u0000victim"]),
    );
  });

  it("the attacker's lookup read timing out on c1 fails only its pair there, naming the bound; the victim's lookups on c1 are answered", async () => {
    const lookup = (jobs: LookupJob[]) => ({
      ...answers(jobs),
      ...Object.fromEntries(
        jobs.filter((j) => j.id.startsWith("c1 ") && j.keys.some((k) => k.namespace === "attacker")).map((j) => [j.id, { error: TIMED_OUT }]),
      ),
    });
    const s = await desiredState(twoTeams(), fakeFacts({ objects: nothingExists, lookup, discovery: discovered(CAPS) }), { cacheRoot });
    expect(s.failures.map((f) => [f.gitRepo, f.cluster])).to.deep.equal([["attacker", "c1"]]);
    expect(s.failures[0].message).to.contain("lookup").and.contain("PULUMI_FLEET_CLUSTER_READ_SECONDS");
    expect(deployed(s)).to.deep.equal(["c1/victim/victim-app", "c2/attacker/attacker-app", "c2/victim/victim-app"]);
  });

  it("the attacker's helm.valuesFrom read timing out on c1 fails only its pair there; the victim's valuesFrom on c1 is read", async () => {
    const vals = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "vals" }, data: { "values.yaml": "x: 1\n" } };
    const lookup = (jobs: LookupJob[]) =>
      Object.fromEntries(
        jobs.map((j) => [
          j.id,
          j.id.startsWith("c1 ") && j.keys.some((k) => k.namespace === "attacker" && k.name === "vals")
            ? { error: TIMED_OUT }
            : { answers: j.keys.map((key) => (key.name === "vals" ? { key, object: vals } : { key })) },
        ]),
      );
    const s = await desiredState(twoTeams({ valuesFrom: true }), fakeFacts({ objects: nothingExists, lookup, discovery: discovered(CAPS) }), { cacheRoot });
    expect(s.failures.map((f) => [f.gitRepo, f.cluster])).to.deep.equal([["attacker", "c1"]]);
    expect(s.failures[0].message).to.contain("valuesFrom").and.contain("PULUMI_FLEET_CLUSTER_READ_SECONDS");
    expect(deployed(s)).to.deep.equal(["c1/victim/victim-app", "c2/attacker/attacker-app", "c2/victim/victim-app"]);
  });

  it("the reads run in one batch per GitRepo: the attacker's batch crashing fails only its pairs, on every cluster; the victim deploys", async () => {
    const batches: string[][] = [];
    const objects = (jobs: OwnersJob[]) => {
      batches.push(jobs.map((j) => j.id));
      if (jobs.some((j) => j.id.endsWith("\u0000attacker"))) throw new Error("fleet-render failed (exit 2): out of memory");
      return nothingExists(jobs);
    };
    const s = await desiredState(twoTeams(), fakeFacts({ objects, lookup: answers, discovery: discovered(CAPS) }), { cacheRoot });
    expect(s.failures.map((f) => [f.gitRepo, f.cluster])).to.deep.equal([
      ["attacker", "c1"],
      ["attacker", "c2"],
    ]);
    expect(s.failures[0].message).to.contain("out of memory");
    expect(deployed(s)).to.deep.equal(["c1/victim/victim-app", "c2/victim/victim-app"]);
    expect(batches.filter((b) => b.some((id) => id.includes("\u0000"))).map((b) => b.sort())).to.deep.equal([
      ["c1\u0000attacker", "c2\u0000attacker"],
      ["c1\u0000victim", "c2\u0000victim"],
    ]);
  });
});
