/**
 * The real Pulumi engine (CLI + Kubernetes provider built by tools/), render mode: what `preview` and
 * `up` actually do with the example fleet. No mocks: these fail if the toolchain is missing.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { EngineEvent, Stack } from "@pulumi/pulumi/automation";
import { openStack } from "../../automation/engine/stack";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { localStack, withoutProdTarget } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

interface Step {
  op: string;
  urn: string;
  objects?: string[];
}

/** Runs a preview and returns every step the engine planned (op and URN), sorted. */
async function previewSteps(stack: Stack): Promise<Step[]> {
  const steps: Step[] = [];
  await stack.preview({
    onEvent: (e: EngineEvent) => {
      const m = e.resourcePreEvent?.metadata;
      if (m)
        steps.push({
          op: m.op,
          urn: m.urn,
          objects: [...new Set(Object.keys(m.detailedDiff ?? {}).flatMap((p) => /^objects\["([^"]+)"\]/.exec(p)?.[1] ?? []))],
        });
    },
  });
  return steps.sort((a, b) => (a.urn < b.urn ? -1 : 1));
}

const renderedFiles = (dir: string) =>
  (fs.existsSync(dir) ? (fs.readdirSync(dir, { recursive: true }) as string[]) : [])
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => f.split(path.sep).join("/"))
    .sort();
const timings: Record<string, number> = {};
async function timed<T>(label: string, f: () => Promise<T>): Promise<T> {
  const t = Date.now();
  try {
    return await f();
  } finally {
    timings[label] = Date.now() - t;
  }
}

describe("real engine, render mode (e2e)", function () {
  this.timeout(10 * 60_000);
  const work = tempDir("pf-e2e-");
  const renderDir = path.join(work, "render");
  const cacheRoot = path.join(work, "git-cache");
  const open = (config: StackConfig) =>
    openStack({
      stack: "e2e",
      stateDir: path.join(work, "state"),
      stackConfigDir: path.join(work, "stacks"),
      config,
      deploy: { cacheRoot },
      env: { PULUMI_CONFIG_PASSPHRASE: "e2e" },
    });
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });

  // The toolchain first, once: a missing or broken engine fails here, with the build's output, not as five confusing failures.
  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
  });

  after(() => {
    console.log(`      e2e step wall times (ms): ${JSON.stringify(timings)}`);
  });

  it("1. up deploys the example fleet: rendered manifests per cluster", async () => {
    const stack = await open(localStack(renderDir));
    const result = await timed("up (create)", () => stack.up());
    expect(result.summary.result).to.equal("succeeded");
    for (const cluster of ["dev-1", "dev-2", "prod-1"]) {
      expect(renderedFiles(path.join(renderDir, cluster)), cluster).to.include.members([
        "1-manifest/apps~v1_Deployment_simple_hello.yaml",
        "1-manifest/v1_ConfigMap_simple_app-config.yaml",
        "1-manifest/v1_ConfigMap_helm-app_helm-app-settings.yaml",
        "1-manifest/v1_Namespace__simple.yaml",
      ]);
    }
    expect(renderedFiles(path.join(renderDir, "prod-1"))).to.include("1-manifest/v1_ConfigMap_kustomize-prod_kustomized.yaml");
    expect(renderedFiles(path.join(renderDir, "dev-1"))).to.include("1-manifest/v1_ConfigMap_kustomize-dev_kustomized.yaml");
    const helm = fs.readFileSync(path.join(renderDir, "prod-1/1-manifest/v1_ConfigMap_helm-app_helm-app-settings.yaml"), "utf8");
    expect(helm).to.contain("cluster: prod-1").and.contain("memory: 512Mi").and.contain("fleet.cattle.io/bundle-name: examples-helm");
    const outputs = await stack.outputs();
    expect(outputs.summary.value.gitRepos.examples.clusters).to.deep.equal(["dev-1", "dev-2", "prod-1"]);
  });

  it("2. a second up changes nothing", async () => {
    const stack = await open(localStack(renderDir));
    const result = await timed("up (no-op, expectNoChanges)", () => stack.up({ expectNoChanges: true }));
    expect(result.summary.resourceChanges).to.not.have.any.keys("create", "update", "delete", "replace");
  });

  it("3. removing a target: the preview deletes exactly the dropped cluster's objects, and up removes them", async () => {
    const stack = await open(withoutProdTarget(localStack(renderDir)));
    const steps = await timed("preview (target removed)", () => previewSteps(stack));
    const isContent = (s: Step) => s.urn.includes("pulumi-fleet:index:BundleContent::");
    const changed = steps.filter((s) => s.op !== "same" && s.op !== "read" && !isContent(s));
    // The renders only prod-1's pairs named leave the state with them (each of its three differs from dev's);
    // nothing on a cluster.
    expect(steps.filter((s) => isContent(s) && s.op !== "same").map((s) => s.op)).to.deep.equal(["delete", "delete", "delete"]);
    // The three BundleDeployments (each deletes its objects); the namespaces only they needed leave
    // prod-1's setup, which keeps them on the cluster (no bundle set deleteNamespace).
    expect(changed.map((s) => [s.op, s.urn.split("::").pop(), s.objects ?? []]).sort()).to.deep.equal([
      ["delete", "prod-1/examples/examples-helm", []],
      ["delete", "prod-1/examples/examples-kustomize", []],
      ["delete", "prod-1/examples/examples-simple", []],
      ["update", "prod-1", ["/Namespace//helm-app", "/Namespace//simple"]],
    ]);

    const before = renderedFiles(path.join(renderDir, "dev-1"));
    const result = await timed("up (prune)", () => stack.up());
    expect(result.summary.resourceChanges).to.not.have.any.keys("create", "replace");
    const prod = renderedFiles(path.join(renderDir, "prod-1")).filter((f) => !f.includes("fleet-agent") && !f.includes("cattle-fleet-system"));
    // Objects gone in the same update; the namespaces stay (retained: no bundle set deleteNamespace); the agent stays.
    expect(prod).to.deep.equal(["1-manifest/v1_Namespace__helm-app.yaml", "1-manifest/v1_Namespace__simple.yaml"]);
    expect(renderedFiles(path.join(renderDir, "dev-1"))).to.deep.equal(before);
  });

  const agentImage = (cluster: string) =>
    /image: (\S+)/.exec(fs.readFileSync(path.join(renderDir, cluster, "1-manifest/apps~v1_Deployment_cattle-fleet-system_fleet-agent.yaml"), "utf8"))![1];
  const pruned = () => withoutProdTarget(localStack(renderDir));
  const withAgent = (c: StackConfig, global: Record<string, unknown>, perCluster: Record<string, Record<string, unknown>> = {}) => ({
    ...c,
    agent: { ...c.agent, ...global },
    clusters: c.clusters.map((cl) => (perCluster[cl.name] ? { ...cl, agent: perCluster[cl.name] } : cl)),
  });

  let lastApplied: StackConfig | undefined;
  const AGENT_SETTINGS = { env: { LOG_LEVEL: "info" }, resources: { requests: { cpu: "0.5" } } };

  it("4. agent config unchanged but reached from another source: no changes", async () => {
    await (await open(withAgent(pruned(), AGENT_SETTINGS))).up();
    const other = withAgent(
      pruned(),
      {},
      Object.fromEntries(["dev-1", "dev-2", "prod-1"].map((n) => [n, { env: { LOG_LEVEL: "info" }, resources: { requests: { cpu: "500m" } } }])),
    );
    const stack = await open(other);
    const steps = await timed("preview (agent config from another source)", () => previewSteps(stack));
    expect(steps.filter((s) => s.op !== "same" && s.op !== "read")).to.deep.equal([]);
    await stack.up({ expectNoChanges: true });
  });

  it("5. platform version bump: non-pinned agents update in place, the pinned one does not move", async () => {
    const base = withAgent(pruned(), AGENT_SETTINGS, { "prod-1": { imageTag: "v0.13.1" } });
    await (await open(base)).up({ expectNoChanges: true }); // pinning the running tag changes nothing
    const bumped = await open({ ...base, fleetVersion: "0.13.2" });
    const steps = (await timed("preview (version bump)", () => previewSteps(bumped))).filter((s) => s.op !== "same" && s.op !== "read");
    // Each cluster's setup (its namespaces and agent) changes one object: the agent's Deployment.
    expect(steps.map((s) => [s.op, s.urn.split("::").pop(), s.objects])).to.deep.equal([
      ["update", "dev-1", ["apps/Deployment/cattle-fleet-system/fleet-agent"]],
      ["update", "dev-2", ["apps/Deployment/cattle-fleet-system/fleet-agent"]],
    ]);
    await timed("up (version bump)", () => bumped.up());
    lastApplied = { ...base, fleetVersion: "0.13.2" };
    expect(["dev-1", "dev-2", "prod-1"].map(agentImage)).to.deep.equal([
      "rancher/fleet-agent:v0.13.2",
      "rancher/fleet-agent:v0.13.2",
      "rancher/fleet-agent:v0.13.1",
    ]);
  });

  it("the allowEmpty guard reads the stack's own last outputs through the engine and stops a wipe", async () => {
    const config = withoutProdTarget(localStack(renderDir));
    const typo = { ...config, gitRepos: config.gitRepos.map((r) => ({ ...r, targets: [{ name: "dev", clusterGroup: "dve" }] })) };
    const before = renderedFiles(renderDir);
    const err = await (await open(typo)).up().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(String(err?.message)).to.contain("gitRepo examples: targets: matched 2 cluster(s) in the last deployment (dev-1, dev-2) and matches none now");
    expect(renderedFiles(renderDir)).to.deep.equal(before);
  });

  it("6. a source that cannot be read fails the update and deletes nothing", async () => {
    const config = lastApplied!;
    const broken = { ...config, gitRepos: config.gitRepos.map((r) => ({ ...r, repo: "file:///nonexistent/fleet-repo.git" })) };
    const before = renderedFiles(renderDir);
    const stack = await open(broken);
    const err = await timed("up (unreadable source)", () =>
      stack.up().then(
        () => undefined,
        (e: Error) => e,
      ),
    );
    expect(err, "the update must fail").to.be.instanceOf(Error);
    expect(String(err!.message)).to.contain("gitRepo examples");
    expect(renderedFiles(renderDir)).to.deep.equal(before);
    const noop = await open(config);
    await noop.preview({ expectNoChanges: true });

    const unknownBranch = {
      ...config,
      gitRepos: config.gitRepos.map((r) => ({ ...r, repo: `file://${path.resolve(__dirname, "../..")}`, branch: "no-such-branch" })),
    };
    const err2 = await (await open(unknownBranch)).up().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(String(err2?.message)).to.match(/gitRepo examples.*no-such-branch|no-such-branch.*gitRepo examples/s);
    expect(renderedFiles(renderDir)).to.deep.equal(before);
  });
});
