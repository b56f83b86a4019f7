/**
 * The pure parts of the operations: attributing engine steps to bundle deployments and agents, deploy
 * events, the PR summary's order, Fleet's status states, and reading a cluster's server for the
 * reachability probe. Engine events are synthetic here; the real engine's are in test/e2e.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { EngineEvent, OpType } from "@pulumi/pulumi/automation";
import { deployEvents, formatDeployEvent } from "../../automation/reports/deploy-events";
import { probe } from "../../automation/clusters/reachability";
import { serverOf } from "../../core/config/cluster-access";
import { deployedObjectsOf, legacyObjectUrns } from "../../automation/engine/deployed-objects";
import { clusterOfUrn, groupSteps } from "../../automation/engine/steps";
import { StepRecorder } from "../../automation/engine/step-recorder";
import { computeStatus, formatStatusTable } from "../../automation/reports/status";
import { reportFacts } from "../../core/desired/report-facts";
import { DeploymentRecord } from "../../core/desired/records";
import { FleetState } from "../../core/plan/pipeline";
import { RETAIN_REASONS } from "../../core/desired/delete-policy";

const PREFIX = "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$";
const BD = `${PREFIX}pulumi-fleet:index:BundleDeployment::c1/repo/app`;
const CM = `${PREFIX}pulumi-fleet:index:BundleDeployment$kubernetes:core/v1:ConfigMap::c1/repo/app/core:ConfigMap:ns:cfg`;
const CHART = `${PREFIX}pulumi-fleet:index:BundleDeployment$kubernetes:helm.sh/v4:Chart::c1/repo/chart`;
const CHART_CHILD = `${PREFIX}pulumi-fleet:index:BundleDeployment$kubernetes:helm.sh/v4:Chart$kubernetes:apps/v1:Deployment::c1/repo/chart:ns/web`;
const AGENT = "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:Cluster$pulumi-fleet:index:Agent::c1";
const AGENT_DEP =
  "urn:pulumi:s::pulumi-fleet::pulumi-fleet:index:Fleet$pulumi-fleet:index:Cluster$pulumi-fleet:index:Agent$kubernetes:apps/v1:Deployment::c1/agent/deployment";

const type = (urn: string) => urn.slice(0, urn.lastIndexOf("::")).split("$").pop()!.split("::").pop()!;
function pre(op: OpType, urn: string, parent: string | undefined, custom = true): EngineEvent {
  return {
    sequence: 0,
    timestamp: 0,
    resourcePreEvent: {
      metadata: {
        op,
        urn,
        type: type(urn),
        provider: "",
        new: { type: type(urn), urn, custom, parent: parent ?? "", id: "", inputs: {}, outputs: {}, provider: "" },
      },
    },
  } as EngineEvent;
}

function record(events: EngineEvent[]) {
  const r = new StepRecorder();
  for (const e of events) r.onEvent(e);
  return r;
}

const rec = (key: string, deploymentId: string): DeploymentRecord => {
  const [cluster, gitRepo, bundle] = key.split("/");
  return { gitRepo, bundle, cluster, target: "all", deploymentId, commit: "abc", namespace: "ns", paused: false, objectCount: 1, revision: 1 };
};

describe("operations: steps, events, status", () => {
  it("attributes a Helm chart's children to their BundleDeployment through the parent chain", () => {
    const r = record([
      pre("same", BD, undefined, false),
      pre("update", CM, BD),
      pre("same", CHART, BD, false),
      pre("create", CHART_CHILD, CHART),
      pre("same", AGENT, undefined, false),
      pre("replace", AGENT_DEP, AGENT),
      pre("create-replacement", AGENT_DEP, AGENT),
      pre("delete-replaced", AGENT_DEP, AGENT),
    ]);
    const g = groupSteps(r.steps, r.failedUrns);
    expect(g.deployments.get("c1/repo/app")).to.include({ cluster: "c1", bundle: "app", created: 1, updated: 1, replaced: 0, deleted: 0, pruned: false });
    // A replace is one change, not three.
    expect(g.agents.get("c1")).to.include({ replaced: 1, created: 0, deleted: 0 });
    expect(g.agents.get("c1")!.replacements).to.deep.equal(["kubernetes:apps/v1:Deployment c1/agent/deployment"]);
  });

  it("a no-op gives no event; a pruned deployment gives one Pruned event with the ids it had", () => {
    const noop = groupSteps(record([pre("same", BD, undefined, false), pre("same", CM, BD)]).steps);
    expect(deployEvents(noop, { "c1/repo/app": rec("c1/repo/app", "s-1:a") }, { "c1/repo/app": rec("c1/repo/app", "s-1:a") })).to.deep.equal([]);
    // The pair itself deleted (an earlier version's component leaving the state is no prune: the next test file's move).
    const pruned = groupSteps(record([pre("delete", CM, BD), pre("delete", BD, undefined, true)]).steps);
    const events = deployEvents(pruned, { "c1/repo/app": rec("c1/repo/app", "s-1:a") }, {});
    expect(events.map(formatDeployEvent)).to.deep.equal(["Pruned bundle app from c1 deploymentID=s-1:a commit=abc (0 created, 0 updated, 1 deleted)"]);
  });

  it("an error diagnostic marks its resource's cluster failed, even without a step event", () => {
    const r = record([{ sequence: 0, timestamp: 0, diagnosticEvent: { urn: AGENT_DEP, message: "boom", color: "never", severity: "error" } } as EngineEvent]);
    expect(groupSteps(r.steps, r.failedUrns).failedClusters).to.deep.equal(["c1"]);
    expect(clusterOfUrn("urn:pulumi:s::p::pulumi:providers:kubernetes::c2")).to.equal("c2");
    expect(clusterOfUrn("urn:pulumi:s::p::pulumi:pulumi:Stack::p-s")).to.equal(undefined);
  });

  it("status follows Fleet's states and rolls up to the worst one", () => {
    const entry = (cluster: string, deploymentId: string, paused = false) => ({
      gitRepo: "repo",
      bundle: "app",
      cluster,
      target: "all",
      deploymentId,
      paused,
      namespace: "ns",
    });
    const state = {
      config: { clusters: ["c1", "c2", "c3", "c4", "c5", "c6"].map((name) => ({ name })), gitRepos: [{ name: "repo" }] },
      sources: new Map([["repo", { commit: "abc" }]]),
      plan: {
        entries: [entry("c1", "s-1:a"), entry("c2", "s-2:a"), entry("c3", "s-1:a"), entry("c4", "s-1:a"), entry("c5", "s-2:a", true), entry("c6", "s-1:a")],
        skipped: [],
      },
    } as unknown as FleetState;
    const applied = {
      "c1/repo/app": rec("c1/repo/app", "s-1:a"),
      "c2/repo/app": rec("c2/repo/app", "s-1:a"),
      "c4/repo/app": rec("c4/repo/app", "s-1:a"),
      "c5/repo/app": rec("c5/repo/app", "s-1:a"),
      "c6/repo/app": rec("c6/repo/app", "s-1:a"),
    };
    const drift = groupSteps(
      record([
        pre("same", BD.replace("c1/repo/app", "c4/repo/app"), undefined, false),
        pre("update", CM.replace("c1/repo/app", "c4/repo/app"), BD.replace("c1/repo/app", "c4/repo/app")),
      ]).steps,
    );
    const r = computeStatus("s", state, applied, reportFacts(state, applied), drift, new Set(["c6/repo/app"]));
    expect(r.deployments.map((d) => `${d.cluster} ${d.state}`)).to.deep.equal([
      "c1 Ready",
      "c2 WaitApplied",
      "c3 Pending",
      "c4 Modified",
      "c5 OutOfSync",
      "c6 ErrApplied",
    ]);
    expect(r.deployments[3].message).to.equal("modified ConfigMap ns/cfg");
    expect(r.gitRepos[0]).to.include({ state: "ErrApplied", readyClusters: 1, desiredReadyClusters: 6 });

    // c1 and c6 Offline now: never Ready, nor the last update's ErrApplied; not observed since last seen.
    const offline = new Map([
      ["c1", { since: "2026-11-29T07:05:00.000Z", lastSeen: "2026-11-29T07:00:00.000Z" }],
      ["c6", { since: "2026-11-29T07:05:00.000Z" }],
    ]);
    const down = new Map([
      ["c1", "timeout; Offline since 2026-11-29T07:05:00.000Z, last seen 2026-11-29T07:00:00.000Z"],
      ["c6", "timeout; Offline since 2026-11-29T07:05:00.000Z, never seen by this stack"],
    ]);
    const o = computeStatus("s", state, applied, reportFacts(state, applied), drift, new Set(["c6/repo/app"]), down, {
      probed: true,
      offline,
      lastStates: { "c1/repo/app": { state: "Ready" } },
    });
    const c1 = o.deployments.find((d) => d.cluster === "c1")!;
    expect(c1).to.include({ state: "NotReady", notObservedSince: "2026-11-29T07:00:00.000Z", lastObservedState: "Ready" });
    expect(c1.message).to.equal(`not observed now (last observed Ready): cluster unreachable: ${down.get("c1")}`);
    expect(o.deployments.find((d) => d.cluster === "c6"))
      .to.include({ state: "NotReady" })
      .and.not.have.property("notObservedSince");
    expect(o.clusters.map((c) => `${c.cluster} ${c.state}`)).to.deep.equal([
      "c1 Offline",
      "c2 WaitApplied",
      "c3 Pending",
      "c4 Modified",
      "c5 OutOfSync",
      "c6 Offline",
    ]);
    expect(o.clusters[0].offline).to.deep.equal(offline.get("c1"));
    // A paused cluster says so, in the words the operation gives (core's pausedMessage).
    (state.config.clusters[4] as { paused?: object }).paused = { reason: "incident 7", by: "ana" };
    const p = computeStatus("s", state, applied, reportFacts(state, applied), drift, new Set(), new Map(), {
      pausedWords: (c, x) => `${c} paused: ${x.reason}`,
    });
    expect(p.clusters[4].paused).to.deep.equal({ reason: "incident 7", by: "ana", message: "c5 paused: incident 7" });
    expect(formatStatusTable(p)).to.match(/^c5 +OutOfSync +0\/1 +c5 paused: incident 7$/m);
    expect(formatStatusTable(o)).to.match(/^c1 +Offline +0\/1 +Offline since 2026-11-29T07:05:00.000Z, last seen 2026-11-29T07:00:00.000Z$/m);
  });

  it("reads a cluster's server from kubeconfig text or from a context of the ambient kubeconfig", () => {
    const kubeconfig =
      "apiVersion: v1\nclusters:\n- name: a\n  cluster: {server: https://10.0.0.1:6443}\ncontexts:\n- name: ctx\n  context: {cluster: a}\ncurrent-context: ctx\n";
    expect(serverOf({ name: "c", kubeconfig } as any)).to.equal("https://10.0.0.1:6443");
    expect(serverOf({ name: "c", context: "ctx" } as any, { KUBECONFIG: "/nonexistent" })).to.equal(undefined);
    // A KUBECONFIG of several files, merged as kubectl merges them: the context may be in any; the first to name one wins.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-kc-"));
    fs.writeFileSync(path.join(dir, "one"), "apiVersion: v1\nclusters:\n- name: a\n  cluster: {server: https://10.0.0.9:6443}\ncontexts: []\n");
    fs.writeFileSync(path.join(dir, "two"), kubeconfig.replace("current-context: ctx\n", ""));
    expect(serverOf({ name: "c", context: "ctx" } as any, { KUBECONFIG: `${dir}/one:${dir}/two` })).to.equal("https://10.0.0.9:6443");
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the probe tells an open port from a closed one", async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as net.AddressInfo).port;
    expect(await probe(`https://127.0.0.1:${port}`)).to.equal(undefined);
    await new Promise((r) => server.close(r));
    expect(await probe(`https://127.0.0.1:${port}`)).to.match(/ECONNREFUSED/);
  });
});

describe("the state's objects per bundle deployment (automation/engine/deployed-objects.ts)", () => {
  // Named as an earlier version named them ("<cluster>/<bundle>"): read back under the key with their GitRepo.
  const bd = "urn:pulumi:s::p::pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::c1/app";
  /** A pair as this version names it (an earlier version's "<cluster>/<bundle>" is renamed by the migration: core/migrate/renames.ts). */
  const pairUrn = bd.replace(/::c1\/app$/, "::c1/repo/app");
  const secret = (v: unknown) => ({ "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", plaintext: JSON.stringify(v) });

  it("an earlier version's BundleDeployment component: its Kubernetes objects by its key, in order, retained ones marked, secrets opened; legacy", () => {
    const resources = [
      { urn: bd, type: "pulumi-fleet:index:BundleDeployment", outputs: { deploymentId: "s-1:new", appliedDeploymentId: "s-1:old" } },
      {
        urn: `${bd}$kubernetes:core/v1:Secret::c1/app/core:Secret:ns:pw`,
        type: "kubernetes:core/v1:Secret",
        custom: true,
        parent: bd,
        retainOnDelete: null,
        inputs: {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "pw", namespace: "ns", labels: { "fleet.cattle.io/repo-name": "repo" } },
          data: secret({ password: "c2VjcmV0" }),
        },
      },
      {
        urn: `${bd}$kubernetes:core/v1:ConfigMap::c1/app/core:ConfigMap:ns:kept`,
        type: "kubernetes:core/v1:ConfigMap",
        custom: true,
        parent: bd,
        retainOnDelete: true,
        inputs: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kept", namespace: "ns" } },
      },
      {
        urn: "urn:pulumi:s::p::pulumi-fleet:index:Fleet$pulumi-fleet:index:Cluster$kubernetes:core/v1:Namespace::c1/ns",
        type: "kubernetes:core/v1:Namespace",
        inputs: {},
      },
    ];
    const objects = deployedObjectsOf(resources);
    expect([...objects.keys()]).to.deep.equal(["c1/repo/app"]);
    expect(objects.get("c1/repo/app")).to.include({ appliedDeploymentId: "s-1:old", earlier: true });
    expect(objects.get("c1/repo/app")!.objects.map((o) => [o.manifest.metadata.name, o.retain ?? null, o.manifest.data ?? null])).to.deep.equal([
      ["pw", null, { password: "c2VjcmV0" }],
      ["kept", RETAIN_REASONS.legacy, null],
    ]);
    expect(legacyObjectUrns(resources)).to.deep.equal([resources[1].urn, resources[2].urn]);
  });

  it("a BundleDeployment resource: its last inputs (without its gates), objects with their retain reasons, the user it applied as", () => {
    const spec = {
      deploymentId: "s-1:new",
      deletePolicy: { propagation: "background", ownerLabels: { "fleet.cattle.io/repo-name": "repo" } },
      timeoutSeconds: 600,
      objects: {
        "/Secret/ns/pw": { manifest: { apiVersion: "v1", kind: "Secret", metadata: { name: "pw", namespace: "ns" }, data: secret({ password: "c2VjcmV0" }) } },
        "/ConfigMap/ns/kept": { manifest: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kept", namespace: "ns" } }, retain: "keepResources" },
      },
    };
    const resources = [
      {
        urn: pairUrn,
        type: "pulumi-fleet:index:BundleDeployment",
        custom: true,
        provider: "urn:pulumi:s::p::pulumi:providers:pulumi-fleet::c1/as/system:serviceaccount:ns:deployer::uuid",
        inputs: { ...spec, waitFor: [{ name: "c1/base", state: "Ready" }] },
        outputs: { ...spec, appliedDeploymentId: "s-1:new", state: "Ready" },
      },
    ];
    const d = deployedObjectsOf(resources).get("c1/repo/app")!;
    expect(d).to.include({ appliedDeploymentId: "s-1:new", account: "system:serviceaccount:ns:deployer" });
    expect(d.earlier).to.equal(undefined);
    expect(d.spec).to.not.have.property("waitFor");
    expect((d.spec!.objects["/Secret/ns/pw"].manifest as { data: unknown }).data).to.deep.equal({ password: "c2VjcmV0" });
    expect(d.objects.map((o) => [o.manifest.metadata.name, o.retain ?? null])).to.deep.equal([
      ["pw", null],
      ["kept", "keepResources"],
    ]);
    expect(legacyObjectUrns(resources)).to.deep.equal([]);
    // Through the stack's one provider, the user is in the cluster the spec names.
    const shared = [
      {
        ...resources[0],
        provider: "urn:pulumi:s::p::pulumi:providers:pulumi-fleet::fleet:s::uuid",
        inputs: { ...resources[0].inputs, cluster: "c1/as/system:serviceaccount:ns:other" },
      },
    ];
    expect(deployedObjectsOf(shared).get("c1/repo/app")!.account).to.equal("system:serviceaccount:ns:other");
    expect(deployedObjectsOf([{ ...shared[0], inputs: { ...shared[0].inputs, cluster: "c1" } }]).get("c1/repo/app")!.account).to.equal(undefined);
  });

  it("a BundleDeployment whose objects are a secret in the state (its lookups read a Secret) is marked so, and they are read opened", () => {
    const objects = {
      "/ConfigMap/ns/copy": { manifest: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "copy", namespace: "ns" }, data: { password: "s3cr3t" } } },
    };
    const inputs = {
      deploymentId: "s-1:new",
      deletePolicy: { propagation: "background", ownerLabels: { "fleet.cattle.io/repo-name": "repo" } },
      objects: secret(objects),
    };
    const d = deployedObjectsOf([
      { urn: pairUrn, type: "pulumi-fleet:index:BundleDeployment", custom: true, inputs, outputs: { ...inputs, appliedDeploymentId: "s-1:new" } },
    ]).get("c1/repo/app")!;
    expect(d.secret).to.equal(true);
    expect(d.objects.map((o) => o.manifest.data)).to.deep.equal([{ password: "s3cr3t" }]);
    expect(
      deployedObjectsOf([{ urn: pairUrn, type: "pulumi-fleet:index:BundleDeployment", custom: true, inputs: { ...inputs, objects } }]).get("c1/repo/app")!
        .secret,
    ).to.equal(undefined);
  });
});
