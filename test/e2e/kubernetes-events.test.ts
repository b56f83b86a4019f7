/**
 * notifications.kubernetesEvents on a live cluster, through the operations: the Events the provider
 * posts on the downstream cluster, read back from its API server as `kubectl get events -n <namespace>`
 * lists them. Turned on for a deployed stack it changes nothing (the next `up` is a no-op and posts
 * nothing); a deploy posts one Normal `Deployed` per pair; a change a ValidatingAdmissionPolicy refuses
 * posts one Warning `ErrApplied` with the policy's words (the same refusal in the next `up`: no second
 * Event); the recovery posts `Deployed`; a hand edit found by `status` posts `Modified`.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { gitRepoConfig, tempDir } from "../support/git-fixtures";
import { liftPolicy, refuseLabelledConfigMaps, writeConfigMapBundles } from "../support/admission";
import { liveClusters } from "../support/live-clusters";
import { liveClusterConfig } from "../support/live-stack";

const NS = "kevents";
const POLICY = "kevents-refuse-deny";
const BUNDLES = ["b0", "b1"];

interface KubeEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  action: string;
  reportingComponent: string;
  reportingInstance: string;
  involvedObject: { kind: string; name: string; namespace: string };
  source: { component: string };
  lastTimestamp: string;
  metadata: { name: string; labels?: Record<string, string> };
}

describe("notifications.kubernetesEvents: Events on the downstream cluster when a pair's state changes", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-kevents-");
  const repoDir = path.join(work, "repo");
  let cluster: LocalCluster;
  let config: StackConfig;
  const write = (version: number, denied?: string) => writeConfigMapBundles(repoDir, BUNDLES, NS, () => version, denied);
  const options = (): ops.OperationOptions => ({
    stack: "kevents",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "kevents" },
  });
  const ours = async () =>
    ((await kubeGet<{ items: KubeEvent[] }>(cluster, `/api/v1/namespaces/${NS}/events`))?.items ?? []).filter((e) => e.reportingComponent === "pulumi-fleet");
  const said = async () => (await ours()).map((e) => `${e.type} ${e.reason} ${e.metadata.labels?.["fleet.cattle.io/bundle-name"]} x${e.count}`).sort();

  before(async function () {
    toolchain();
    cluster = liveClusters().clusters[0];
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    write(1);
    config = {
      file: "stacks/Pulumi.kevents.yaml",
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com", enabled: false },
      clusterGroups: [],
      clusters: [liveClusterConfig(cluster)],
      gitRepos: [gitRepoConfig({ name: "kevents", repo: repoDir, paths: BUNDLES, targets: [{ clusterSelector: {} }] })],
    } as StackConfig;
  });

  after(async function () {
    await liftPolicy(cluster, POLICY);
    await ops.destroy(options());
    try {
      await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/${NS}`);
    } catch {
      /* gone */
    }
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("off: nothing posted; turned on: no diff; then Deployed, ErrApplied once with the policy's words, Deployed again, Modified", async () => {
    const first = await ops.up(options());
    expect(first.events).to.have.length(2);
    expect(await ours(), "Events are off by default").to.deep.equal([]);

    config = { ...config, notifications: { webhooks: [], kubernetesEvents: true } };
    const turnedOn = await ops.up(options());
    expect(turnedOn.events, "turning Events on deploys nothing").to.deep.equal([]);
    expect(turnedOn.changes.update ?? 0).to.equal(0);
    expect(await ours()).to.deep.equal([]);

    write(2);
    const deployed = await ops.up(options());
    expect(deployed.events.map((e) => `${e.event} ${e.bundle}`).sort()).to.deep.equal(["deployed kevents-b0", "deployed kevents-b1"]);
    expect(await said()).to.deep.equal(["Normal Deployed kevents-b0 x1", "Normal Deployed kevents-b1 x1"]);
    const b0 = (await ours()).find((e) => e.metadata.labels?.["fleet.cattle.io/bundle-name"] === "kevents-b0")!;
    const id = deployed.events.find((e) => e.bundle === "kevents-b0")!.deploymentId;
    expect(b0.message).to.equal(`Deployed bundle kevents-b0 of GitRepo kevents deploymentID=${id}`);
    expect(b0.involvedObject).to.include({ kind: "Namespace", name: NS });
    expect(b0).to.include({ action: "Apply" });
    expect(b0.source.component).to.equal("pulumi-fleet");
    expect(b0.reportingInstance).to.match(/^pulumi-fleet@/);

    await refuseLabelledConfigMaps(cluster, POLICY, "ConfigMaps labelled deny are refused here", NS);
    write(3, "b1");
    const failed = await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(failed).to.be.instanceOf(ops.BundlesFailedError);
    expect(await said()).to.deep.equal([
      "Normal Deployed kevents-b0 x1",
      "Normal Deployed kevents-b0 x1",
      "Normal Deployed kevents-b1 x1",
      "Warning ErrApplied kevents-b1 x1",
    ]);
    const refusal = (await ours()).find((e) => e.reason === "ErrApplied")!;
    expect(refusal.message)
      .to.match(/^Applying bundle kevents-b1 of GitRepo kevents deploymentID=\S+ failed: /)
      .and.to.include("ConfigMap/kevents/b1")
      .and.to.include("ConfigMaps labelled deny are refused here");

    // The same refusal again: the pair's state did not change, so no Event (and no count raised).
    await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(await said()).to.deep.equal([
      "Normal Deployed kevents-b0 x1",
      "Normal Deployed kevents-b0 x1",
      "Normal Deployed kevents-b1 x1",
      "Warning ErrApplied kevents-b1 x1",
    ]);

    await liftPolicy(cluster, POLICY, NS);
    const recovered = await ops.up(options());
    expect(recovered.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed kevents-b1"]);
    expect((await said()).filter((s) => s.includes("kevents-b1"))).to.deep.equal([
      "Normal Deployed kevents-b1 x1",
      "Normal Deployed kevents-b1 x1",
      "Warning ErrApplied kevents-b1 x1",
    ]);

    // A hand edit: `status` (a refresh) finds the drift and says it on the cluster.
    await kubeRequest(cluster, "PATCH", `/api/v1/namespaces/${NS}/configmaps/b0`, { body: { data: { version: "by hand" } } });
    const status = await ops.status(options());
    expect(status.deployments.find((d) => d.bundle === "kevents-b0")!.state).to.equal("Modified");
    const modified = (await ours()).filter((e) => e.reason === "Modified");
    expect(modified.map((e) => [e.type, e.action, e.metadata.labels?.["fleet.cattle.io/bundle-name"]])).to.deep.equal([["Warning", "Refresh", "kevents-b0"]]);
    expect(modified[0].message).to.equal("Bundle kevents-b0 of GitRepo kevents was changed on the cluster: modified ConfigMap kevents/b0");
  });

  // The deploy event a dependsOn pair lacked: held at its gate in one `up`, applied in the next (decide.go heldObjects).
  it("a dependsOn pair held in one `up` (WaitApplied: no Event) and applied in the next gets its deploy event and its Deployed Event", async () => {
    const heldDir = path.join(work, "held");
    const file = (p: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(heldDir, p)), { recursive: true });
      fs.writeFileSync(path.join(heldDir, p), text);
    };
    file("db/fleet.yaml", `defaultNamespace: ${NS}\n`);
    file("db/cm.yaml", `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db\n  labels: {deny: "true"}\ndata:\n  k: v\n`);
    file("app/fleet.yaml", `defaultNamespace: ${NS}\ndependsOn:\n  - name: kheld-db\n`);
    file("app/cm.yaml", `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  k: v\n`);
    config = {
      ...config,
      gitRepos: [...config.gitRepos, gitRepoConfig({ name: "kheld", repo: heldDir, paths: ["db", "app"], targets: [{ clusterSelector: {} }] })],
    };
    await refuseLabelledConfigMaps(cluster, POLICY, "ConfigMaps labelled deny are refused here", NS);
    const heldUp = await ops.up(options()).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(heldUp).to.be.instanceOf(ops.BundlesFailedError);
    expect((heldUp as ops.BundlesFailedError).events.filter((e) => e.gitRepo === "kheld")).to.deep.equal([]);
    expect((await said()).filter((x) => x.includes("kheld"))).to.deep.equal(["Warning ErrApplied kheld-db x1"]);
    expect(await kubeGet(cluster, `/api/v1/namespaces/${NS}/configmaps/app`), "held at its gate").to.equal(undefined);

    await liftPolicy(cluster, POLICY, NS);
    const opened = await ops.up(options());
    expect(
      opened.events
        .filter((e) => e.gitRepo === "kheld")
        .map((e) => `${e.event} ${e.bundle}`)
        .sort(),
    ).to.deep.equal(["deployed kheld-app", "deployed kheld-db"]);
    expect(opened.events.find((e) => e.bundle === "kheld-app")).to.include({ created: 1, updated: 0, deleted: 0 });
    expect((await said()).filter((x) => x.includes("kheld"))).to.deep.equal([
      "Normal Deployed kheld-app x1",
      "Normal Deployed kheld-db x1",
      "Warning ErrApplied kheld-db x1",
    ]);
    expect(await kubeGet(cluster, `/api/v1/namespaces/${NS}/configmaps/app`)).to.not.equal(undefined);
  });
});
