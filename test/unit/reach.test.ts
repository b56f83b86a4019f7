/**
 * Between GitRepos (issue 41): content may narrow what the stack gives its GitRepo, never widen it
 * (core/desired/reach.ts), and an object another GitRepo owns is never taken (core/desired/owners.ts). Each
 * refusal fails that bundle deployment alone, naming the fleet.yaml field and the stack setting that
 * would allow it, while the other GitRepo's deployments proceed. Fake facts, real git and renderer.
 */
import { expect } from "chai";
import { StackConfig } from "../../core/config/stack";
import { GitRepoConfig } from "../../core/config/git-repo";
import { desiredState } from "../../core/desired/state";
import { DesiredState } from "../../core/desired/types";
import { knownOwners } from "../../core/desired/owners";
import { KnownClusters } from "../../core/desired/cluster-facts";
import { Facts } from "../../core/desired/facts";
import { gatherOwners } from "../../core/desired/gather-objects";
import { LookupJob, OwnersJob } from "../../core/model/renderer-protocol";
import { discovered, fakeFacts, nothingExists } from "../support/fake-facts";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { deployedAfter } from "../support/deployed-after";

const cacheRoot = tempDir("pf-cache-");
const FILE = "stacks/Pulumi.test.yaml";

/** Two clusters; GitRepo `a` (bundle a-a) and GitRepo `b` (bundles b-<path>), both from `repo`, targeting every cluster unless told. */
function stackOf(repo: TestRepo, b: Partial<GitRepoConfig> & { paths?: string[] } = {}, a: Partial<GitRepoConfig> = {}): StackConfig {
  return {
    file: FILE,
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    renderDir: "/tmp/pulumi-fleet-render",
    clusterGroups: [],
    clusters: ["c1", "c2"].map((name) => ({
      name,
      labels: { env: name === "c2" ? "prod" : "dev" },
      annotations: {},
      templateValues: {},
      deleteUnreachable: false,
    })),
    gitRepos: [
      gitRepoConfig({ name: "a", repo: repo.url(), paths: ["a"], targets: [{ clusterSelector: {} }], ...a }),
      gitRepoConfig({ name: "b", repo: repo.url(), paths: ["b"], targets: [{ clusterSelector: {} }], ...b }),
    ],
  };
}

const keys = (s: DesiredState) => s.deployments.map((d) => `${d.key}${d.held ? " held" : ""}`).sort();
const failed = (s: DesiredState) => s.failures.map((f) => `${f.cluster}/${f.gitRepo}/${f.bundle}`);
const run = (config: StackConfig, facts = fakeFacts()) => desiredState(config, facts, { cacheRoot });

