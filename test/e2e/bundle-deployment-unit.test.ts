/**
 * The engine's unit is the (bundle, cluster) pair: pulumi-fleet's provider (tools/fleet-provider) run by
 * the real engine against the three live clusters, with a program of its own (six bundles of one
 * ConfigMap each on every cluster). Issue 40's case: an admission policy on one cluster refuses one
 * bundle's change; that pair alone is ErrApplied, naming the object and the server's words, and keeps
 * what it had, while the other 17 pairs update in the same `up`; once the policy is gone the next `up`
 * updates that pair alone. Also the prune by inventory (retain reasons and foreign owners obeyed), a
 * readiness timeout as NotReady, the preview's per-object diff, and the deletion of the pairs.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace, PulumiCommand, Stack, UpResult } from "@pulumi/pulumi/automation";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import { toolchain } from "../../automation/engine/toolchain";
import { BundleDeploymentPair, FleetProvider, PairArgs } from "../../components/pair";
import { PairObject, PairStatus, pairObjectKey } from "../../core/model/pair";
import { BUNDLE_DEPLOYMENT_TYPE } from "../../core/desired/types";
import { tempDir } from "../support/git-fixtures";
import { liftPolicy, refuseLabelledConfigMaps } from "../support/admission";
import { liveClusters } from "../support/live-clusters";

const NS = "pair-unit";
const OWNER = { "fleet.cattle.io/repo-name": "unit", "app.kubernetes.io/managed-by": "pulumi-fleet" };

interface Content {
  version: number;
  /** Bundle index whose ConfigMap carries the label the admission policy refuses. */
  denied?: number;
  /** Extra objects of bundle 1 on the first cluster (a retained one among them). */
  extra?: Record<string, PairObject>;
  /** A PersistentVolumeClaim that never binds, in bundle 5 on the first cluster, with this readiness timeout. */
  unboundClaim?: number;
}

function configMap(name: string, data: Record<string, string>, labels: Record<string, string> = {}): Record<string, unknown> {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: NS, labels: { ...OWNER, ...labels } }, data };
}

function objectsOf(entries: Record<string, unknown>[]): Record<string, PairObject> {
  return Object.fromEntries(entries.map((m) => [pairObjectKey(m as never), { manifest: m }]));
}

function specOf(c: LocalCluster, b: number, content: Content): PairArgs {
  const first = c.name === liveClusters().clusters[0].name;
  const labels: Record<string, string> = content.denied === b ? { deny: "true" } : {};
  const objects = objectsOf([configMap(`b${b}`, { version: String(content.version), cluster: c.name }, labels)]);
  if (first && b === 1) Object.assign(objects, content.extra ?? {});
  let timeoutSeconds = 30;
  if (first && b === 5 && content.unboundClaim) {
    timeoutSeconds = content.unboundClaim;
    Object.assign(
      objects,
      objectsOf([
        {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: "never-bound", namespace: NS, labels: OWNER },
          spec: { accessModes: ["ReadWriteOnce"], storageClassName: "does-not-exist", resources: { requests: { storage: "1Gi" } } },
        },
      ]),
    );
  }
  return {
    deploymentId: `s-${content.version}:${b}${content.denied === b ? "d" : ""}${first && b === 1 ? Object.keys(content.extra ?? {}).join(",") : ""}`,
    objects,
    timeoutSeconds,
    deletePolicy: { propagation: "background", ownerLabels: OWNER },
  };
}

