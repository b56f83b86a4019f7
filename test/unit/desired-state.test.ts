/**
 * The desired state (core/desired/state.ts) with fake facts: every decision the program makes before
 * registering, tested as a plain function. No Pulumi mocks: components/ only maps this value
 * (test/components checks that mapping).
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { liveFacts } from "../../core/desired/facts";
import { configFromStackFile, parseStackConfig, StackConfig, stackFileFor } from "../../core/config/stack";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { JournalEntry } from "../../core/desired/journal";
import { desiredState } from "../../core/desired/state";
import { sweepAndRecord } from "../../core/desired/sweep";
import { describeDesired } from "../../core/desired/describe";
import { DeployedBundle } from "../../core/desired/facts";
import { DesiredState } from "../../core/desired/types";
import { PreviousDeployment } from "../../core/desired/previous";
import { LookupJob, OwnersJob } from "../../core/model/renderer-protocol";
import { discovered, fakeFacts, nothingExists } from "../support/fake-facts";
import { localStack } from "../support/fleet-fixtures";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";

const RENDER = "/tmp/pulumi-fleet-render";
const cacheRoot = tempDir("pf-cache-");
const KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n";

function fleetOf(repo: string, paths: string[], over: Partial<StackConfig> = {}, repoOver: Parameters<typeof gitRepoConfig>[0] | object = {}): StackConfig {
  return {
    file: "stacks/Pulumi.test.yaml",
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    renderDir: RENDER,
    clusterGroups: [],
    clusters: ["c1", "c2"].map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false })),
    gitRepos: [gitRepoConfig({ name: "t", repo, paths, targets: [{ clusterSelector: {} }], ...repoOver })],
    ...over,
  };
}
const live = (c: StackConfig): StackConfig => ({ ...c, renderDir: undefined, clusters: c.clusters.map((x) => ({ ...x, kubeconfig: KUBECONFIG })) });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: Error) => e.message,
  );
/** The failed deployments' messages: a broken bundle fails alone (core/plan/failures.ts). */
const failedAlone = async (p: Promise<DesiredState>) => (await p).failures.map((f) => f.message);
const deployment = (s: DesiredState, key: string) => s.deployments.find((d) => d.key === key)!;

