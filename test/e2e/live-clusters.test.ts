/**
 * The incidents, replayed on live clusters: three real API servers with their controllers (global
 * fixture test/support/live-clusters.fixture.ts), the real engine in direct mode through the operations
 * library. Every claim is read back from the API servers: objects, their UIDs, pods, ReplicaSets.
 * The scenarios run in order on one stack, each starting from the state the previous one left.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { kubeList, KubeApiError, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster, LocalClusters, startComponent, stopComponent } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { loadStackFile } from "../../core/plan/pipeline";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { withoutProdTarget } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";
import { liveClusters, LIVE_CLUSTER_NAMES } from "../support/live-clusters";
import { eventually } from "../support/eventually";

const BUNDLE_SELECTOR = "fleet.cattle.io/repo-name=examples";
const AGENT_NS = "cattle-fleet-system";
/** The kinds the example bundles deploy. */
const LISTS = ["/api/v1/configmaps", "/apis/apps/v1/deployments"];

/** "<kind> <ns>/<name> <uid> <resourceVersion>" for every example-bundle object on a cluster, sorted. */
async function bundleObjects(c: LocalCluster): Promise<string[]> {
  const lists = await Promise.all(LISTS.map((p) => kubeList(c, p, BUNDLE_SELECTOR)));
  return lists
    .flat()
    .map((o: any) => `${o.kind ?? ""}${o.metadata.namespace}/${o.metadata.name} ${o.metadata.uid} ${o.metadata.resourceVersion}`)
    .sort();
}

interface AgentView {
  pods: { uid: string; phase: string; image: string; restarts: number; terminating: boolean; owner?: string }[];
  replicaSets: { name: string; uid: string; replicas: number; statusReplicas: number; owner?: string }[];
  deploymentUid: string;
  env: Record<string, string>;
}

async function agentView(c: LocalCluster): Promise<AgentView> {
  const [pods, rss, dep] = await Promise.all([
    kubeList(c, `/api/v1/namespaces/${AGENT_NS}/pods`, "app=fleet-agent"),
    kubeList(c, `/apis/apps/v1/namespaces/${AGENT_NS}/replicasets`, "app=fleet-agent"),
    kubeRequest(c, "GET", `/apis/apps/v1/namespaces/${AGENT_NS}/deployments/fleet-agent`),
  ]);
  return {
    pods: pods.map((p: any) => ({
      uid: p.metadata.uid,
      phase: p.status.phase,
      image: p.spec.containers[0].image,
      restarts: (p.status.containerStatuses ?? []).reduce((n: number, s: any) => n + s.restartCount, 0),
      terminating: !!p.metadata.deletionTimestamp,
      owner: p.metadata.ownerReferences?.[0]?.uid,
    })),
    replicaSets: rss.map((r: any) => ({
      name: r.metadata.name,
      uid: r.metadata.uid,
      replicas: r.spec.replicas,
      statusReplicas: r.status.replicas ?? 0,
      owner: r.metadata.ownerReferences?.[0]?.uid,
    })),
    deploymentUid: dep.metadata.uid,
    env: Object.fromEntries((dep.spec.template.spec.containers[0].env ?? []).filter((e: any) => e.value !== undefined).map((e: any) => [e.name, e.value])),
  };
}

const figures: Record<string, string> = {};