describe("between GitRepos: content narrows its GitRepo's reach, never widens it (issue 41)", function () {
  this.timeout(60_000);

  describe("serviceAccount", () => {
    const files = {
      "a/cm.yaml": CONFIGMAP("a"),
      "b/crb.yaml": CONFIGMAP("b"),
      "b/fleet.yaml": "targetCustomizations:\n  - name: prod\n    clusterSelector: {matchLabels: {env: prod}}\n    serviceAccount: fleet-agent\n",
    };

    it("a customization naming another account than the stack's fails that deployment alone, naming the field and allowedServiceAccounts", async () => {
      const s = await run(stackOf(new TestRepo(files), { serviceAccount: "restricted" }));
      expect(failed(s)).to.deep.equal(["c2/b/b-b"]);
      expect(s.failures[0].message).to.equal(
        "b/fleet.yaml gitRepo b, bundle b-b, cluster c2: targetCustomizations[prod].serviceAccount: service account fleet-agent is refused: " +
          `the stack gives this GitRepo serviceAccount restricted, and content may not choose whom it deploys as; add fleet-agent to gitRepos[b].allowedServiceAccounts in ${FILE} to allow it`,
      );
      expect(keys(s)).to.deep.equal(["c1/a/a-a", "c1/b/b-b", "c2/a/a-a"]);
      expect(s.deployments.find((d) => d.key === "c1/b/b-b")!.entry!.options.serviceAccount).to.equal("restricted");
    });

    it("an account in allowedServiceAccounts is honoured; with neither setting content names any (as Fleet); allowedServiceAccounts alone binds too", async () => {
      const repo = new TestRepo(files);
      const allowed = await run(stackOf(repo, { serviceAccount: "restricted", allowedServiceAccounts: ["fleet-agent"] }));
      expect(failed(allowed)).to.deep.equal([]);
      expect(allowed.deployments.find((d) => d.key === "c2/b/b-b")!.entry!.options.serviceAccount).to.equal("fleet-agent");
      expect(failed(await run(stackOf(repo)))).to.deep.equal([]);
      const listOnly = await run(stackOf(repo, { allowedServiceAccounts: ["deployer"] }));
      expect(listOnly.failures.map((f) => f.message)).to.deep.equal([
        "b/fleet.yaml gitRepo b, bundle b-b, cluster c2: targetCustomizations[prod].serviceAccount: service account fleet-agent " +
          "is refused: the stack gives this GitRepo no serviceAccount and allowedServiceAccounts deployer, and content may not choose whom it deploys as; " +
          `add fleet-agent to gitRepos[b].allowedServiceAccounts in ${FILE} to allow it`,
      ]);
    });
  });

  describe("overrideTargets", () => {
    it("reaching a cluster outside the GitRepo's targets fails every deployment of that bundle, naming the clusters and allowOverrideTargets; narrowing deploys", async () => {
      const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("a"), "b/cm.yaml": CONFIGMAP("b"), "b/fleet.yaml": "overrideTargets:\n  - clusterSelector: {}\n" });
      const s = await run(stackOf(repo, { targets: [{ clusterName: "c1" }] }));
      expect(failed(s)).to.deep.equal(["c1/b/b-b", "c2/b/b-b"]);
      expect(s.failures[0].message).to.equal(
        "b/fleet.yaml gitRepo b, bundle b-b, cluster c1: overrideTargets: overrideTargets reaches cluster(s) c2, outside the GitRepo's targets: " +
          "content may narrow where it deploys, not widen it, so this bundle deploys nowhere until it does; " +
          `set gitRepos[b].allowOverrideTargets: true in ${FILE} to allow it (Fleet's behaviour), or add those clusters to gitRepos[b].targets`,
      );
      expect(keys(s)).to.deep.equal(["c1/a/a-a", "c2/a/a-a"]);
      const allowed = await run(stackOf(repo, { targets: [{ clusterName: "c1" }], allowOverrideTargets: true }));
      expect([failed(allowed), keys(allowed)]).to.deep.equal([[], ["c1/a/a-a", "c1/b/b-b", "c2/a/a-a", "c2/b/b-b"]]);
      repo.commit({ "b/fleet.yaml": "overrideTargets:\n  - clusterName: c1\n" });
      const narrowed = await run(stackOf(repo));
      expect([failed(narrowed), keys(narrowed)]).to.deep.equal([[], ["c1/a/a-a", "c1/b/b-b", "c2/a/a-a"]]);
    });

    it("a bundle named as another GitRepo's reaches out alone: the other GitRepo's bundle of that name deploys", async () => {
      const repo = new TestRepo({
        "a/cm.yaml": CONFIGMAP("a"),
        "b/cm.yaml": CONFIGMAP("b"),
        "b/fleet.yaml": "name: a-a\noverrideTargets:\n  - clusterSelector: {}\n",
      });
      const s = await run(stackOf(repo, { targets: [{ clusterName: "c1" }] }));
      expect(failed(s)).to.deep.equal(["c1/b/a-a", "c2/b/a-a"]);
      expect(keys(s)).to.deep.equal(["c1/a/a-a", "c2/a/a-a"]);
    });
  });

  describe("helm.takeOwnership", () => {
    it("content's takeOwnership fails its deployments unless allowTakeOwnership, naming the field it is set in", async () => {
      const repo = new TestRepo({
        "a/cm.yaml": CONFIGMAP("a"),
        "b/cm.yaml": CONFIGMAP("b"),
        "b/fleet.yaml": "targetCustomizations:\n  - name: dev\n    clusterName: c1\n    helm: {takeOwnership: true}\n",
      });
      const s = await run(stackOf(repo));
      expect(s.failures.map((f) => f.message)).to.deep.equal([
        "b/fleet.yaml gitRepo b, bundle b-b, cluster c1: targetCustomizations[dev].helm.takeOwnership: " +
          `adopting objects that already exist on the cluster is not allowed for this GitRepo's content; set gitRepos[b].allowTakeOwnership: true in ${FILE} to allow it ` +
          "(it never adopts what another GitRepo owns)",
      ]);
      expect(keys(s)).to.deep.equal(["c1/a/a-a", "c2/a/a-a", "c2/b/b-b"]);
      repo.commit({ "b/fleet.yaml": "helm: {takeOwnership: true}\n" });
      expect((await run(stackOf(repo))).failures.map((f) => f.field)).to.deep.equal(["helm.takeOwnership", "helm.takeOwnership"]);
      expect(failed(await run(stackOf(repo, { allowTakeOwnership: true })))).to.deep.equal([]);
    });
  });

  describe("allowedTargetNamespaces", () => {
    it("objects outside the namespaces, cluster-scoped ones other than allowed Namespaces, and a namespace outside them fail their deployment alone", async () => {
      const repo = new TestRepo({
        "a/cm.yaml": CONFIGMAP("a"),
        "b/fleet.yaml": "defaultNamespace: team-b-app\n",
        "b/objects.yaml":
          `${CONFIGMAP("in")}---\n${CONFIGMAP("out").replace("name: out", "name: out\n  namespace: team-a")}---\n` +
          "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-b-app\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: wide\n",
        "fine/fleet.yaml": "defaultNamespace: team-b-app\n",
        "fine/cm.yaml": CONFIGMAP("fine"),
        "nowhere/cm.yaml": CONFIGMAP("nowhere"),
      });
      const s = await run(stackOf(repo, { paths: ["b", "fine", "nowhere"], allowedTargetNamespaces: ["team-b-*"] }));
      expect(failed(s)).to.deep.equal(["c1/b/b-b", "c2/b/b-b", "c1/b/b-nowhere", "c2/b/b-nowhere"]);
      expect(s.failures[0].message).to.equal(
        `b/fleet.yaml gitRepo b, bundle b-b, cluster c1: 2 object(s) outside gitRepos[b].allowedTargetNamespaces in ${FILE} (team-b-*): ` +
          "ConfigMap team-a/out, ClusterRole wide (cluster-scoped); objects of cluster scope other than those Namespaces are refused too, as Fleet refuses them under a " +
          "targetNamespace; move them, or add the namespace there to allow it",
      );
      expect(s.failures[2].message).to.equal(
        "gitRepo b, bundle b-nowhere, cluster c1: defaultNamespace: namespace default (none set: Fleet's default) is not in " +
          `gitRepos[b].allowedTargetNamespaces in ${FILE} (team-b-*); add it there to allow it`,
      );
      expect(keys(s)).to.deep.equal(["c1/a/a-a", "c1/b/b-fine", "c2/a/a-a", "c2/b/b-fine"]);
      expect(failed(await run(stackOf(repo, { paths: ["b", "fine", "nowhere"] })))).to.deep.equal([]);
    });

    it("a template's lookup outside them fails the deployment before anything is read", async () => {
      const repo = new TestRepo({
        "a/cm.yaml": CONFIGMAP("a"),
        "b/Chart.yaml": "apiVersion: v2\nname: b\nversion: 0.1.0\n",
        "b/fleet.yaml": "defaultNamespace: team-b\n",
        "b/templates/cm.yaml":
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: {{ (lookup "v1" "Secret" "team-a" "creds").kind | default "none" | quote }}\n',
      });
      const asked: LookupJob[] = [];
      const caps = { kubeVersion: { version: "v1.36.3", major: "1", minor: "36" }, apiVersions: ["v1", "v1/Secret", "v1/ConfigMap"] };
      const facts = fakeFacts({
        objects: nothingExists,
        discovery: discovered(caps),
        lookup: (jobs) => (asked.push(...jobs), Object.fromEntries(jobs.map((j) => [j.id, { answers: [] }]))),
      });
      const config = stackOf(repo, { allowedTargetNamespaces: ["team-b"] });
      const live = {
        ...config,
        renderDir: undefined,
        clusters: config.clusters.map((c) => ({ ...c, kubeconfig: "apiVersion: v1\nkind: Config\nclusters: []\n" })),
      };
      const s = await run(live, facts);
      expect(failed(s)).to.deep.equal(["c1/b/b-b", "c2/b/b-b"]);
      // The one lookup rule (core/render/lookup-scope.ts) names the namespace and the setting that widens it.
      expect(s.failures[0].message).to.equal(
        'gitRepo b, bundle b-b, cluster c1: a template\'s lookup reads Secret creds in namespace team-a (lookup "v1" "Secret" "team-a" "creds"), ' +
          "outside this GitRepo's namespaces: it is not read. A lookup reads only the deployment's namespace team-b or gitRepos[b].allowedTargetNamespaces (team-b); " +
          "the stack setting gitRepos[b].allowedTargetNamespaces widens that (it also lets the GitRepo's objects into those namespaces)",
      );
      expect(asked).to.deep.equal([]);
      expect(keys(s)).to.deep.equal(["c1/a/a-a", "c2/a/a-a"]);
    });
  });

  describe("an object another GitRepo owns", () => {
    it("declared by a bundle of another GitRepo: the squatter fails, the owner (which deployed it before) keeps deploying, whatever the plan order", async () => {
      // GitRepo a sorts first: before, the first in plan order kept the object and the owner, z, was held back.
      const repo = new TestRepo({ "a/cm.yaml": CONFIGMAP("mine"), "z/cm.yaml": CONFIGMAP("shared") });
      const config = () => ({
        ...stackOf(repo),
        gitRepos: [stackOf(repo).gitRepos[0], gitRepoConfig({ name: "z", repo: repo.url(), paths: ["z"], targets: [{ clusterSelector: {} }] })],
      });
      const first = await run(config());
      const { previous, deployed } = deployedAfter(first);
      repo.commit({ "a/shared.yaml": CONFIGMAP("shared", { k: "squatted" }), "z/cm.yaml": CONFIGMAP("shared", { k: "updated" }) });
      const s = await desiredState(config(), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
      expect(s.failures.map((f) => `${f.cluster}/${f.gitRepo}/${f.bundle}: ${f.reason}`)).to.deep.equal(
        ["c1", "c2"].map(
          (c) =>
            `${c}/a/a-a: ConfigMap default/shared is also deployed by ` +
            "bundle z-z (GitRepo z) on this cluster, which deployed it before and keeps it; an object has one owner (Fleet's Helm refuses an object another release owns): " +
            "change its namespace or name in one of the bundles",
        ),
      );
      expect(keys(s)).to.deep.equal(["c1/a/a-a held", "c1/z/z-z", "c2/a/a-a held", "c2/z/z-z"]);
      expect(s.deployments.find((d) => d.key === "c1/z/z-z")!.objects[0].manifest.data).to.deep.equal({ k: "updated" });
    });

    it("without the state, the live object's ownership labels tell the owner", async () => {
      const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "shared", namespace: "default" } };
      const read = async (jobs: OwnersJob[]) =>
        Object.fromEntries(
          jobs.map((j) => [
            j.id,
            {
              objects: j.objects.map(() => ({
                labels: {
                  "app.kubernetes.io/managed-by": "pulumi-fleet",
                  "fleet.cattle.io/cluster": "c1",
                  "fleet.cattle.io/repo-name": "z",
                  "fleet.cattle.io/bundle-name": "z-z",
                },
              })),
            },
          ]),
        );
      const known: KnownClusters = new Map();
      await gatherOwners(
        [{ cluster: "c1", object: cm }],
        [{ name: "c1", labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false }],
        { objects: read } as Partial<Facts> as Facts,
        known,
      );
      const owners = knownOwners([{ cluster: "c1", object: cm }], {}, known);
      expect([...owners.values()]).to.deep.equal([{ gitRepo: "z", bundle: "z-z" }]);
    });

    it("a Namespace another GitRepo's deployments use cannot be declared by a bundle of a different GitRepo, whatever takeOwnership says", async () => {
      const repo = new TestRepo({
        "a/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-z\n",
        "a/fleet.yaml": "helm: {takeOwnership: true}\n",
        "z/cm.yaml": CONFIGMAP("z"),
        "z/fleet.yaml": "defaultNamespace: team-z\n",
      });
      const config = (a: Partial<GitRepoConfig>) => ({
        ...stackOf(repo),
        gitRepos: [stackOf(repo, {}, a).gitRepos[0], gitRepoConfig({ name: "z", repo: repo.url(), paths: ["z"], targets: [{ clusterSelector: {} }] })],
      });
      for (const a of [{ allowTakeOwnership: true }, { allowTakeOwnership: true, takeOwnership: true }]) {
        const s = await run(config(a));
        expect(s.failures.map((f) => f.message)).to.deep.equal(
          ["c1", "c2"].map(
            (c) =>
              `gitRepo a, bundle a-a, cluster ${c}: Namespace team-z is used on this cluster by GitRepo z, ` +
              "whose deployments are in it: a bundle of another GitRepo may not declare it (it would be this bundle's to change, and to delete with everything in it), " +
              "whatever takeOwnership says; remove the Namespace from this bundle (the cluster creates the namespaces its deployments use)",
          ),
        );
        expect(keys(s)).to.deep.equal(["c1/z/z-z", "c2/z/z-z"]);
        expect(s.clusters[0].namespaces.map((ns) => ns.name)).to.include("c1/team-z");
      }
    });

    it("namespaceLabels on a namespace another GitRepo deployed into first fail that bundle alone: the owner's labels stay, whatever the plan order", async () => {
      const repo = new TestRepo({
        "z/cm.yaml": CONFIGMAP("z"),
        "z/fleet.yaml": "defaultNamespace: team-z\nnamespaceLabels: {pod-security.kubernetes.io/enforce: restricted}\n",
      });
      const z = gitRepoConfig({ name: "z", repo: repo.url(), paths: ["z"], targets: [{ clusterSelector: {} }] });
      const config = { ...stackOf(repo), gitRepos: [stackOf(repo).gitRepos[0], z] };
      const first = await run(config);
      const { previous, deployed } = deployedAfter(first);
      // GitRepo a (sorted first, so first in plan order) now deploys into team-z and relabels it.
      repo.commit({
        "a/cm.yaml": CONFIGMAP("a"),
        "a/fleet.yaml": "defaultNamespace: team-z\nnamespaceLabels: {pod-security.kubernetes.io/enforce: privileged}\n",
      });
      const s = await run(config, { ...fakeFacts({ previous }), deployed });
      expect(failed(s)).to.deep.equal(["c1/a/a-a", "c2/a/a-a"]);
      expect(s.failures[0].message).to.equal(
        "gitRepo a, bundle a-a, cluster c1: namespaceLabels: namespace team-z is GitRepo z's on this cluster (its deployments were there first): " +
          "namespaceLabels of another GitRepo's bundle may not change it; deploy into a namespace of this GitRepo's own, or drop them",
      );
      expect(s.clusters[0].namespaces.find((ns) => ns.metadata.name === "team-z")!.metadata.labels).to.include({
        "pod-security.kubernetes.io/enforce": "restricted",
      });
      expect(keys(s)).to.include("c1/z/z-z");
    });
  });
});