describe("desired state (core/desired/state.ts, fake facts)", function () {
  this.timeout(30_000);

  it("the example fleet: clusters with providers, namespaces and agents; GitRepos; deployments with records", async () => {
    const s = await desiredState(localStack(RENDER), fakeFacts(), { cacheRoot });
    expect(s.clusters.map((c) => [c.name, c.provider.renderYamlToDirectory, c.agent?.image])).to.deep.equal([
      ["dev-1", `${RENDER}/dev-1`, "rancher/fleet-agent:v0.13.1"],
      ["dev-2", `${RENDER}/dev-2`, "rancher/fleet-agent:v0.13.1"],
      ["prod-1", `${RENDER}/prod-1`, "rancher/fleet-agent:v0.13.1"],
    ]);
    expect(s.clusters[0].namespaces.map((ns) => [ns.name, ns.metadata.labels, ns.retainOnDelete])).to.deep.equal([
      ["dev-1/helm-app", { "fleet.cattle.io/cluster": "dev-1", "app.kubernetes.io/managed-by": "pulumi-fleet" }, true],
      ["dev-1/simple", { team: "platform", "fleet.cattle.io/cluster": "dev-1", "app.kubernetes.io/managed-by": "pulumi-fleet" }, true],
    ]);
    expect(s.gitRepos.map((r) => [r.name, r.bundles, r.clusters])).to.deep.equal([
      ["examples", ["examples-helm", "examples-kustomize", "examples-simple"], ["dev-1", "dev-2", "prod-1"]],
    ]);
    expect(Object.keys(s.records)).to.deep.equal(s.deployments.map((d) => d.key));
    const simple = deployment(s, "prod-1/examples/examples-simple");
    expect(simple.record).to.include({ bundle: "examples-simple", cluster: "prod-1", namespace: "simple", objectCount: 3, paused: false });
    expect(simple.clusterNamespaces).to.deep.equal(["simple"]);
    expect(Object.keys(simple.spec.objects)).to.deep.equal(simple.objects.map((o) => o.key));
    // In render mode nothing is read from a cluster and nothing is journalled.
    expect(s.journal.length).to.equal(s.deployments.reduce((n, d) => n + d.objects.length, 0));
  });

  describe("safety, before anything is registered", () => {
    const previous: PreviousDeployment = { gitRepos: { examples: { commit: "dir-x", clusters: ["dev-1", "dev-2", "prod-1"] } } };
    const matchingNothing = (allowEmpty: boolean): StackConfig => {
      const c = localStack(RENDER);
      return { ...c, gitRepos: c.gitRepos.map((r) => ({ ...r, allowEmpty, targets: [{ name: "typo", clusterGroup: "prdo" }] })) };
    };

    it("refuses to empty a GitRepo that deployed to clusters; allowEmpty: true lets it", async () => {
      const message = await failure(desiredState(matchingNothing(false), fakeFacts({ previous }), { cacheRoot }));
      expect(message).to.match(/gitRepo examples: targets: matched 3 cluster\(s\) in the last deployment \(dev-1, dev-2, prod-1\) and matches none now/);
      expect(message).to.contain("allowEmpty: true");
      expect((await desiredState(matchingNothing(true), fakeFacts({ previous }), { cacheRoot })).deployments).to.deep.equal([]);
    });

    it("a source that cannot be read fails its GitRepo alone (the others deploy); an invalid label fails its deployments alone, naming what", async () => {
      const config = localStack(RENDER);
      const broken = { ...config.gitRepos[0], name: "broken", repo: "file:///nonexistent/repo.git" };
      const both = await desiredState({ ...config, gitRepos: [...config.gitRepos, broken] }, fakeFacts(), { cacheRoot });
      expect(both.failures.map((f) => `${f.gitRepo}/${f.bundle}/${f.cluster}`)).to.deep.equal(["broken//"]);
      expect(both.failures[0].message).to.match(/^gitRepo broken: /);
      expect(both.deployments.length).to.be.greaterThan(0);
      expect(both.deployments.every((d) => d.gitRepo === "examples")).to.equal(true);
      const repo = new TestRepo({
        "app/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  labels:\n    owner: system:kube-controller-manager\n",
        "good/cm.yaml": CONFIGMAP("good"),
      });
      const s = await desiredState(fleetOf(repo.url(), ["app", "good"]), fakeFacts(), { cacheRoot });
      expect(s.failures.map((f) => f.message)[0]).to.equal(
        "gitRepo t, bundle t-app, cluster c1: metadata.labels: ConfigMap default/bad: invalid label value \"system:kube-controller-manager\" for key \"owner\": must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
      );
      expect(s.failures.map((f) => `${f.cluster}/${f.bundle} ${f.kept ? "kept" : "new"}`)).to.deep.equal(["c1/t-app new", "c2/t-app new"]);
      expect(s.deployments.map((d) => d.key)).to.deep.equal(["c1/t/t-good", "c2/t/t-good"]);
    });

    it("an environment split into shards is deployed by its shards' stacks only", async () => {
      const c = localStack(RENDER);
      const split = { ...c, file: "stacks/Pulumi.prod.yaml", shards: [{ name: "a", clusterSelector: {} }] } as unknown as StackConfig;
      expect(await failure(desiredState(split, fakeFacts(), { cacheRoot }))).to.match(
        /this environment is split into shards, each deployed by its own stack \(prod\.a\)/,
      );
    });

    it("dependsOn orders deployments (dependencies first, same cluster); a cycle names its members", async () => {
      const repo = new TestRepo({
        "base/cm.yaml": CONFIGMAP("base"),
        "app/cm.yaml": CONFIGMAP("app"),
        "app/fleet.yaml": "keepResources: true\ndependsOn:\n  - name: t-base\n",
      });
      const s = await desiredState(fleetOf(repo.url(), ["app", "base"]), fakeFacts(), { cacheRoot });
      expect(s.deployments.map((d) => [d.key, d.dependsOn])).to.deep.equal([
        ["c1/t/t-base", []],
        ["c1/t/t-app", ["c1/t/t-base"]],
        ["c2/t/t-base", []],
        ["c2/t/t-app", ["c2/t/t-base"]],
      ]);
      expect(deployment(s, "c1/t/t-app").objects[0].retain).to.equal("keepResources");
      expect(deployment(s, "c1/t/t-base").objects[0].retain).to.equal(undefined);
      repo.commit({ "base/fleet.yaml": "dependsOn:\n  - name: t-app\n" });
      const cycle = await failedAlone(desiredState(fleetOf(repo.url(), ["app", "base"]), fakeFacts(), { cacheRoot }));
      expect(cycle[0]).to.match(/gitRepo t, bundle t-app, cluster c1: dependsOn: dependsOn forms a cycle through c1\/t\/t-app -> c1\/t\/t-base/);
      expect(cycle[2]).to.equal("gitRepo t, bundle t-base, cluster c1: dependsOn: dependent bundle(s) are not ready: [t-app] (failed on this cluster)");
    });
  });

  it("paused: objects frozen and retained, one warning each; the GitRepo stays on the commit it last deployed", async () => {
    const repo = new TestRepo({ "app/cm.yaml": CONFIGMAP("first") });
    const first = repo.head();
    repo.commit({ "app/cm.yaml": CONFIGMAP("second") });
    const paused = fleetOf(repo.url(), ["app"], {}, { paused: true });
    const s = await desiredState(paused, fakeFacts({ previous: { gitRepos: { t: { commit: first, clusters: ["c1", "c2"] } } } }), { cacheRoot });
    const d = deployment(s, "c1/t/t-app");
    expect(d.commit).to.equal(first);
    expect(d.objects.map((o) => o.manifest.metadata.name)).to.deep.equal(["first"]);
    expect(d.objects[0]).to.include({ retain: "the bundle is paused" });
    expect(d.spec.paused).to.equal(true);
    expect(d.warnings).to.deep.equal(["bundle t-app is paused on cluster c1: its objects stay exactly as deployed (no update, no delete)"]);
  });

  it("correctDrift: a warning unless the operation refreshes first; helm.timeoutSeconds becomes the BundleDeployment's timeout", async () => {
    const repo = new TestRepo({ "app/cm.yaml": CONFIGMAP("a"), "app/fleet.yaml": "correctDrift:\n  enabled: true\nhelm:\n  timeoutSeconds: 90\n" });
    const plain = await desiredState(fleetOf(repo.url(), ["app"]), fakeFacts(), { cacheRoot });
    expect(deployment(plain, "c1/t/t-app").warnings)
      .to.have.length(1)
      .and.match(/correctDrift.enabled is honoured by `npm run up`/);
    expect(deployment(plain, "c1/t/t-app").spec).to.include({ timeoutSeconds: 90, correctDrift: true });
    expect(deployment(plain, "c1/t/t-app").record.correctDrift).to.equal(true);
    const refreshed = await desiredState(fleetOf(repo.url(), ["app"]), fakeFacts(), { cacheRoot, correctsDrift: true });
    expect(deployment(refreshed, "c1/t/t-app").warnings).to.deep.equal([]);
  });

  it("clusters not deployed last time are marked arrived; comparePatches are the fields drift ignores", async () => {
    const repo = new TestRepo({
      "app/cm.yaml": CONFIGMAP("a"),
      "app/fleet.yaml": "diff:\n  comparePatches:\n  - apiVersion: v1\n    kind: ConfigMap\n    name: a\n    namespace: default\n    jsonPointers: [/data]\n",
    });
    const first = await desiredState(fleetOf(repo.url(), ["app"]), fakeFacts(), { cacheRoot });
    const previous: PreviousDeployment = {
      gitRepos: { t: { commit: first.summary.gitRepos.t.commit, clusters: ["c1"] } },
      clusters: ["c1"],
      deploymentIds: { "c1/t/t-app": first.records["c1/t/t-app"].deploymentId },
    };
    const s = await desiredState(fleetOf(repo.url(), ["app"]), fakeFacts({ previous }), { cacheRoot });
    expect(s.clusters.map((c) => [c.name, c.arrived])).to.deep.equal([
      ["c1", false],
      ["c2", true],
    ]);
    expect(deployment(s, "c1/t/t-app").objects[0].ignoreDrift).to.deep.equal(["/data"]);
    expect(deployment(s, "c2/t/t-app").objects[0].ignoreDrift).to.deep.equal(["/data"]);
  });

  it("an unchanged deployment gets the objects the state holds, not a new render (Fleet renders again only for a new deploymentID)", async () => {
    const repo = new TestRepo({ "app/cm.yaml": CONFIGMAP("a"), "other/cm.yaml": CONFIGMAP("b") });
    const first = await desiredState(fleetOf(repo.url(), ["app", "other"]), fakeFacts(), { cacheRoot });
    const previous: PreviousDeployment = {
      gitRepos: { t: { commit: first.summary.gitRepos.t.commit, clusters: ["c1", "c2"] } },
      clusters: ["c1", "c2"],
      deploymentIds: Object.fromEntries(Object.entries(first.records).map(([k, r]) => [k, r.deploymentId])),
      paused: Object.fromEntries(Object.keys(first.records).map((k) => [k, false])),
    };
    // What the state holds: as registered, with a value a render would not give again (a random password, say).
    const asRegistered = (key: string, value: string, appliedDeploymentId = first.records[key].deploymentId): DeployedBundle => ({
      appliedDeploymentId,
      objects: deployment(first, key).objects.map((o) => ({ manifest: { ...o.manifest, data: { k: value } }, ...(o.retain ? { retain: o.retain } : {}) })),
    });
    const deployed = new Map([
      ["c1/t/t-app", asRegistered("c1/t/t-app", "from-the-state")],
      ["c2/t/t-app", asRegistered("c2/t/t-app", "from-the-state", "s-another:0")],
      ["c1/t/t-other", asRegistered("c1/t/t-other", "from-the-state")],
    ]);
    repo.commit({ "other/cm.yaml": CONFIGMAP("b", { k: "changed" }) });
    const facts = { ...fakeFacts({ previous }), deployed };
    const s = await desiredState(fleetOf(repo.url(), ["app", "other"]), facts, { cacheRoot });
    expect(deployment(s, "c1/t/t-app").objects.map((o) => o.manifest.data)).to.deep.equal([{ k: "from-the-state" }]);
    expect(deployment(s, "c1/t/t-app").objects[0].key).to.equal(deployment(first, "c1/t/t-app").objects[0].key);
    // Objects the state holds at another deploymentID (an apply that failed, an update since the state was read): rendered again.
    expect(deployment(s, "c2/t/t-app").objects.map((o) => o.manifest.data)).to.deep.equal([{ k: "v" }]);
    // A changed deployment (new content) renders afresh; so does one the state has nothing of.
    expect(deployment(s, "c1/t/t-other").objects.map((o) => o.manifest.data)).to.deep.equal([{ k: "changed" }]);
    expect(s.warnings).to.deep.equal([]);
    // Pausing it (the deploymentID stays) renders it afresh, frozen; without the state (a plain pulumi up) everything renders, and says so.
    const paused = await desiredState(fleetOf(repo.url(), ["app"], {}, { paused: true }), { ...fakeFacts({ previous }), deployed }, { cacheRoot });
    expect(deployment(paused, "c1/t/t-app").objects[0].manifest.data).to.deep.equal({ k: "v" });
    const plain = await desiredState(fleetOf(repo.url(), ["app"]), fakeFacts({ previous }), { cacheRoot });
    expect(deployment(plain, "c1/t/t-app").objects[0].manifest.data).to.deep.equal({ k: "v" });
    expect(plain.warnings)
      .to.have.length(1)
      .and.match(/2 unchanged bundle deployment\(s\) were rendered again: this program was not given the state/);
  });

  describe("against clusters (fake facts)", () => {
    it("serviceAccount: one impersonating provider per (cluster, user); fleet-default where it exists; a cluster that cannot be read is a warning", async () => {
      const repo = new TestRepo({ "named/cm.yaml": CONFIGMAP("named"), "named/fleet.yaml": "serviceAccount: deployer\n", "plain/cm.yaml": CONFIGMAP("plain") });
      const facts = fakeFacts({
        discovery: discovered(),
        // fleet-default exists on c1 and cannot be looked up on c2; nothing else exists yet.
        objects: (jobs) =>
          Object.fromEntries(
            jobs.map((j) => [
              j.id,
              j.objects[0].kind !== "ServiceAccount"
                ? { objects: j.objects.map(() => null) }
                : j.id === "c1"
                  ? { objects: [{}] }
                  : { error: "connection refused" },
            ]),
          ),
        impersonate: (jobs) => Object.fromEntries(jobs.map((j) => [j.id, { kubeconfig: `as ${j.as}` }])),
      });
      const s = await desiredState(live(fleetOf(repo.url(), ["named", "plain"])), facts, { cacheRoot });
      expect(
        s.clusters.map((c) => c.accountProviders.map((a) => [a.user, a.provider.name, a.provider.kubeconfig, a.provider.clusterIdentifier])),
      ).to.deep.equal([
        [
          [
            "system:serviceaccount:cattle-fleet-system:deployer",
            "c1/as/system:serviceaccount:cattle-fleet-system:deployer",
            "as system:serviceaccount:cattle-fleet-system:deployer",
            "c1",
          ],
          [
            "system:serviceaccount:cattle-fleet-system:fleet-default",
            "c1/as/system:serviceaccount:cattle-fleet-system:fleet-default",
            "as system:serviceaccount:cattle-fleet-system:fleet-default",
            "c1",
          ],
        ],
        [
          [
            "system:serviceaccount:cattle-fleet-system:deployer",
            "c2/as/system:serviceaccount:cattle-fleet-system:deployer",
            "as system:serviceaccount:cattle-fleet-system:deployer",
            "c2",
          ],
        ],
      ]);
      expect(deployment(s, "c1/t/t-plain").account).to.equal("system:serviceaccount:cattle-fleet-system:fleet-default");
      expect(deployment(s, "c2/t/t-plain").account).to.equal(undefined);
      expect(deployment(s, "c2/t/t-plain").warnings[0]).to.match(
        /^bundle t-plain on cluster c2: serviceAccount: could not tell whether cattle-fleet-system\/fleet-default exists \(connection refused\)/,
      );
      const text = describeDesired(s).join("\n");
      expect(text)
        .to.contain("cluster c1 (kubeconfig from the stack)\n")
        .and.contain("  applies as system:serviceaccount:cattle-fleet-system:deployer\n")
        .and.contain("  bundle t-plain (GitRepo t @ ")
        .and.not.contain(KUBECONFIG);
      expect(s.clusters[0].provider).to.deep.equal({
        name: "c1",
        clusterIdentifier: "c1",
        kubeClientSettings: { qps: 500, burst: 1000 },
        kubeconfig: KUBECONFIG,
      });
    });

    it("takeOwnership: an object that exists with another owner fails its deployment; unchanged deployments and left-out clusters are not read", async () => {
      const repo = new TestRepo({ "app/cm.yaml": CONFIGMAP("a"), "app/fleet.yaml": "serviceAccount: deployer\n" });
      const impersonate = (jobs: { id: string }[]) => Object.fromEntries(jobs.map((j) => [j.id, { kubeconfig: "k" }]));
      const helmOwned = (jobs: OwnersJob[]) =>
        Object.fromEntries(
          jobs.map((j) => [
            j.id,
            { objects: j.objects.map(() => ({ annotations: { "meta.helm.sh/release-name": "r", "meta.helm.sh/release-namespace": "n" } })) },
          ]),
        );
      expect(
        (
          await failedAlone(
            desiredState(live(fleetOf(repo.url(), ["app"])), fakeFacts({ objects: helmOwned, impersonate, discovery: discovered() }), { cacheRoot }),
          )
        )[0],
      ).to.match(
        /gitRepo t, bundle t-app, cluster c1: helm.takeOwnership: objects this bundle would create already exist on the cluster and are not its own: ConfigMap default\/a \(it belongs to Helm release n\/r\)/,
      );
      // The stack's own takeOwnership on the GitRepo (moving over from Fleet): adopted; its owner is read only to refuse what another GitRepo owns.
      const adopting = fakeFacts({ objects: helmOwned, impersonate, discovery: discovered() });
      const adopted = await desiredState(live(fleetOf(repo.url(), ["app"], {}, { takeOwnership: true })), adopting, { cacheRoot });
      expect(adopted.fleet.failures.list()).to.deep.equal([]);
      expect(adopting.calls.objects.flat().flatMap((j) => j.objects.map((o) => o.kind))).to.include("ConfigMap");
      const first = await desiredState(live(fleetOf(repo.url(), ["app"])), fakeFacts({ objects: nothingExists, impersonate, discovery: discovered() }), {
        cacheRoot,
      });
      const previous: PreviousDeployment = {
        gitRepos: { t: { commit: first.summary.gitRepos.t.commit, clusters: ["c1", "c2"] } },
        clusters: ["c1", "c2"],
        deploymentIds: { "c1/t/t-app": first.records["c1/t/t-app"].deploymentId },
      };
      const facts = fakeFacts({ objects: nothingExists, impersonate, previous, discovery: discovered() });
      await desiredState(live(fleetOf(repo.url(), ["app"])), facts, { cacheRoot, leftOut: new Set(["c3"]) });
      expect(facts.calls.objects.map((jobs) => jobs.map((j) => j.id))).to.deep.equal([["c2\u0000t"]]);
      expect(facts.calls.discovery.map((jobs) => jobs.map((j) => j.id))).to.deep.equal([["c1", "c2"]]);
    });

    it("crash journal: earlier entries are swept first (what nothing owns and is not desired), then this update records its objects", async () => {
      const repo = new TestRepo({ "app/cm.yaml": CONFIGMAP("a") });
      const orphan = { cluster: "c1", gitRepo: "t", bundle: "t-gone", apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "gone" };
      const desiredToo = { ...orphan, bundle: "t-app", name: "a" };
      const added: JournalEntry[] = [];
      const removed: string[][] = [];
      let recorded = "";
      const journal = {
        list: async () => [{ key: "k1", entry: { writer: "w", objects: [orphan, desiredToo] } }],
        add: async (e: JournalEntry) => {
          added.push(e);
          return `k${added.length + 1}`;
        },
        remove: async (keys: string[]) => {
          removed.push(keys);
        },
        stateIdentities: async () => new Set<string>(),
        writer: "me",
        onRecorded: (k: string) => {
          recorded = k;
        },
        warn: () => undefined,
      };
      const deleted: OwnersJob[] = [];
      const facts = fakeFacts({
        journal,
        impersonate: () => ({}),
        discovery: discovered(),
        objects: (jobs) => {
          if (jobs.some((j) => j.delete)) deleted.push(...jobs);
          return Object.fromEntries(jobs.map((j) => [j.id, { objects: j.objects.map(() => (j.delete ? { deleted: true } : null)) }]));
        },
      });
      const s = await desiredState(live(fleetOf(repo.url(), ["app"])), facts, { cacheRoot });
      await sweepAndRecord(facts, s);
      expect(deleted.map((j) => [j.id, j.objects.map((o) => o.name)])).to.deep.equal([["c1", ["gone"]]]);
      expect(removed).to.deep.equal([["k1"]]);
      expect(added.map((e) => e.objects.map((o) => `${o.cluster}/${o.name}`))).to.deep.equal([["c1/a", "c2/a"]]);
      expect(added[0].objects).to.deep.equal(s.journal);
      expect(recorded).to.equal("k2");
    });
  });

  describe("what charts see of their cluster (.Capabilities)", () => {
    const CHART = {
      "app/Chart.yaml": "apiVersion: v2\nname: caps\nversion: 0.1.0\n",
      "app/templates/cm.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caps\ndata:\n" +
        "  version: {{ .Capabilities.KubeVersion.Version | quote }}\n" +
        '  recent: {{ semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version | quote }}\n' +
        '  widgets: {{ .Capabilities.APIVersions.Has "example.com/v1/Widget" | quote }}\n' +
        '  oldPolicy: {{ .Capabilities.APIVersions.Has "policy/v1beta1" | quote }}\n',
    };
    const dataOf = (s: DesiredState, cluster: string) => deployment(s, `${cluster}/t/t-app`).objects[0].manifest.data;

    it("a live cluster's own version and API versions, from discovery, whole (Helm's defaults replaced, as on Fleet's agent)", async () => {
      const repo = new TestRepo(CHART);
      const caps = (minor: string, extra: string[]) => ({
        kubeVersion: { version: `v1.${minor}.3`, major: "1", minor },
        apiVersions: ["v1", "apps/v1", ...extra],
      });
      const facts = fakeFacts({
        objects: nothingExists,
        impersonate: () => ({}),
        discovery: (jobs) =>
          Object.fromEntries(
            jobs.map((j) => [j.id, { capabilities: j.id === "c1" ? caps("36", ["example.com/v1", "example.com/v1/Widget"]) : caps("29", []) }]),
          ),
      });
      const s = await desiredState(live(fleetOf(repo.url(), ["app"])), facts, { cacheRoot });
      expect(dataOf(s, "c1")).to.deep.equal({ version: "v1.36.3", recent: "true", widgets: "true", oldPolicy: "false" });
      expect(dataOf(s, "c2")).to.deep.equal({ version: "v1.29.3", recent: "false", widgets: "false", oldPolicy: "false" });
      // Fleet's deploymentID does not hold the capabilities: a cluster upgrade alone is no new deployment.
      expect(deployment(s, "c1/t/t-app").record.deploymentId).to.equal(deployment(s, "c2/t/t-app").record.deploymentId);
      expect(facts.calls.discovery).to.have.length(1);
    });

    it("a cluster whose discovery fails stops the update naming it; render mode uses kubeVersion and apiVersions (Helm's --kube-version, --api-versions)", async () => {
      const repo = new TestRepo(CHART);
      const failing = fakeFacts({
        objects: nothingExists,
        discovery: (jobs) => Object.fromEntries(jobs.map((j) => [j.id, { error: "dial tcp 127.0.0.1:1: connection refused" }])),
      });
      expect(await failure(desiredState(live(fleetOf(repo.url(), ["app"])), failing, { cacheRoot }))).to.equal(
        "stacks/Pulumi.test.yaml cluster c1: cannot read the cluster's version and served API versions, which its charts see as .Capabilities (discovery): dial tcp 127.0.0.1:1: connection refused",
      );
      const config = fleetOf(repo.url(), ["app"]);
      config.clusters[0] = { ...config.clusters[0], kubeVersion: "v1.31.2", apiVersions: ["example.com/v1/Widget"] };
      const s = await desiredState(config, fakeFacts(), { cacheRoot });
      expect(dataOf(s, "c1")).to.deep.equal({ version: "1.31.2", recent: "true", widgets: "true", oldPolicy: "true" });
      // The default, as `fleet test`: v1.25.0 and Helm's built-in API versions.
      expect(dataOf(s, "c2")).to.deep.equal({ version: "1.25.0", recent: "false", widgets: "false", oldPolicy: "true" });
    });
  });

  describe("lookup, as on Fleet's agent", () => {
    const CHART = {
      "app/Chart.yaml": "apiVersion: v2\nname: pw\nversion: 0.1.0\n",
      "app/templates/secret.yaml":
        '{{- $existing := lookup "v1" "Secret" .Release.Namespace "db" }}\n' +
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n" +
        '  password: {{ if $existing }}{{ index $existing.data "password" | b64dec | quote }}{{ else }}{{ randAlphaNum 16 | quote }}{{ end }}\n',
      // Fails without an answer (a nil map): rendered again once the lookup is answered.
      "app/templates/cm.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: copy\ndata:\n" +
        '  region: {{ (lookup "v1" "ConfigMap" "kube-public" "cluster-info").data.region | quote }}\n',
    };
    const caps = { kubeVersion: { version: "v1.36.3", major: "1", minor: "36" }, apiVersions: ["v1", "v1/Secret", "v1/ConfigMap"] };
    const secretOf = (s: DesiredState, cluster: string) => deployment(s, `${cluster}/t/t-app`).objects.find((o) => o.manifest.kind === "Secret")!.manifest;

    it("reads what the templates look up on their own cluster, with the deploying identity, and renders with the answers", async () => {
      const repo = new TestRepo({ ...CHART, "app/fleet.yaml": "serviceAccount: deployer\n" });
      const asked: LookupJob[] = [];
      const facts = fakeFacts({
        objects: nothingExists,
        discovery: discovered(caps),
        impersonate: (jobs) => Object.fromEntries(jobs.map((j) => [j.id, { kubeconfig: `kubeconfig of ${j.id} as ${j.as}` }])),
        lookup: (jobs) => {
          asked.push(...jobs);
          return Object.fromEntries(
            jobs.map((j) => [
              j.id,
              {
                answers: j.keys.map((key) => ({
                  key,
                  ...(key.kind === "ConfigMap"
                    ? { object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: key.name }, data: { region: `region-of-${j.id.split(" ")[0]}` } } }
                    : {}),
                  ...(key.kind === "Secret" && j.id.startsWith("c1")
                    ? { object: { apiVersion: "v1", kind: "Secret", metadata: { name: key.name }, data: { password: Buffer.from("kept").toString("base64") } } }
                    : {}),
                })),
              },
            ]),
          );
        },
      });
      const s = await desiredState(live(fleetOf(repo.url(), ["app"])), facts, { cacheRoot });
      expect(secretOf(s, "c1").stringData).to.deep.equal({ password: "kept" });
      expect((secretOf(s, "c2").stringData as { password: string }).password).to.match(/^[A-Za-z0-9]{16}$/);
      expect(deployment(s, "c2/t/t-app").objects.find((o) => o.manifest.kind === "ConfigMap")!.manifest.data).to.deep.equal({ region: "region-of-c2" });
      // One read per cluster, identity and GitRepo, as the deploying service account, of exactly what was asked.
      expect(asked.map((j) => [j.id, j.kubeconfig, j.keys.map((k) => `${k.kind} ${k.namespace}/${k.name}`)])).to.deep.equal([
        [
          "c1 system:serviceaccount:cattle-fleet-system:deployer\u0000t",
          "kubeconfig of c1 system:serviceaccount:cattle-fleet-system:deployer as system:serviceaccount:cattle-fleet-system:deployer",
          ["ConfigMap kube-public/cluster-info", "Secret default/db"],
        ],
        [
          "c2 system:serviceaccount:cattle-fleet-system:deployer\u0000t",
          "kubeconfig of c2 system:serviceaccount:cattle-fleet-system:deployer as system:serviceaccount:cattle-fleet-system:deployer",
          ["ConfigMap kube-public/cluster-info", "Secret default/db"],
        ],
      ]);
    });

    it("in render mode lookup finds nothing, as helm template; a lookup the identity may not make fails naming it", async () => {
      const repo = new TestRepo({ "app/Chart.yaml": CHART["app/Chart.yaml"], "app/templates/secret.yaml": CHART["app/templates/secret.yaml"] });
      const rendered = await desiredState(fleetOf(repo.url(), ["app"]), fakeFacts(), { cacheRoot });
      expect((secretOf(rendered, "c1").stringData as { password: string }).password).to.match(/^[A-Za-z0-9]{16}$/);
      const forbidden = fakeFacts({
        objects: nothingExists,
        discovery: discovered(caps),
        impersonate: () => ({}),
        lookup: (jobs) =>
          Object.fromEntries(
            jobs.map((j) => [j.id, { answers: j.keys.map((key) => ({ key, error: 'secrets "db" is forbidden: User cannot get resource' })) }]),
          ),
      });
      expect((await failedAlone(desiredState(live(fleetOf(repo.url(), ["app"])), forbidden, { cacheRoot })))[0]).to.match(
        /gitRepo t, bundle t-app, cluster c1.*secrets \\?"db\\?" is forbidden/,
      );
      // Content cannot make the runner read a cluster without bound.
      const many = new TestRepo({
        "app/Chart.yaml": CHART["app/Chart.yaml"],
        "app/templates/cm.yaml": '{{- range $i := until 150 }}{{- $x := lookup "v1" "ConfigMap" "ns" (printf "cm-%d" $i) }}{{- end }}\n',
      });
      const reads = fakeFacts({
        objects: nothingExists,
        discovery: discovered(caps),
        impersonate: () => ({}),
        lookup: () => {
          throw new Error("must not read");
        },
      });
      expect((await failedAlone(desiredState(live(fleetOf(many.url(), ["app"])), reads, { cacheRoot })))[0]).to.equal(
        "gitRepo t, bundle t-app, cluster c1: its templates make 150 different lookups, over the limit of 100 per bundle deployment",
      );
    });

    it("stays in the GitRepo's namespaces (issue 41): a lookup elsewhere fails its deployment, unread, naming the stack setting", async () => {
      const repo = new TestRepo({
        "app/Chart.yaml": CHART["app/Chart.yaml"],
        "app/templates/cm.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stolen\ndata:\n" +
          '  token: {{ (lookup "v1" "Secret" "kube-system" "admin").data | toJson | quote }}\n',
      });
      const asked: LookupJob[] = [];
      const reads = fakeFacts({
        objects: nothingExists,
        discovery: discovered(caps),
        impersonate: () => ({}),
        lookup: (jobs) => {
          asked.push(...jobs);
          return Object.fromEntries(jobs.map((j) => [j.id, { answers: j.keys.map((key) => ({ key })) }]));
        },
      });
      const failed = await failedAlone(desiredState(live(fleetOf(repo.url(), ["app"])), reads, { cacheRoot }));
      expect(failed[0]).to.match(
        /^gitRepo t, bundle t-app, cluster c1: a template's lookup reads Secret admin in namespace kube-system .* not read\. .*gitRepos\[t\]\.allowedTargetNamespaces/,
      );
      expect(asked).to.deep.equal([]);
      // allowedTargetNamespaces widens it: the lookup is read.
      const allowed = await desiredState(live(fleetOf(repo.url(), ["app"], {}, { allowedTargetNamespaces: ["default", "kube-*"] })), reads, { cacheRoot });
      expect(allowed.failures).to.deep.equal([]);
      expect(asked.flatMap((j) => j.keys.map((k) => `${k.kind} ${k.namespace}/${k.name}`))).to.deep.equal([
        "Secret kube-system/admin",
        "Secret kube-system/admin",
      ]);
    });

    it("what it reads from a Secret is a secret: the objects are registered as one, and no failure or warning says it", async () => {
      const password = "s3cr3t-from-the-cluster";
      const answering = fakeFacts({
        objects: nothingExists,
        discovery: discovered(caps),
        impersonate: () => ({}),
        lookup: (jobs) =>
          Object.fromEntries(
            jobs.map((j) => [
              j.id,
              {
                answers: j.keys.map((key) => ({
                  key,
                  object: {
                    apiVersion: "v1",
                    kind: "Secret",
                    metadata: { name: key.name, namespace: key.namespace },
                    data: { password: Buffer.from(password).toString("base64") },
                  },
                })),
              },
            ]),
          ),
      });
      const copying = new TestRepo({
        "app/Chart.yaml": CHART["app/Chart.yaml"],
        "app/templates/cm.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: copy\ndata:\n" +
          '  password: {{ (lookup "v1" "Secret" .Release.Namespace "db").data.password | b64dec | quote }}\n',
      });
      const s = await desiredState(live(fleetOf(copying.url(), ["app"])), answering, { cacheRoot });
      expect(deployment(s, "c1/t/t-app").secret).to.equal(true);
      expect(deployment(s, "c1/t/t-app").objects[0].manifest.data).to.deep.equal({ password });
      // A ConfigMap lookup alone makes nothing secret.
      const plain = await desiredState(
        live(fleetOf(new TestRepo({ "app/Chart.yaml": CHART["app/Chart.yaml"], "app/templates/cm.yaml": CHART["app/templates/cm.yaml"] }).url(), ["app"])),
        fakeFacts({
          objects: nothingExists,
          discovery: discovered(caps),
          impersonate: () => ({}),
          lookup: (jobs) =>
            Object.fromEntries(
              jobs.map((j) => [
                j.id,
                {
                  answers: j.keys.map((key) => ({ key, object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: key.name }, data: { region: "r" } } })),
                },
              ]),
            ),
        }),
        { cacheRoot },
      );
      expect(deployment(plain, "c1/t/t-app").secret).to.equal(undefined);
      // A template's fail quoting the value, either encoding: the failure says [secret].
      const failing = new TestRepo({
        "app/Chart.yaml": CHART["app/Chart.yaml"],
        "app/templates/cm.yaml":
          '{{- $s := lookup "v1" "Secret" .Release.Namespace "db" }}\n' +
          '{{- if $s }}{{ fail (printf "password is %s (%s)" ($s.data.password | b64dec) $s.data.password) }}{{ end }}\n',
      });
      const f = await desiredState(live(fleetOf(failing.url(), ["app"])), answering, { cacheRoot });
      expect(f.failures.map((x) => x.message).join("\n"))
        .to.not.contain(password)
        .and.not.contain(Buffer.from(password).toString("base64"));
      expect(f.failures[0].message).to.match(/password is \[secret\] \(\[secret\]\)/);
      expect(f.failures[0].reason).to.match(/password is \[secret\] \(\[secret\]\)/);
      expect(f.warnings.join("\n")).to.not.contain(password);
    });
  });

  it(".Release.IsInstall, IsUpgrade and Revision as Helm on Fleet's agent gives them: an install first, then an upgrade per new deploymentID", async () => {
    const repo = new TestRepo({
      "app/Chart.yaml": "apiVersion: v2\nname: rel\nversion: 0.1.0\n",
      "app/templates/cm.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rel\ndata:\n" +
        "  install: {{ .Release.IsInstall | quote }}\n  upgrade: {{ .Release.IsUpgrade | quote }}\n  revision: {{ .Release.Revision | quote }}\n",
    });
    const facts = (previous?: PreviousDeployment) => fakeFacts({ previous, objects: nothingExists, impersonate: () => ({}), discovery: discovered() });
    const dataOf = (s: DesiredState, key: string) => deployment(s, key).objects[0].manifest.data;
    const first = await desiredState(live(fleetOf(repo.url(), ["app"])), facts(), { cacheRoot });
    expect(dataOf(first, "c1/t/t-app")).to.deep.equal({ install: "true", upgrade: "false", revision: "1" });
    expect(first.records["c1/t/t-app"].revision).to.equal(1);
    // c1 was deployed at revision 3 with another deploymentID; c2 never.
    const previous: PreviousDeployment = {
      gitRepos: { t: { commit: "x", clusters: ["c1"] } },
      deploymentIds: { "c1/t/t-app": "s-old:0" },
      revisions: { "c1/t/t-app": 3 },
    };
    const next = await desiredState(live(fleetOf(repo.url(), ["app"])), facts(previous), { cacheRoot });
    expect(dataOf(next, "c1/t/t-app")).to.deep.equal({ install: "false", upgrade: "true", revision: "4" });
    expect(next.records["c1/t/t-app"].revision).to.equal(4);
    expect(dataOf(next, "c2/t/t-app")).to.deep.equal({ install: "true", upgrade: "false", revision: "1" });
  });

  it("a record's deployedAt is the update that first deployed its deploymentId: kept while it stays, new when it changes, absent in older records", async () => {
    const repo = new TestRepo({ "app/cm.yaml": CONFIGMAP("app") });
    const facts = (previous?: PreviousDeployment) => fakeFacts({ previous, objects: nothingExists, impersonate: () => ({}), discovery: discovered() });
    const t1 = new Date("2030-01-02T03:04:05.000Z");
    const t2 = new Date("2030-02-03T04:05:06.000Z");
    const first = await desiredState(live(fleetOf(repo.url(), ["app"])), facts(), { cacheRoot, now: t1 });
    expect(Object.values(first.records).map((r) => r.deployedAt)).to.deep.equal([t1.toISOString(), t1.toISOString()]);
    const ids = Object.fromEntries(Object.entries(first.records).map(([k, r]) => [k, r.deploymentId]));
    // c1 keeps its deploymentId; c2's record changes deploymentId; a record older than the field has none.
    const { deployedAt: _older, ...c2Older } = first.records["c2/t/t-app"];
    const previous: PreviousDeployment = {
      gitRepos: { t: { commit: "x", clusters: ["c1", "c2"] } },
      deploymentIds: { ...ids, "c2/t/t-app": "s-old:0" },
      records: { "c1/t/t-app": first.records["c1/t/t-app"], "c2/t/t-app": { ...c2Older, deploymentId: "s-old:0" } },
    };
    const next = await desiredState(live(fleetOf(repo.url(), ["app"])), facts(previous), { cacheRoot, now: t2 });
    expect(next.records["c1/t/t-app"].deployedAt).to.equal(t1.toISOString());
    expect(next.records["c2/t/t-app"].deployedAt).to.equal(t2.toISOString());
    const older = await desiredState(live(fleetOf(repo.url(), ["app"])), facts({ ...previous, deploymentIds: ids, records: { "c2/t/t-app": c2Older } }), {
      cacheRoot,
      now: t2,
    });
    expect(older.records["c2/t/t-app"]).to.not.have.property("deployedAt");
  });

  describe("the ambient kubeconfig, as kubectl reads it", () => {
    const kc = (ctx: string, server: string) =>
      `apiVersion: v1\nkind: Config\nclusters:\n- name: ${ctx}-cluster\n  cluster: {server: "${server}"}\n` +
      `users:\n- name: ${ctx}-user\n  user: {token: t-${ctx}}\ncontexts:\n- name: ${ctx}\n  context: {cluster: ${ctx}-cluster, user: ${ctx}-user}\n`;
    let saved: string | undefined;
    let dir: string;
    beforeEach(() => {
      saved = process.env.KUBECONFIG;
      dir = tempDir("pf-kubeconfig-");
      fs.writeFileSync(path.join(dir, "a"), kc("first", "https://10.0.0.1:6443"));
      fs.writeFileSync(path.join(dir, "b"), kc("second", "https://10.0.0.2:6443"));
      process.env.KUBECONFIG = `${dir}/a${path.delimiter}${dir}/b`;
    });
    afterEach(() => {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    });
    const ambientFleet = (context: string) => {
      const c = live(localStack(RENDER));
      return { ...c, clusters: c.clusters.map((x) => ({ ...x, kubeconfig: undefined, context })) };
    };
    const real = liveFacts(async () => undefined);

    it("a KUBECONFIG of several files: the context is found in any of them and the provider gets that one context, inlined", async () => {
      const facts = fakeFacts({ objects: nothingExists, impersonate: () => ({}), discovery: discovered(), ambientKubeconfig: real.ambientKubeconfig });
      const s = await desiredState(ambientFleet("second"), facts, { cacheRoot });
      const provider = s.clusters[0].provider;
      expect(provider.context).to.equal(undefined);
      const doc = YAML.parse(provider.kubeconfig!);
      expect([doc["current-context"], doc.contexts.map((c: { name: string }) => c.name), doc.clusters[0].cluster.server]).to.deep.equal([
        "second",
        ["second"],
        "https://10.0.0.2:6443",
      ]);
    });

    it("a context in none of the files stops the update naming the stack file, cluster and context; one file with a context is left to the provider", async () => {
      const facts = fakeFacts({ objects: nothingExists, impersonate: () => ({}), discovery: discovered(), ambientKubeconfig: real.ambientKubeconfig });
      expect(await failure(desiredState(ambientFleet("third"), facts, { cacheRoot }))).to.match(
        /^stacks\/Pulumi\.local\.yaml cluster dev-1: context: context "third" cannot be used from KUBECONFIG \(.*\/a:.*\/b\): loading the kubeconfig: context "third" not found/,
      );
      process.env.KUBECONFIG = `${dir}/b`;
      const s = await desiredState(ambientFleet("second"), facts, { cacheRoot });
      expect([s.clusters[0].provider.kubeconfig, s.clusters[0].provider.context]).to.deep.equal([undefined, "second"]);
    });
  });

  describe("agents", () => {
    const withAgent = (global: Record<string, unknown>, perCluster: Record<string, Record<string, unknown>> = {}): StackConfig => {
      const c = localStack(RENDER);
      return {
        ...c,
        agent: { apiServerURL: "https://fleet.example.com", ...global },
        clusters: c.clusters.map((cl) => (perCluster[cl.name] ? { ...cl, agent: perCluster[cl.name] } : cl)),
      };
    };
    const agents = async (c: StackConfig) => (await desiredState(c, fakeFacts(), { cacheRoot })).clusters.map((x) => x.agent!);

    it("one agent per cluster: fixed names, Recreate, one replica, the config hash its only varying pod template annotation", async () => {
      const [a] = await agents(localStack(RENDER));
      const spec = a.deployment.spec as {
        replicas: number;
        strategy: object;
        revisionHistoryLimit: number;
        template: { metadata: { annotations: Record<string, string> } };
      };
      expect(spec).to.include({ replicas: 1, revisionHistoryLimit: 2 });
      expect(spec.strategy).to.deep.equal({ type: "Recreate" });
      expect(Object.keys(spec.template.metadata.annotations)).to.deep.equal(["pulumi-fleet.io/agent-config-hash"]);
      expect(a.deployment.metadata).to.include({ name: "fleet-agent", namespace: "cattle-fleet-system" });
    });

    it("the same effective config reached another way is byte-identical; one effective change moves only the Deployment", async () => {
      const a = await agents(withAgent({ env: { B: "2", A: "1" }, resources: { requests: { cpu: "0.5" } } }));
      const b = await agents(
        withAgent(
          { env: { Z: "global-only" } },
          Object.fromEntries(["dev-1", "dev-2", "prod-1"].map((n) => [n, { env: { A: "1", B: "2" }, resources: { requests: { cpu: "500m" } } }])),
        ),
      );
      expect(JSON.stringify(b)).to.equal(JSON.stringify(a));
      const c = await agents(withAgent({ env: { B: "3", A: "1" }, resources: { requests: { cpu: "0.5" } } }));
      const changed = c.flatMap((x, i) => Object.keys(x).filter((k) => JSON.stringify(x[k as keyof typeof x]) !== JSON.stringify(a[i][k as keyof typeof x])));
      expect([...new Set(changed)]).to.deep.equal(["configHash", "deployment"]);
    });

    it("agent.enabled: false deploys no agent and needs neither apiServerURL nor fleetVersion; per cluster wins over global", async () => {
      const c = localStack(RENDER);
      const off = { ...c, fleetVersion: undefined, agent: { enabled: false } };
      const s = await desiredState(off, fakeFacts(), { cacheRoot });
      expect(s.clusters.map((x) => x.agent)).to.deep.equal([undefined, undefined, undefined]);
      expect(s.summary.agents).to.deep.equal({});
      expect(Object.keys(s.summary.clusters)).to.deep.equal(["dev-1", "dev-2", "prod-1"]);
      expect(describeDesired(s)).to.include("  no agent (agent.enabled: false)");
      const mixed = withAgent({}, { "dev-2": { enabled: false } });
      expect((await desiredState(mixed, fakeFacts(), { cacheRoot })).clusters.map((x) => [x.name, !!x.agent])).to.deep.equal([
        ["dev-1", true],
        ["dev-2", false],
        ["prod-1", true],
      ]);
      const onlyOne = { ...withAgent({ enabled: false, apiServerURL: undefined }, { "prod-1": { enabled: true, apiServerURL: "https://fleet.example.com" } }) };
      expect((await desiredState(onlyOne, fakeFacts(), { cacheRoot })).clusters.map((x) => !!x.agent)).to.deep.equal([false, false, true]);
      // Agent settings are read with the stack file: a wrong one stops there, naming the field.
      const file = stackFileFor("local");
      const raw = configFromStackFile(YAML.parse(fs.readFileSync(path.join(PROJECT_DIR, file), "utf8")), file);
      expect(() => parseStackConfig({ ...raw, agent: { enabled: "no" } }, file, PROJECT_DIR)).to.throw(/agent\.enabled/);
    });

    it("the agent's namespace: its own while the agent runs; the cluster's, aliased to the agent's, when a bundle needs it with the agent off", async () => {
      const c = localStack(RENDER);
      const into = (agent: Record<string, unknown>) => ({ ...c, agent: { apiServerURL: "https://fleet.example.com", namespace: "simple", ...agent } });
      const on = await desiredState(into({}), fakeFacts(), { cacheRoot });
      const dev1 = (s: typeof on) => s.clusters.find((x) => x.name === "dev-1")!;
      expect(dev1(on).namespaces.map((ns) => ns.metadata.name)).to.not.include("simple");
      expect(dev1(on).agent!.namespaceAlias).to.equal("dev-1/simple");
      const off = await desiredState(into({ enabled: false }), fakeFacts(), { cacheRoot });
      expect(dev1(off).namespaces.find((ns) => ns.metadata.name === "simple")).to.deep.include({ name: "dev-1/simple", wasAgentNamespace: true });
      expect(
        dev1(off)
          .namespaces.filter((ns) => ns.wasAgentNamespace)
          .map((ns) => ns.metadata.name),
      ).to.deep.equal(["simple"]);
    });

    it("a platform version bump moves every non-pinned agent's image and leaves pinned ones alone", async () => {
      const base = withAgent({}, { "prod-1": { imageTag: "v0.13.1" } });
      expect((await agents({ ...base, fleetVersion: "0.13.2" })).map((a) => a.image)).to.deep.equal([
        "rancher/fleet-agent:v0.13.2",
        "rancher/fleet-agent:v0.13.2",
        "rancher/fleet-agent:v0.13.1",
      ]);
    });
  });
});
