/**
 * Every registration (URN, type, parent, provider, inputs, dependencies, lifecycle options), warning and
 * output of a set of fleets that exercise every option that changes what is registered, under Pulumi
 * mocks. Run it before and after a change to the program's structure and diff the two files: a
 * refactoring that moves decisions between layers must register exactly the same thing.
 *
 *   node scripts/run-ts.js test/support/capture-registrations.ts OUT.json [--kubeconfig FILE]
 *
 * With --kubeconfig (a live cluster, for example from `npm run clusters -- up --count 1`), the fleets
 * are also registered against it as the e2e fleets are (providers with kubeconfigs, the takeOwnership
 * read, serviceAccount impersonation); without it, in render mode only. Repositories are plain
 * directories at fixed paths, so two runs see identical commits and deploymentIds.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { fleetProgram } from "../../components/program";
import { StackConfig } from "../../core/config/stack";
import { localStack } from "./fleet-fixtures";
import { gitRepoConfig } from "./git-fixtures";
import { runUnderMocks } from "./mock-engine";

const ROOT = "/tmp/pf-capture";
const RENDER = path.join(ROOT, "render");
const cacheRoot = path.join(ROOT, "cache");
const CAPTURED_AT = new Date("2026-01-01T00:00:00Z");

const crd = (group: string, scope = "Namespaced") =>
  `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.${group}\n` +
  `spec:\n  group: ${group}\n  scope: ${scope}\n  names: {kind: Widget, plural: widgets}\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]\n`;
const cm = (name: string, ns?: string, extra = "") =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${ns ? `  namespace: ${ns}\n` : ""}${extra}data:\n  k: v\n`;

/** One repository with a bundle per option that changes registration. */
const FEATURES: Record<string, string> = {
  "raw/crd.yaml": crd("raw.example.com"),
  "raw/widget.yaml": "apiVersion: raw.example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec: {size: 1}\n",
  "raw/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: raw-own\n",
  "raw/in-own.yaml": cm("in-own", "raw-own"),
  "raw/elsewhere.yaml": cm("elsewhere", "other-ns"),
  "raw/kept.yaml": cm("kept", undefined, "  annotations: {helm.sh/resource-policy: keep}\n"),
  "raw/deploy.yaml":
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n" +
    "  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx}]}\n",
  "raw/fleet.yaml":
    "defaultNamespace: raw-ns\nnamespaceLabels: {team: a}\nnamespaceAnnotations: {note: x}\ndeleteNamespace: true\nforceSyncGeneration: 3\n" +
    "diff:\n  comparePatches:\n  - apiVersion: apps/v1\n    kind: Deployment\n    name: web\n    namespace: raw-ns\n    jsonPointers: [/spec/replicas]\n" +
    "correctDrift:\n  enabled: true\n",
  "keep/cm.yaml": cm("keep"),
  "keep/fleet.yaml": "keepResources: true\nserviceAccount: deployer\ndependsOn:\n  - name: features-raw\n",
  "asked/crd.yaml": crd("asked.example.com", "Cluster"),
  "asked/fleet.yaml": "deleteCRDResources: true\n",
  "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
  "chart/crds/crd.yaml": crd("chart.example.com"),
  "chart/templates/cm.yaml": cm("from-chart"),
  "chart/templates/hook.yaml":
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hook\n  annotations: {helm.sh/hook: post-install}\n" +
    "spec:\n  template:\n    spec: {restartPolicy: Never, containers: [{name: j, image: busybox}]}\n",
  "chart/fleet.yaml": "defaultNamespace: chart-ns\nhelm:\n  timeoutSeconds: 90\n  takeOwnership: true\n  values: {a: 1}\n",
  "kust/kustomization.yaml": "resources: [cm.yaml]\nnamespace: kust-ns\n",
  "kust/cm.yaml": cm("kustomized"),
};

