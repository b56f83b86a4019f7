/**
 * Upgrades on live clusters, from two earlier layouts of the state, without a create, delete or
 * replace of any Kubernetes object:
 * - 84ad92a, the version before the renderer: helm and kustomize bundles were the Kubernetes provider's
 *   `helm.sh/v4:Chart` and `kustomize/v2:Directory` components, their children named by the provider;
 * - b501f27, the last version with one engine resource per Kubernetes object under a BundleDeployment
 *   component.
 * Now each (bundle, cluster) pair is one BundleDeployment resource of pulumi-fleet's provider, which
 * adopts those objects, and each cluster's agent and namespaces (the Kubernetes provider's resources in
 * all three) are one ClusterSetup resource of the same provider, which adopts theirs; the state's
 * migration (core/migrate) leaves the old resources state-only, so the upgrade needs no Kubernetes provider. For each, the previous version's own code (a `git archive` of it, run in a
 * child process) deploys the example fleet, this version's preview says what the move does, this
 * version's operations library runs `up` on the same stack and state, and every object's UID and
 * resourceVersion is read back from the API servers.
 *
 * The previous versions imported fast-json-patch and picomatch, which this version no longer does: they
 * are dev dependencies of this project only for this test (the old tree's node_modules links to ours).
 */
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { EngineEvent } from "@pulumi/pulumi/automation";
import { kubeList, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { openStack } from "../../automation/engine/stack";
import { ensureKubernetesProvider, needsKubernetesProvider, toolchain } from "../../automation/engine/toolchain";
import { planMigration } from "../../core/migrate/migrate";
import { ExportedState } from "../../core/migrate/state-shape";
import { StackConfig } from "../../core/config/stack";
import { loadStackFile } from "../../core/plan/pipeline";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { tempDir } from "../support/git-fixtures";
import { liveClusters, LIVE_CLUSTER_NAMES } from "../support/live-clusters";
import { eventually } from "../support/eventually";

/** The earlier layouts: the last commit before the renderer (06a781a), and the last with one resource per object. */
const PREVIOUS = [
  // Objects this version renders differently since then (labels and annotations added later) are updated in place.
  { commit: "84ad92a679936220e0df96e84c6c13ae8881a735", layout: "helm and kustomize as the Kubernetes provider's components", updates: true },
  // The same objects: nothing on a cluster is written.
  { commit: "b501f27832f3fe26cb266ef978488123f5840481", layout: "one engine resource per Kubernetes object", updates: false },
  // One BundleDeployment per pair, named "<cluster>/<bundle>" before bundles were keyed by GitRepo (issue 41): renamed in the state by the migration.
  { commit: "c93238e68450a4a2884bea121b9c223c22c51cb1", layout: "one BundleDeployment per pair, named without its GitRepo", updates: false, pairs: true },
];
const STACK = "upgrade";
const PASSPHRASE = "upgrade";
const BUNDLES = "fleet.cattle.io/repo-name=examples";
const AGENT = "app=fleet-agent";
/** The namespaces the clusters create for bundles (and the agent's). */
const MANAGED = "app.kubernetes.io/managed-by=pulumi-fleet";

/** What is read back from a cluster: [list path, label selector, kind]. */
const LISTS: [string, string | undefined, string][] = [
  ["/api/v1/namespaces", MANAGED, "Namespace"],
  ["/api/v1/configmaps", BUNDLES, "ConfigMap"],
  ["/api/v1/services", BUNDLES, "Service"],
  ["/apis/apps/v1/deployments", BUNDLES, "Deployment"],
  ["/api/v1/serviceaccounts", AGENT, "ServiceAccount"],
  ["/api/v1/secrets", AGENT, "Secret"],
  ["/apis/rbac.authorization.k8s.io/v1/clusterroles", AGENT, "ClusterRole"],
  ["/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", AGENT, "ClusterRoleBinding"],
  ["/apis/apps/v1/deployments", AGENT, "Deployment"],
];

interface LiveObject {
  id: string;
  uid: string;
  resourceVersion: string;
  selector?: string;
}

/** Every example-bundle and agent object on a cluster, and the namespaces of both, sorted. */
async function clusterObjects(c: LocalCluster): Promise<LiveObject[]> {
  const lists = await Promise.all(LISTS.map(async ([p, selector, kind]) => (await kubeList(c, p, selector)).map((o: any) => ({ kind, o, selector }))));
  const byId = new Map<string, LiveObject>();
  for (const { kind, o, selector } of lists.flat()) {
    const id = `${c.name} ${kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`;
    byId.set(id, { id, uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion, selector });
  }
  return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
}

const isNamespace = (o: LiveObject) => o.id.split(" ")[1] === "Namespace";

/** The agent pods (not reconciled by the engine, so compared by UID and restarts only). */
async function agentPods(c: LocalCluster): Promise<string[]> {
  const pods = await kubeList(c, "/api/v1/namespaces/cattle-fleet-system/pods", AGENT);
  return pods
    .map(
      (p: any) =>
        `${c.name} ${p.metadata.name} ${p.metadata.uid} restarts=${(p.status.containerStatuses ?? []).reduce((n: number, s: any) => n + s.restartCount, 0)}${p.metadata.deletionTimestamp ? " terminating" : ""}`,
    )
    .sort();
}

interface StateResource {
  urn: string;
  type: string;
  custom: boolean;
  uid?: string;
  inventory?: string[];
}

/** The Kubernetes objects a state holds: URN, type and the UID the provider recorded (a BundleDeployment: its inventory's). */
function stateResources(deployment: any): StateResource[] {
  return (deployment?.resources ?? []).map((r: any) => ({
    urn: r.urn,
    type: r.type,
    custom: !!r.custom,
    uid: r.outputs?.metadata?.uid,
    ...(Array.isArray(r.outputs?.inventory) ? { inventory: r.outputs.inventory.map((i: { uid: string }) => i.uid) } : {}),
  }));
}

/** The objects of a state's BundleDeployment resources, as their inventories list them. */
function oldPairObjects(state: StateResource[]): { uid: string }[] {
  return state.filter((r) => r.type === "pulumi-fleet:index:BundleDeployment" && r.custom).flatMap((r) => (r.inventory ?? []).map((uid) => ({ uid })));
}

/** An earlier version's agent and namespace resources (the Kubernetes provider's, under the Agent and Cluster components). */
function oldSetupResources(state: StateResource[]): StateResource[] {
  return state.filter(
    (r) =>
      r.custom &&
      r.type.startsWith("kubernetes:") &&
      (r.urn.includes("pulumi-fleet:index:Agent$") || /pulumi-fleet:index:Cluster\$kubernetes:core\/v1:Namespace::/.test(r.urn)),
  );
}

/**
 * A PULUMI_HOME holding the toolchain's plugins but the Kubernetes provider's: a directory per plugin
 * (the CLI lists directories, not links to them) whose files are links; nothing copied.
 */
function homeWithoutKubernetesProvider(work: string): string {
  const home = path.join(work, "home-without-kubernetes");
  const plugins = path.join(toolchain().env.PULUMI_HOME, "plugins");
  fs.rmSync(home, { recursive: true, force: true });
  fs.mkdirSync(path.join(home, "plugins"), { recursive: true });
  for (const entry of fs.readdirSync(plugins, { withFileTypes: true })) {
    if (entry.name.startsWith("resource-kubernetes-")) continue;
    const [from, to] = [path.join(plugins, entry.name), path.join(home, "plugins", entry.name)];
    if (!entry.isDirectory()) {
      fs.copyFileSync(from, to); // a .lastused stamp the CLI rewrites
      continue;
    }
    fs.mkdirSync(to);
    for (const file of fs.readdirSync(from)) fs.symlinkSync(path.join(from, file), path.join(to, file));
  }
  return home;
}

/** One step per resource of an update, from the engine's events. */
interface EngineStep {
  op: string;
  urn: string;
  type: string;
  oldUrn?: string;
  diffs: string[];
}

const name = (urn: string) => urn.split("::").pop()!;

/** Runs a command, its output appended to a log file; rejects with the log's tail on failure. */
function run(cmd: string, args: string[], cwd: string, log: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(log, "a");
    const child = spawn(cmd, args, { cwd, stdio: ["ignore", out, out], env: process.env });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      fs.closeSync(out);
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.join(" ")} failed (${signal ?? `exit ${code}`}); end of ${log}:\n${fs.readFileSync(log, "utf8").slice(-4000)}`));
    });
  });
}

/** Runs in the previous version's tree: its own operations library, `up` of the given stack. */
const OLD_UP_SCRIPT = `
import * as fs from "node:fs";
import * as ops from "./automation/operations";
const [optionsFile, resultFile] = process.argv.slice(2);
const options = JSON.parse(fs.readFileSync(optionsFile, "utf8"));
ops.up({ ...options, onOutput: (t: string) => process.stdout.write(t) })
  .then((r) => fs.writeFileSync(resultFile, JSON.stringify({ changes: r.changes, events: r.events })))
  .catch((e) => { console.error(e); process.exit(1); });
`;

for (const previous of PREVIOUS) upgradeFrom(previous.commit, previous.layout, previous.updates, previous.pairs ?? false);

/**
 * `updates`: objects the previous version rendered differently may be updated in place (never created,
 * deleted or replaced). `pairs`: the previous version had BundleDeployment resources already.
 */
function upgradeFrom(commit: string, layout: string, updates: boolean, pairs: boolean): void {
  describe(`upgrade from ${commit.slice(0, 7)} (${layout}) on live clusters: no object recreated${updates ? "" : " or written"}`, function () {
    this.timeout(20 * 60_000);
    const figures: Record<string, string> = {};
    let clusters: LocalCluster[];
    const work = tempDir("pf-upgrade-");
    const oldTree = path.join(work, "previous");
    const log = path.join(work, "previous-up.log");
    let config: StackConfig;
    const options = (extra: Partial<ops.OperationOptions> = {}): ops.OperationOptions => ({
      stack: STACK,
      stateDir: path.join(work, "state"),
      stackConfigDir: path.join(work, "stacks"),
      config,
      deploy: { cacheRoot: path.join(work, "git-cache") },
      env: { PULUMI_CONFIG_PASSPHRASE: PASSPHRASE },
      ...extra,
    });
    const exportState = async () => (await (await openStack(options())).exportStack()).deployment;

    let oldState: StateResource[];
    let objectsBefore: LiveObject[];
    let podsBefore: string[];
    let steps: EngineStep[];
    let deployed = false;
    /** What was on the clusters before this test: left there. */
    let foundBefore = new Set<string>();

    before(async function () {
      this.timeout(60 * 60_000);
      const git = (...args: string[]) => execFileSync("git", ["-C", PROJECT_DIR, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
      // No skip: without the previous version there is no proof.
      const shallow = (() => {
        try {
          return git("rev-parse", "--is-shallow-repository");
        } catch (e) {
          return `not a git repository (${(e as Error).message.split("\n")[0]})`;
        }
      })();
      const hasCommit = (() => {
        try {
          git("cat-file", "-e", `${commit}^{commit}`);
          return true;
        } catch {
          return false;
        }
      })();
      if (!hasCommit) {
        throw new Error(
          `the upgrade test needs commit ${commit} (${layout}) in ${PROJECT_DIR}, ` +
            `and it is missing (shallow clone: ${shallow}). Fetch the full history: git fetch --unshallow (or git fetch origin ${commit}).`,
        );
      }
      toolchain();
      // The previous version registers Kubernetes provider resources; this version builds that provider
      // only when an operation reads such a state, and the previous version never asks: built here (once
      // per cache, minutes on a new machine, within this hook's hour), as an operation builds it: the event
      // loop keeps serving meanwhile (a blocking build once let a queued request write into a closed socket).
      await ensureKubernetesProvider(STACK);
      clusters = liveClusters().clusters;
      expect(clusters.map((c) => c.name)).to.deep.equal(LIVE_CLUSTER_NAMES);

      // The previous version's tree, with links to our node_modules: the same pins (fast-json-patch and
      // picomatch are dev dependencies only for this), checked below.
      fs.mkdirSync(oldTree);
      const tar = path.join(work, "previous.tar");
      git("archive", "--format=tar", "-o", tar, commit);
      execFileSync("tar", ["-xf", tar, "-C", oldTree]);
      fs.rmSync(tar);
      const modules = path.join(PROJECT_DIR, "node_modules");
      fs.mkdirSync(path.join(oldTree, "node_modules"));
      for (const entry of fs.readdirSync(modules)) fs.symlinkSync(path.join(modules, entry), path.join(oldTree, "node_modules", entry));
      const oldPackage = JSON.parse(fs.readFileSync(path.join(oldTree, "package.json"), "utf8"));
      for (const [dep, version] of Object.entries({ ...oldPackage.dependencies, ...oldPackage.devDependencies })) {
        const installed = path.join(modules, dep, "package.json");
        expect(fs.existsSync(installed), `${dep}, a dependency of ${commit.slice(0, 7)}, is not installed (npm ci)`).to.equal(true);
        expect(JSON.parse(fs.readFileSync(installed, "utf8")).version, `${dep} version`).to.equal(version);
      }
      // The same engine: both versions pin the same CLI, language host and Kubernetes provider.
      for (const f of ["tools/pulumi/go.mod", "tools/kubernetes/go.mod", "tools/language-nodejs/go.mod"]) {
        expect(fs.readFileSync(path.join(oldTree, f), "utf8"), f).to.equal(fs.readFileSync(path.join(PROJECT_DIR, f), "utf8"));
      }

      // The example fleet (helm, kustomize, raw YAML) of the local stack, on the live clusters.
      const { renderDir: _render, ...local } = loadStackFile("local", PROJECT_DIR);
      config = {
        ...local,
        clusters: local.clusters.map((c, i) => {
          const kubeconfig = fs.readFileSync(clusters[i].kubeconfig, "utf8");
          // 84ad92a gave the agent its cluster's kubeconfig server and CA; later versions give it the
          // configured management endpoint. Setting each cluster's own agent values to what it ran with (the
          // documented migration) keeps the agents' effective config, so none restarts.
          const route = YAML.parse(kubeconfig).clusters[0].cluster;
          const agent = { apiServerURL: route.server, apiServerCA: Buffer.from(route["certificate-authority-data"], "base64").toString("utf8") };
          return { ...c, name: clusters[i].name, kubeconfig, agent };
        }),
      };
      // Another live test's example-fleet or agent objects would be adopted, then deleted, by this stack:
      // every live test removes its stack when it ends. Namespaces may be there: a destroy keeps a
      // bundle's namespace unless the bundle sets deleteNamespace.
      const found = (await Promise.all(clusters.map(clusterObjects))).flat();
      const collide = (o: LiveObject) => !isNamespace(o) && (o.selector === BUNDLES || /( cattle-fleet-system\/| fleet-agent-cattle-fleet-system$)/.test(o.id));
      expect(
        found.filter(collide).map((o) => o.id),
        "objects of the example fleet left by another test",
      ).to.deep.equal([]);
      foundBefore = new Set(found.map((o) => o.id));
      fs.mkdirSync(path.join(work, "stacks"));
    });

    after(async function () {
      this.timeout(10 * 60_000);
      try {
        // Leave the clusters as the other live tests expect them: nothing of this stack.
        if (deployed) {
          const t = Date.now();
          await ops.destroy(options());
          // The namespaces a destroy keeps (see above) are removed too, unless they were there before.
          for (const c of clusters) {
            for (const o of await clusterObjects(c)) {
              if (isNamespace(o) && !foundBefore.has(o.id)) await kubeRequest(c, "DELETE", `/api/v1/namespaces/${o.id.split(" ").pop()}`);
            }
            await eventually(
              `${c.name}: the stack's objects gone`,
              () => clusterObjects(c),
              (xs) => xs.every((o) => foundBefore.has(o.id)),
            );
          }
          figures["destroy and namespaces gone"] = `${Date.now() - t} ms`;
        }
      } finally {
        console.log(`      upgrade figures: ${JSON.stringify(figures)}`);
        fs.rmSync(work, { recursive: true, force: true });
      }
    });

    it("the previous version deploys the example fleet, one engine resource per Kubernetes object", async () => {
      fs.writeFileSync(path.join(oldTree, "upgrade-old-up.ts"), OLD_UP_SCRIPT);
      const optionsFile = path.join(work, "previous-options.json");
      fs.writeFileSync(optionsFile, JSON.stringify(options()));
      const resultFile = path.join(work, "previous-result.json");
      const t = Date.now();
      deployed = true;
      await run(process.execPath, [path.join(oldTree, "scripts/run-ts.js"), "upgrade-old-up.ts", optionsFile, resultFile], oldTree, log);
      figures["previous version: up (create)"] = `${Date.now() - t} ms`;
      const result = JSON.parse(fs.readFileSync(resultFile, "utf8"));
      expect(result.events.filter((e: any) => e.event === "deployed")).to.have.length(9);

      oldState = stateResources(await exportState());
      const objects = pairs ? oldPairObjects(oldState) : oldState.filter((r) => r.custom && r.uid && r.urn.includes("pulumi-fleet:index:BundleDeployment$"));
      expect(objects.length, pairs ? "objects in the BundleDeployments' inventories" : "per-object resources under the BundleDeployments").to.be.greaterThan(9);
      objectsBefore = (await Promise.all(clusters.map(clusterObjects))).flat();
      podsBefore = (
        await Promise.all(
          clusters.map((c) =>
            eventually(
              `${c.name}: agent pod running`,
              () => agentPods(c),
              (p) => p.length === 1,
            ),
          ),
        )
      ).flat();
      for (const r of objects)
        expect(
          objectsBefore.map((o) => o.uid),
          `${"urn" in r ? name(r.urn) : r.uid} on its cluster`,
        ).to.include(r.uid);
    });

    it("this version's preview says the next up moves those resources into BundleDeployments and changes nothing on the clusters", async () => {
      expect(oldState, "the previous version's up ran").to.not.equal(undefined);
      const warnings: string[] = [];
      const p = await ops.preview(options({ onWarning: (m) => warnings.push(m) }));
      const moved = oldState.filter((r) => r.custom && r.urn.includes("pulumi-fleet:index:BundleDeployment$")).length;
      const setups = oldSetupResources(oldState).length;
      expect(setups, "the agents' and namespaces' resources").to.be.greaterThan(3 * 7);
      const clusterMove = `the ${setups} resource(s) of the clusters' agents and namespaces into one ClusterSetup per cluster, in the state only`;
      if (pairs) {
        expect(moved).to.equal(0);
        expect(warnings.join("\n")).to.include(`the next \`up\` moves ${clusterMove}`);
      } else {
        expect(warnings.join("\n")).to.include(
          `the next \`up\` moves those ${moved} resource(s) into one BundleDeployment per bundle and cluster, and ${clusterMove}`,
        );
      }
      expect(p.summaryMarkdown).to.include("in the state only");
      const touched = [...p.groups.deployments.values(), ...p.groups.agents.values()]
        .filter((d) => d.created + (updates ? 0 : d.updated) + d.replaced + d.deleted > 0)
        .map((d) => ("key" in d ? d.key : `agent on ${d.cluster}`));
      expect(touched, "objects the preview says it creates, deletes or replaces (or updates)").to.deep.equal([]);
      expect(p.prunes).to.deep.equal([]);
    });

    it(`this version's up on the same stack: no Kubernetes object created, deleted, replaced${updates ? "" : " or written"}; UIDs and agent pods unchanged`, async () => {
      expect(oldState, "the previous version's up ran").to.not.equal(undefined);
      const byUrn = new Map<string, EngineStep>();
      const onEvent = (e: EngineEvent) => {
        const m = e.resourcePreEvent?.metadata ?? e.resOutputsEvent?.metadata;
        if (m)
          byUrn.set(`${m.op} ${m.urn}`, {
            op: m.op,
            urn: m.urn,
            type: m.type,
            oldUrn: m.old?.urn !== m.urn ? m.old?.urn : undefined,
            diffs: [...(m.diffs ?? [])],
          });
      };
      const t = Date.now();
      // The migration of this real state (core/migrate) leaves the engine no Kubernetes provider or custom resource of it.
      const migrated = planMigration((await (await openStack(options())).exportStack()) as unknown as ExportedState, {
        configured: new Set(clusters.map((c) => c.name)),
      });
      expect(migrated.from).to.equal(pairs ? 3 : updates ? 1 : 2);
      expect(needsKubernetesProvider(migrated.state.deployment?.resources ?? []), "the migrated state needs the Kubernetes provider").to.equal(false);
      // ...and the engine proves it: this up runs with a plugin cache that lacks the Kubernetes provider (plugin download is off).
      const r = await ops.up(options({ onEvent, env: { PULUMI_CONFIG_PASSPHRASE: PASSPHRASE, PULUMI_HOME: homeWithoutKubernetesProvider(work) } }));
      figures["this version: up (upgrade)"] = `${Date.now() - t} ms`;
      figures["upgrade: engine changes"] = JSON.stringify(r.changes);
      steps = [...byUrn.values()];
      // The per-object resources leave the state only (they were marked retained first); the pairs adopt their objects.
      const touched = [...r.groups.deployments.values(), ...r.groups.agents.values()]
        .filter((d) => d.created + (updates ? 0 : d.updated) + d.replaced + d.deleted > 0)
        .map((d) => ("key" in d ? d.key : `agent on ${d.cluster}`));
      expect(touched, "objects the update reports it created, deleted or replaced (or updated)").to.deep.equal([]);
      figures["upgrade: objects updated in place"] = String([...r.groups.deployments.values()].reduce((n, d) => n + d.updated, 0));
      expect(
        r.events.filter((e) => e.event === "pruned"),
        "no bundle pruned",
      ).to.deep.equal([]);
      const pairSteps = steps.filter((s) => s.type === "pulumi-fleet:index:BundleDeployment" && s.op !== "same");
      figures["upgrade: BundleDeployment steps"] = JSON.stringify([...new Set(pairSteps.map((s) => s.op))]);

      // The state: one BundleDeployment resource per pair, whose inventory holds exactly the objects the per-object resources had.
      const exported = await exportState();
      const bundleDeployments = (exported.resources ?? []).filter((x: any) => x.type === "pulumi-fleet:index:BundleDeployment");
      expect(bundleDeployments).to.have.length(9);
      expect(bundleDeployments.every((x: any) => x.custom && x.outputs.state === "Ready")).to.equal(true);
      const inventoryUids = bundleDeployments.flatMap((x: any) => x.outputs.inventory.map((i: any) => i.uid)).sort();
      const oldUids = (pairs ? oldPairObjects(oldState) : oldState.filter((x) => x.custom && x.uid && x.urn.includes("pulumi-fleet:index:BundleDeployment$")))
        .map((x) => x.uid!)
        .sort();
      if (pairs) {
        // Renamed in the state by the migration (core/migrate/renames.ts), not by an alias of the engine's update: each
        // BundleDeployment keeps its inputs and objects, under "<cluster>/<gitRepo>/<bundle>".
        expect(
          steps.filter((s) => s.type === "pulumi-fleet:index:BundleDeployment" && s.oldUrn),
          "BundleDeployments the update renamed by alias",
        ).to.deep.equal([]);
        expect(
          pairSteps.map((s) => s.op),
          JSON.stringify(pairSteps),
        ).to.not.include.members(["create", "delete", "replace", "create-replacement", "delete-replaced"]);
        expect(bundleDeployments.map((x: any) => name(x.urn)).sort()).to.deep.equal(
          oldState
            .filter((x) => x.type === "pulumi-fleet:index:BundleDeployment")
            .map((x) => {
              const [cluster, bundle] = name(x.urn).split("/");
              return `${cluster}/examples/${bundle}`;
            })
            .sort(),
        );
      }
      expect(inventoryUids).to.deep.equal(oldUids);
      expect(
        (exported.resources ?? []).filter((x: any) => x.type.startsWith("kubernetes:") || x.type === "pulumi:providers:kubernetes"),
        "per-object resources or Kubernetes providers left",
      ).to.deep.equal([]);
      // Each cluster's agent and namespaces: one ClusterSetup, whose inventory holds the objects the old resources had.
      const setupsAfter = (exported.resources ?? []).filter((x: any) => x.type === "pulumi-fleet:index:ClusterSetup");
      expect(setupsAfter.map((x: any) => [name(x.urn), x.outputs.state]).sort()).to.deep.equal(clusters.map((c) => [c.name, "Ready"]));
      expect(setupsAfter.flatMap((x: any) => x.outputs.inventory.map((i: any) => i.uid)).sort()).to.deep.equal(
        oldSetupResources(oldState)
          .map((x) => x.uid)
          .sort(),
      );

      // Read back from the API servers: the same objects with the same UIDs, none written; the agent pods untouched.
      const objectsAfter = (await Promise.all(clusters.map(clusterObjects))).flat();
      expect(objectsAfter.map((o) => `${o.id} ${o.uid}`)).to.deep.equal(objectsBefore.map((o) => `${o.id} ${o.uid}`));
      const rvChanged = objectsAfter.filter((o, i) => o.resourceVersion !== objectsBefore[i].resourceVersion).map((o) => o.id);
      figures["upgrade: objects with a new resourceVersion"] = JSON.stringify(rvChanged);
      // A Deployment's status is the controller's to write.
      if (!updates)
        expect(
          rvChanged.filter((id) => id.split(" ")[1] !== "Deployment"),
          "objects written",
        ).to.deep.equal([]);
      expect((await Promise.all(clusters.map(agentPods))).flat()).to.deep.equal(podsBefore);
    });

    it("after the upgrade, a preview shows no changes", async () => {
      expect(steps, "the upgrade ran").to.not.equal(undefined);
      const p = await ops.preview(options({ expectNoChanges: true }));
      expect(
        Object.keys(p.changes).filter((k) => k !== "same" && k !== "read"),
        JSON.stringify(p.changes),
      ).to.deep.equal([]);
      figures["preview after the upgrade"] = JSON.stringify(p.changes);
    });
  });
}