describe("the BundleDeployment as the engine's unit (pulumi-fleet provider, real engine, live clusters)", function () {
  const work = tempDir("pf-pair-unit-");
  let stack: Stack;
  let clusters: LocalCluster[];
  let content: Content = { version: 1 };

  const program = async () => {
    const states: Record<string, pulumi.Output<PairStatus["state"]>> = {};
    const messages: Record<string, pulumi.Output<string[] | null>> = {};
    // One provider for every cluster, as the program registers it: each pair names its cluster.
    const provider = new FleetProvider(
      "fleet",
      Object.fromEntries(clusters.map((c) => [c.name, { clusterIdentifier: c.name, kubeconfig: fs.readFileSync(c.kubeconfig, "utf8") }])),
    );
    for (const c of clusters) {
      for (let b = 0; b < 6; b++) {
        const pair = new BundleDeploymentPair(`${c.name}/b${b}`, { ...specOf(c, b, content), cluster: c.name }, { provider });
        states[`${c.name}/b${b}`] = pair.state;
        messages[`${c.name}/b${b}`] = pair.messages;
      }
    }
    return { states, messages };
  };

  const up = async (): Promise<UpResult> => stack.up({ color: "never" });
  const outputs = async () => {
    const o = await stack.outputs();
    return {
      states: o.states.value as Record<string, string>,
      messages: o.messages.value as Record<string, string[] | null>,
      // Not an Output of the pair (components/pair.ts registers only those the program reads): in the state.
      retained: Object.fromEntries(
        (await stack.exportStack()).deployment.resources
          .filter((r: { type: string }) => r.type === BUNDLE_DEPLOYMENT_TYPE)
          .map((r: { urn: string; outputs: { retained?: string[] | null } }) => [r.urn.split("::").pop()!, r.outputs.retained ?? null]),
      ) as Record<string, string[] | null>,
    };
  };
  const liveData = async (c: LocalCluster, name: string) =>
    (await kubeGet<{ data: Record<string, string> }>(c, `/api/v1/namespaces/${NS}/configmaps/${name}`))?.data;
  const policy = "deny-labelled-configmaps";

  before(async function () {
    this.timeout(10 * 60_000);
    clusters = liveClusters().clusters;
    for (const c of clusters) await kubeRequest(c, "POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } });
    const tools = toolchain();
    const stateDir = path.join(work, "state");
    fs.mkdirSync(stateDir, { recursive: true });
    stack = await LocalWorkspace.createOrSelectStack(
      { stackName: "pair-unit", projectName: "pair-unit", program },
      {
        workDir: work,
        pulumiCommand: await PulumiCommand.get({ root: tools.root }),
        envVars: { ...tools.env, PULUMI_BACKEND_URL: `file://${stateDir}`, PULUMI_CONFIG_PASSPHRASE: "pair-unit" },
        projectSettings: { name: "pair-unit", runtime: "nodejs", backend: { url: `file://${stateDir}` } },
      },
    );
  });

  after(async function () {
    this.timeout(10 * 60_000);
    const second = clusters?.[1];
    if (second) await liftPolicy(second, policy);
    if (stack) await stack.destroy({ color: "never" });
    for (const c of clusters ?? [])
      try {
        await kubeRequest(c, "DELETE", `/api/v1/namespaces/${NS}`);
      } catch {
        /* gone */
      }
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("deploys 6 bundles to 3 clusters as 18 engine resources, each Ready", async function () {
    this.timeout(10 * 60_000);
    const result = await up();
    expect(result.summary.resourceChanges?.create).to.equal(18 + 1 + 1, "18 pairs, one provider for the three clusters, the stack");
    const { states } = await outputs();
    expect(Object.values(states))
      .to.have.length(18)
      .and.satisfy((s: string[]) => s.every((x) => x === "Ready"));
    for (const c of clusters) expect((await liveData(c, "b3"))?.version).to.equal("1");
  });

  it("a change one cluster refuses fails that pair alone: the other 17 update in the same up, nothing is deleted", async function () {
    this.timeout(10 * 60_000);
    const second = clusters[1];
    await refuseLabelledConfigMaps(second, policy, "labelled deny: refused by the cluster's policy", NS);

    content = { version: 2, denied: 0 };
    const started = Date.now();
    await up();
    const { states, messages } = await outputs();
    const refused = `${second.name}/b0`;
    expect(Object.entries(states).filter(([k, s]) => k !== refused && s === "Ready")).to.have.length(17);
    expect(states[refused]).to.equal("ErrApplied");
    expect(messages[refused]!.join("\n")).to.include("ConfigMap/pair-unit/b0").and.to.include("labelled deny: refused by the cluster's policy");
    for (const c of clusters)
      for (let b = 0; b < 6; b++) {
        expect((await liveData(c, `b${b}`))?.version, `${c.name}/b${b}`).to.equal(c === second && b === 0 ? "1" : "2");
      }
    console.log(`      (17 of 18 pairs updated, one refused, in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  });

  it("the next up, once the policy is gone, updates the refused pair alone; the one after changes nothing", async function () {
    this.timeout(10 * 60_000);
    const second = clusters[1];
    await liftPolicy(second, policy, NS);
    const retry = await up();
    expect(retry.summary.resourceChanges?.update).to.equal(1);
    expect((await liveData(second, "b0"))?.version).to.equal("2");
    const { states } = await outputs();
    expect(Object.values(states).every((s) => s === "Ready")).to.equal(true);
    const noop = await up();
    expect(noop.summary.resourceChanges?.update ?? 0).to.equal(0);
    expect(noop.summary.resourceChanges?.same).to.equal(20);
  });

  it("prunes by inventory in the same up: a dropped object goes, a retained one and another owner's stay", async function () {
    this.timeout(10 * 60_000);
    const first = clusters[0];
    content = { ...content, extra: objectsOf([configMap("b1-dropped", { k: "v" }), configMap("b1-kept", { k: "v" }), configMap("b1-taken", { k: "v" })]) };
    content.extra![pairObjectKey(configMap("b1-kept", { k: "v" }) as never)].retain = "keepResources";
    await up();
    // Another owner relabels one of them: a prune must leave it alone.
    await kubeRequest(first, "PATCH", `/api/v1/namespaces/${NS}/configmaps/b1-taken`, {
      body: { metadata: { labels: { "fleet.cattle.io/repo-name": "another-team" } } },
    });
    content = { ...content, extra: {} };
    const preview = await stack.preview({ color: "never", diff: true });
    expect(preview.stdout).to.include("b1-dropped");
    await up();
    expect(await liveData(first, "b1-dropped")).to.equal(undefined);
    expect(await liveData(first, "b1-kept")).to.not.equal(undefined);
    expect(await liveData(first, "b1-taken")).to.not.equal(undefined);
    const { retained } = await outputs();
    expect(retained[`${first.name}/b1`]).to.deep.equal(["/ConfigMap/pair-unit/b1-kept: keepResources"]);
  });

  it("a set that does not become ready in its timeout is NotReady, named, and the others stay Ready", async function () {
    this.timeout(10 * 60_000);
    content = { ...content, unboundClaim: 2 };
    await up();
    const { states, messages } = await outputs();
    const key = `${clusters[0].name}/b5`;
    expect(states[key]).to.equal("NotReady");
    expect(messages[key]!.join("\n")).to.include("PersistentVolumeClaim pair-unit/never-bound is not ready after the timeout of 2s");
    expect(
      Object.entries(states)
        .filter(([k]) => k !== key)
        .every(([, s]) => s === "Ready"),
    ).to.equal(true);
    content = { ...content, unboundClaim: undefined };
    await up();
    expect((await outputs()).states[key]).to.equal("Ready");
    // Pruned: gone, or going once the claim's protection finalizer is removed.
    const claim = await kubeGet<{ metadata: { deletionTimestamp?: string } }>(clusters[0], `/api/v1/namespaces/${NS}/persistentvolumeclaims/never-bound`);
    expect(claim === undefined || !!claim.metadata.deletionTimestamp).to.equal(true);
  });
});