describe("live clusters: the incidents replayed (real engine, direct mode)", function () {
  this.timeout(15 * 60_000);
  let live: LocalClusters;
  let clusters: LocalCluster[];
  const work = tempDir("pf-live-e2e-");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  const options = (config: StackConfig): ops.OperationOptions => ({
    stack: "live",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "live" },
  });

  /** The local stack's fleet (examples/ with dev and prod targets) on the live clusters instead of render mode. */
  let configA: StackConfig;
  const configB = () => withoutProdTarget(configA);
  const withAgent = (c: StackConfig, global: Record<string, unknown>, perCluster: Record<string, Record<string, unknown>> = {}): StackConfig => ({
    ...c,
    agent: { ...c.agent, ...global },
    clusters: c.clusters.map((cl) => ({ ...cl, agent: perCluster[cl.name] })),
  });
  let current: StackConfig;
  const up = async (config: StackConfig, extra: Partial<ops.OperationOptions> = {}) => {
    const r = await ops.up({ ...options(config), ...extra });
    current = config;
    return r;
  };

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
    live = liveClusters();
    clusters = live.clusters;
    expect(clusters.map((c) => c.name)).to.deep.equal(LIVE_CLUSTER_NAMES);
    const { renderDir: _render, ...local } = loadStackFile("local", PROJECT_DIR);
    configA = {
      ...local,
      clusters: local.clusters.map((c, i) => ({ ...c, name: clusters[i].name, kubeconfig: fs.readFileSync(clusters[i].kubeconfig, "utf8") })),
      gitRepos: local.gitRepos,
    };
  });

  after(async function () {
    this.timeout(10 * 60_000);
    console.log(`      live figures: ${JSON.stringify(figures)}`);
    // Other files use the same clusters (test/e2e/upgrade-from-previous.test.ts deploys the same
    // example fleet from another stack): leave none of this stack's objects behind.
    if (current) await ops.destroy(options(current));
  });

  it("1. prune: removing a target deletes the dropped cluster's objects by the time up returns; the others are untouched", async () => {
    let t = Date.now();
    const first = await up(configA);
    figures["up (create, 3 clusters)"] = `${Date.now() - t} ms`;
    expect(first.events.filter((e) => e.event === "deployed")).to.have.length(9);
    const [l1, l2, l3] = await Promise.all(clusters.map(bundleObjects));
    expect(l1.length).to.be.greaterThan(3);
    expect(l3.length).to.be.greaterThan(3);

    // Watch live-3 while the update runs: when do its objects disappear?
    let goneAt: number | undefined;
    let polling = true;
    const poller = (async () => {
      while (polling && goneAt === undefined) {
        if ((await bundleObjects(clusters[2])).length === 0) goneAt = Date.now();
        else await new Promise((r) => setTimeout(r, 100));
      }
    })();
    t = Date.now();
    const pruned = await up(configB());
    const returned = Date.now();
    polling = false;
    await poller;
    expect(await bundleObjects(clusters[2]), "live-3 objects after up returned").to.deep.equal([]);
    expect(goneAt, "deleted before up returned").to.not.equal(undefined);
    figures["prune: update start -> objects gone"] = `${goneAt! - t} ms`;
    figures["prune: update start -> up returned"] = `${returned - t} ms`;
    expect(pruned.events.map((e) => `${e.event} ${e.cluster}/${e.bundle}`)).to.deep.equal(
      ["examples-helm", "examples-kustomize", "examples-simple"].map((b) => `pruned live-3/${b}`),
    );
    // Only removals: the engine's targeted update of them (automation/operation/prune-only.ts), the provider's encrypted access decrypted to compare.
    expect(pruned.pruneOnly, "the prune ran as a targeted update").to.include({ pairs: 3 });
    // Same UIDs and resourceVersions: not even touched.
    expect(await bundleObjects(clusters[0])).to.deep.equal(l1);
    expect(await bundleObjects(clusters[1])).to.deep.equal(l2);
  });

  const AGENT_SETTINGS = { env: { LOG_LEVEL: "info" }, resources: { requests: { cpu: "0.5" } } };

  it("2. no churn: five ups with the same effective agent config, then the same config from another source", async () => {
    const config = withAgent(configB(), AGENT_SETTINGS);
    await up(config);
    const before = await Promise.all(clusters.map(agentView));
    for (const v of before) {
      expect(v.pods.filter((p) => !p.terminating)).to.have.length(1);
      expect(v.pods[0].phase).to.equal("Running");
    }
    for (let i = 0; i < 5; i++) {
      const r = await up(config, { expectNoChanges: true });
      expect(r.events, `up #${i + 1}`).to.deep.equal([]);
    }
    const perCluster = Object.fromEntries(LIVE_CLUSTER_NAMES.map((n) => [n, { env: { LOG_LEVEL: "info" }, resources: { requests: { cpu: "500m" } } }]));
    await up(withAgent(configB(), {}, perCluster), { expectNoChanges: true });
    const after = await Promise.all(clusters.map(agentView));
    for (let i = 0; i < clusters.length; i++) {
      expect(
        after[i].pods.map((p) => p.uid),
        clusters[i].name,
      ).to.deep.equal(before[i].pods.map((p) => p.uid));
      expect(after[i].pods.map((p) => p.restarts)).to.deep.equal([0]);
      expect(after[i].replicaSets.map((r) => r.uid)).to.deep.equal(before[i].replicaSets.map((r) => r.uid));
    }
  });

  it("2b. a rotated route to each cluster (kubeconfig server and CA bundle) is not agent config: no agent pod touched", async () => {
    // The agent registers with the Fleet management endpoint (agent.apiServerURL), not with the runner's
    // route to its cluster. Rotate that route as a team would: another name for the same API server
    // (its certificate is valid for localhost) and a CA bundle with a second CA added.
    const rotated = (c: StackConfig): StackConfig => ({
      ...c,
      clusters: c.clusters.map((cl, i) => {
        const doc = YAML.parse(cl.kubeconfig!);
        const entry = doc.clusters[0].cluster;
        const otherCA = Buffer.from(
          YAML.parse(c.clusters[(i + 1) % c.clusters.length].kubeconfig!).clusters[0].cluster["certificate-authority-data"],
          "base64",
        );
        entry.server = String(entry.server).replace("127.0.0.1", "localhost");
        entry["certificate-authority-data"] = Buffer.concat([Buffer.from(entry["certificate-authority-data"], "base64"), otherCA]).toString("base64");
        return { ...cl, kubeconfig: YAML.stringify(doc) };
      }),
    });
    const perCluster = Object.fromEntries(LIVE_CLUSTER_NAMES.map((n) => [n, { env: { LOG_LEVEL: "info" }, resources: { requests: { cpu: "500m" } } }]));
    const config = withAgent(configB(), {}, perCluster);
    const before = await Promise.all(clusters.map(agentView));
    const r = await up(rotated(config));
    expect(r.events, "no bundle deployed").to.deep.equal([]);
    const after = await Promise.all(clusters.map(agentView));
    for (let i = 0; i < clusters.length; i++) {
      expect(
        after[i].pods.map((p) => p.uid),
        clusters[i].name,
      ).to.deep.equal(before[i].pods.map((p) => p.uid));
      expect(
        after[i].replicaSets.map((x) => x.uid),
        clusters[i].name,
      ).to.deep.equal(before[i].replicaSets.map((x) => x.uid));
    }
    // And back: the same, and nothing left to change.
    await up(config);
    await up(config, { expectNoChanges: true });
    expect((await Promise.all(clusters.map(agentView))).map((v) => v.pods.map((p) => p.uid))).to.deep.equal(before.map((v) => v.pods.map((p) => p.uid)));
  });

  it("3. exactly one agent after three setting changes: old ReplicaSets at zero, no orphans", async () => {
    for (const level of ["debug", "warn", "error"]) await up(withAgent(configB(), { ...AGENT_SETTINGS, env: { LOG_LEVEL: level } }));
    for (const c of clusters) {
      // Recreate: the old pod is deleted before the new one is created, so `up` returning means one pod.
      const v = await eventually(
        `${c.name}: one agent pod`,
        () => agentView(c),
        (x) => x.pods.length === 1,
      );
      expect(v.pods[0]).to.include({ phase: "Running", terminating: false, restarts: 0 });
      expect(v.env.LOG_LEVEL).to.equal("error");
      const currentRs = v.replicaSets.find((r) => r.uid === v.pods[0].owner);
      expect(currentRs, `${c.name}: the pod's ReplicaSet exists`).to.not.equal(undefined);
      for (const rs of v.replicaSets.filter((r) => r !== currentRs))
        expect(rs, `${c.name}: old ReplicaSet ${rs.name}`).to.include({ replicas: 0, statusReplicas: 0 });
      expect(v.replicaSets.length, "revisionHistoryLimit 2").to.be.at.most(3);
      for (const rs of v.replicaSets) expect(rs.owner, `${c.name}: ${rs.name} owned by the Deployment`).to.equal(v.deploymentUid);
      const allPods = await kubeList(c, `/api/v1/namespaces/${AGENT_NS}/pods`);
      expect(
        allPods.map((p: any) => p.metadata.name),
        `${c.name}: no other pods in ${AGENT_NS}`,
      ).to.have.length(1);
    }
  });

  it("4. upgrade: a platform version bump moves every non-pinned agent to the new image; the pinned one is untouched", async () => {
    const base = withAgent(
      configB(),
      { ...AGENT_SETTINGS, env: { LOG_LEVEL: "error" } },
      { "live-3": { ...AGENT_SETTINGS, env: { LOG_LEVEL: "error" }, imageTag: "v0.13.1" } },
    );
    await up(base, { expectNoChanges: true }); // pinning the tag already running changes nothing
    const pinnedBefore = await agentView(clusters[2]);
    const t = Date.now();
    await up({ ...base, fleetVersion: "0.13.2" });
    figures["upgrade: up"] = `${Date.now() - t} ms`;
    for (const c of clusters.slice(0, 2)) {
      const v = await agentView(c);
      expect(
        v.pods.map((p) => `${p.image} ${p.phase}`),
        c.name,
      ).to.deep.equal(["rancher/fleet-agent:v0.13.2 Running"]);
    }
    const pinned = await agentView(clusters[2]);
    expect(pinned.pods.map((p) => `${p.uid} ${p.image}`)).to.deep.equal(pinnedBefore.pods.map((p) => `${p.uid} rancher/fleet-agent:v0.13.1`));
  });

  it("5. validation: a label value the API server rejects fails its bundle (preview and up) with a clear error, and no cluster changes", async () => {
    const bad = tempDir("pf-bad-repo-");
    fs.mkdirSync(path.join(bad, "app"));
    fs.writeFileSync(
      path.join(bad, "app", "cm.yaml"),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  labels:\n    team: "not valid!"\ndata: {k: v}\n',
    );
    // The API server itself rejects the object: our check matches its rule.
    const direct = await kubeRequest(clusters[0], "POST", "/api/v1/namespaces/default/configmaps", {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bad", labels: { team: "not valid!" } } },
    }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(direct).to.be.instanceOf(KubeApiError);
    expect((direct as KubeApiError).status).to.equal(422);

    const before = await Promise.all(clusters.map(bundleObjects));
    const withBad: StackConfig = {
      ...current,
      gitRepos: [...current.gitRepos, { ...current.gitRepos[0], name: "bad", repo: bad, paths: ["app"], targets: [{ name: "all", clusterSelector: {} }] }],
    };
    // The bundle fails alone (the preview reports it, and the CLI exits non-zero on it); nothing else is touched.
    const preview = await ops.preview(options(withBad));
    expect(preview.failures.map((f) => f.cluster)).to.deep.equal(["live-1", "live-2", "live-3"]);
    expect(preview.failures[0].message)
      .to.contain("gitRepo bad")
      .and.contain("metadata.labels")
      .and.contain("not valid!")
      .and.match(/cluster live-\d/);
    const upErr = await ops.up(options(withBad)).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(upErr).to.be.instanceOf(ops.BundlesFailedError);
    expect(upErr!.message).to.contain("gitRepo bad").and.contain("not valid!");
    expect(await Promise.all(clusters.map(bundleObjects))).to.deep.equal(before);
  });

  it("6. drift: a hand edit shows in status and a refresh-preview, and up --refresh restores it", async () => {
    const c = clusters[0];
    const cmPath = "/api/v1/namespaces/simple/configmaps/app-config";
    const original = (await kubeRequest(c, "GET", cmPath)).data;
    await kubeRequest(c, "PATCH", cmPath, { body: { data: { greeting: "edited by hand" } } });

    const drifted = await ops.status(options(current));
    const d = drifted.deployments.find((x) => x.cluster === "live-1" && x.bundle === "examples-simple")!;
    expect(d.state).to.equal("Modified");
    expect(d.message).to.contain("modified ConfigMap simple/app-config");
    expect(drifted.deployments.filter((x) => x.state !== "Ready").map((x) => `${x.cluster}/${x.bundle}`)).to.deep.equal(["live-1/examples-simple"]);

    const preview = await ops.preview({ ...options(current), refresh: true });
    const steps = preview.groups.deployments.get("live-1/examples/examples-simple")!;
    expect(steps.updated, JSON.stringify(steps.steps.map((x) => [x.op, x.urn.split("::").pop(), x.diffs]))).to.equal(1);

    const fixed = await ops.up({ ...options(current), refresh: true });
    expect(fixed.events.map((e) => `${e.event} ${e.cluster}/${e.bundle} updated=${e.updated}`)).to.deep.equal(["deployed live-1/examples-simple updated=1"]);
    expect((await kubeRequest(c, "GET", cmPath)).data).to.deep.equal(original);
    const ready = await ops.status(options(current));
    expect(
      ready.deployments.every((x) => x.state === "Ready"),
      JSON.stringify(ready.deployments),
    ).to.equal(true);
  });

  it("7. an unreachable cluster: its failure is reported, the others converge, and it converges later without replacements", async () => {
    const down = clusters[1];
    const uidsBefore = await Promise.all(clusters.map(bundleObjects));
    await stopComponent(live, down, "kube-apiserver");
    const changed = withAgent(
      configB(),
      { ...AGENT_SETTINGS, env: { LOG_LEVEL: "trace" } },
      { "live-3": { ...AGENT_SETTINGS, env: { LOG_LEVEL: "trace" }, imageTag: "v0.13.1" } },
    );
    const changedConfig = { ...changed, fleetVersion: "0.13.2" };
    let t = Date.now();
    const err = await ops.up(options(changedConfig)).then(
      () => undefined,
      (e: Error) => e,
    );
    figures["up with one cluster down (fails)"] = `${Date.now() - t} ms`;
    expect(err, "the update must fail").to.be.instanceOf(ops.OperationError);
    const headline = err!.message.split("\n")[0];
    expect(headline, err!.message).to.match(/^up of stack live failed on cluster live-2[ :]/);
    expect(headline).to.not.contain("live-1").and.not.contain("live-3");
    expect((err as ops.OperationError).events.map((e) => e.cluster)).to.not.include("live-2");
    for (const c of [clusters[0], clusters[2]]) expect((await agentView(c)).env.LOG_LEVEL, c.name).to.equal("trace");

    // Offline is a state that stays true between runs: two status runs and a preview later, the same
    // "since" and "last seen" (from the earlier runs that reached it), its pairs never Ready.
    const first = await ops.status(options(changedConfig));
    const second = await ops.status(options(changedConfig));
    const offline = (r: typeof first) => r.clusters.find((c) => c.cluster === down.name)!;
    expect(offline(first).state).to.equal("Offline");
    expect(offline(first).offline, JSON.stringify(offline(first))).to.have.keys("since", "lastSeen");
    expect(offline(second).offline).to.deep.equal(offline(first).offline);
    expect(Date.parse(offline(first).offline!.lastSeen!)).to.be.below(Date.parse(offline(first).offline!.since));
    const pairs = second.deployments.filter((d) => d.cluster === down.name);
    expect(pairs.length).to.be.above(0);
    for (const p of pairs) {
      expect(p.state, p.message).to.equal("NotReady");
      expect(p.notObservedSince).to.equal(offline(first).offline!.lastSeen);
      expect(p.lastObservedState).to.equal("Ready");
    }
    expect(second.clusters.filter((c) => c.cluster !== down.name).map((c) => c.state)).to.not.include("Offline");
    // (The command then exits 3 naming it: test/e2e/first-contact-output.test.ts.)
    const preview = await ops.preview(options(changedConfig));
    expect(preview.unreachable.get(down.name)).to.contain(`Offline since ${offline(first).offline!.since}, last seen ${offline(first).offline!.lastSeen}`);

    await startComponent(live, down, "kube-apiserver");
    expect((await agentView(down)).env.LOG_LEVEL).to.equal("error");
    t = Date.now();
    const r = await up(changedConfig);
    figures["up after the cluster is back"] = `${Date.now() - t} ms`;
    expect(r.changes).to.not.have.any.keys("replace", "create", "delete");
    expect((await agentView(down)).env.LOG_LEVEL).to.equal("trace");
    const uidsAfter = await Promise.all(clusters.map(bundleObjects));
    const uids = (xs: string[]) => xs.map((x) => x.split(" ").slice(0, 2).join(" "));
    expect(uidsAfter.map(uids)).to.deep.equal(uidsBefore.map(uids));
    const back = await ops.status(options(changedConfig));
    expect(back.clusters.map((c) => c.state)).to.not.include("Offline");
    expect(back.clusters.every((c) => c.offline === undefined)).to.equal(true);
  });
  it("8. a cluster removed from the stack: the same up deletes its bundles' objects and its agent, keeps its namespaces; the stack's one provider keeps its access until then", async () => {
    await up(configA);
    const gone = clusters[2];
    const agentOn = async () => (await kubeList(gone, "/apis/apps/v1/namespaces/cattle-fleet-system/deployments", "app=fleet-agent")).length;
    expect((await bundleObjects(gone)).length).to.be.greaterThan(3);
    expect(await agentOn()).to.equal(1);
    const without: StackConfig = { ...configA, clusters: configA.clusters.filter((c) => c.name !== gone.name) };
    const removed = await up(without);
    expect(
      removed.events
        .filter((e) => e.cluster === gone.name)
        .map((e) => `${e.event} ${e.bundle}`)
        .sort(),
    ).to.deep.equal(["examples-helm", "examples-kustomize", "examples-simple"].map((b) => `pruned ${b}`));
    expect(await bundleObjects(gone), `${gone.name}: its bundles' objects`).to.deep.equal([]);
    expect(await agentOn(), `${gone.name}: its agent`).to.equal(0);
    const namespaces = (await kubeList(gone, "/api/v1/namespaces")).map((n: any) => n.metadata.name);
    expect(namespaces, "its namespaces are kept, as a bundle's are").to.include.members(["simple", "cattle-fleet-system"]);
    // Nothing of it is left in the state: the next update drops its access from the provider, and only that.
    const next = await up(without);
    expect(next.changes).to.deep.include({ update: 1 });
    expect(Object.keys(next.changes).filter((k) => !["same", "read", "update"].includes(k))).to.deep.equal([]);
    await up(without, { expectNoChanges: true });
  });
});