function writeRepo(name: string, files: Record<string, string>): string {
  const dir = path.join(ROOT, "repos", name);
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

function featureFleet(kubeconfig?: string): StackConfig {
  const features = writeRepo("features", FEATURES);
  const paused = writeRepo("paused", { "app/cm.yaml": cm("paused") });
  const clusters = ["c1", "c2"].map((name) => ({
    name,
    labels: { env: name === "c1" ? "prod" : "dev" },
    annotations: {},
    templateValues: {},
    deleteUnreachable: name === "c2",
    ...(kubeconfig ? { kubeconfig } : {}),
    ...(name === "c2" ? { agent: { namespace: "agent-two", tolerations: [{ key: "k", operator: "Exists" }] } } : {}),
  }));
  return {
    file: "stacks/Pulumi.capture.yaml",
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com", priorityClass: { value: 1000 }, podDisruptionBudget: { maxUnavailable: 1 }, env: { X: "1" } },
    ...(kubeconfig ? {} : { renderDir: RENDER }),
    clusters,
    clusterGroups: [],
    gitRepos: [
      gitRepoConfig({ name: "features", repo: features, paths: ["raw", "keep", "asked", "chart", "kust"], targets: [{ clusterSelector: {} }] }),
      gitRepoConfig({ name: "paused", repo: paused, paths: ["app"], paused: true, keepResources: true, targets: [{ clusterName: "c1" }] }),
    ],
  };
}

interface Captured {
  registrations: unknown[];
  warnings: string[];
  outputs: unknown;
}

async function capture(config: StackConfig, options: Parameters<typeof fleetProgram>[1]): Promise<Captured> {
  const run = await runUnderMocks(async () => {
    // A fixed clock: two captures differ only where the registrations do (records carry deployedAt).
    const out = await fleetProgram(config, { cacheRoot, now: CAPTURED_AT, ...options });
    const deployments = await new Promise((resolve) => pulumi.output(out.deployments).apply(resolve));
    return { summary: out.summary, deployments };
  });
  return { registrations: run.registrations, warnings: [...run.warnings].sort(), outputs: run.result };
}

/** A second update's view of the first: every deploymentId unchanged, some clusters new to the stack. */
function previousOf(first: Captured, arrivedClusters: string[]) {
  const { summary, deployments } = first.outputs as {
    summary: { gitRepos: Record<string, { commit: string; clusters: string[] }>; agents: Record<string, unknown> };
    deployments: Record<string, { deploymentId: string }>;
  };
  return {
    gitRepos: Object.fromEntries(Object.entries(summary.gitRepos).map(([k, v]) => [k, { commit: v.commit, clusters: v.clusters }])),
    deploymentIds: Object.fromEntries(Object.entries(deployments).map(([k, v]) => [k, v.deploymentId])),
    clusters: Object.keys(summary.agents).filter((c) => !arrivedClusters.includes(c)),
  };
}

async function main(): Promise<void> {
  const [out, flag, kubeconfigFile] = process.argv.slice(2);
  if (!out || (flag && flag !== "--kubeconfig")) throw new Error("usage: capture-registrations.ts OUT.json [--kubeconfig FILE]");
  const result: Record<string, Captured> = {};
  const example = localStack(RENDER);
  result["example"] = await capture(example, { previous: null });
  result["example, second update, prod-1 arrived"] = await capture(example, { previous: previousOf(result["example"], ["prod-1"]) });
  result["features"] = await capture(featureFleet(), { previous: null });
  result["features, second update, c2 arrived"] = await capture(featureFleet(), { previous: previousOf(result["features"], ["c2"]), correctsDrift: true });
  if (kubeconfigFile) {
    const kubeconfig = fs.readFileSync(kubeconfigFile, "utf8");
    const live = (c: StackConfig): StackConfig => ({ ...c, renderDir: undefined, clusters: c.clusters.map((x) => ({ ...x, kubeconfig })) });
    result["example, live"] = await capture(live(example), { previous: null });
    result["features, live"] = await capture(featureFleet(kubeconfig), { previous: null });
    result["features, live, second update"] = await capture(featureFleet(kubeconfig), { previous: previousOf(result["features, live"], []) });
  }
  fs.writeFileSync(out, JSON.stringify(result, null, 1));
  const count = Object.values(result).reduce((n, c) => n + c.registrations.length, 0);
  console.log(`${Object.keys(result).length} fleets, ${count} registrations -> ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
