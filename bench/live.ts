/**
 * `npm run bench -- live [--runs 3]`: the real engine in direct mode against three local clusters
 * (automation/clusters/local-clusters.ts), measured from the API servers:
 *  - prune latency: 3 clusters x 10 bundles x 10 objects, one cluster dropped from the target; time
 *    from the update's start until its objects are gone (polled every 100 ms), and until `up` returns;
 *  - a 500-object bundle applied by `up` and the same 500 objects by `kubectl apply --server-side`
 *    (kubectl built from the control plane's own Kubernetes release) against the same API server;
 *    and the time helm.takeOwnership's read of those 500 objects takes (core/desired/ownership.ts);
 *  - agent churn: 20 no-op updates, then agent pod UIDs, restarts and replacements.
 * `--parts prune,apply,churn` picks parts. Writes bench/results/live.json.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { EngineEvent } from "@pulumi/pulumi/automation";
import { kubeList } from "../automation/clusters/kube-client";
import { clusterBinaries, LocalCluster, startLocalClusters, stopLocalClusters } from "../automation/clusters/local-clusters";
import * as ops from "../automation/operations";
import { toolchain } from "../automation/engine/toolchain";
import { readObjects } from "../core/desired/facts";
import { ClusterConfig, StackConfig } from "../core/config/stack";
import { arg, engineEnvArg, printTable, seconds, syntheticClusters, syntheticConfig, syntheticRepo, writeResult } from "./support";

const count = (c: LocalCluster, selector: string) => kubeList(c, "/api/v1/configmaps", selector).then((l) => l.length);

interface Ctx {
  clusters: LocalCluster[];
  kubeconfigs: ClusterConfig[];
  work: string;
  options: (config: StackConfig, stack: string) => ops.OperationOptions;
}

const SELECTOR = "fleet.cattle.io/repo-name=bench";

async function pruneLatency(ctx: Ctx, repo: string, runs: number) {
  const all = syntheticConfig(repo, ctx.kubeconfigs);
  const dropped = syntheticConfig(repo, ctx.kubeconfigs);
  dropped.gitRepos[0].targets = [
    { name: "all", clusterSelector: { matchLabels: { env: "bench" }, matchExpressions: [{ key: "shard", operator: "NotIn", values: ["2"] }] } },
  ];
  const rows = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await ops.up(ctx.options(all, "prune"));
    const deployS = seconds(performance.now() - t0);
    let goneAt: number | undefined;
    let polling = true;
    const poller = (async () => {
      while (polling && goneAt === undefined) {
        if ((await count(ctx.clusters[2], SELECTOR)) === 0) goneAt = performance.now();
        else await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const start = performance.now();
    // Where the time goes: when the engine starts the first delete, and when the last one is done.
    let firstDelete: number | undefined;
    let lastDeleteDone: number | undefined;
    // Per object delete: how long the step took, and how many ran at once (the engine's parallelism).
    const began = new Map<string, number>();
    const took: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const onEvent = (e: EngineEvent) => {
      const pre = e.resourcePreEvent?.metadata;
      const out = e.resOutputsEvent?.metadata;
      if (pre?.op === "delete") {
        firstDelete ??= performance.now();
        if (pre.type.startsWith("kubernetes:")) {
          began.set(pre.urn, performance.now());
          maxInFlight = Math.max(maxInFlight, ++inFlight);
        }
      }
      if (out?.op === "delete") {
        lastDeleteDone = performance.now();
        const t = began.get(out.urn);
        if (t !== undefined) {
          took.push(performance.now() - t);
          inFlight--;
        }
      }
    };
    const r = await ops.up({ ...ctx.options(dropped, "prune"), onEvent });
    const returned = performance.now();
    polling = false;
    await poller;
    if ((await count(ctx.clusters[2], SELECTOR)) !== 0) throw new Error("objects left on the dropped cluster after up returned");
    rows.push({
      run: i + 1,
      deployS,
      goneS: seconds((goneAt ?? returned) - start),
      returnedS: seconds(returned - start),
      pruned: r.events.length,
      firstDeleteS: seconds((firstDelete ?? returned) - start),
      deletesS: seconds((lastDeleteDone ?? returned) - (firstDelete ?? returned)),
      objectDeleteMeanS: seconds(took.reduce((a, b) => a + b, 0) / Math.max(1, took.length)),
      maxInFlight,
    });
  }
  console.log("prune latency (3 clusters x 10 bundles x 10 objects; one cluster dropped):");
  printTable(
    rows.map((p) => ({
      run: p.run,
      "deploy all s": p.deployS,
      "start -> first delete s": p.firstDeleteS,
      "first -> last delete done s": p.deletesS,
      "object delete step mean s": p.objectDeleteMeanS,
      "at most at once": p.maxInFlight,
      "start -> objects gone s": p.goneS,
      "start -> up returned s": p.returnedS,
      "Pruned events": p.pruned,
    })),
  );
  console.log("goal: objects gone within 5 s of the update's start");
  return rows;
}

async function applyVsKubectl(ctx: Ctx, kubectl: string) {
  const big = syntheticRepo(1, 500, "big-fleet");
  const one = syntheticConfig(big, [ctx.kubeconfigs[0]]);
  const tUp = performance.now();
  await ops.up(ctx.options(one, "big"));
  const upMs = performance.now() - tUp;
  const tNoop = performance.now();
  await ops.up({ ...ctx.options(one, "big"), expectNoChanges: true });
  const noopMs = performance.now() - tNoop;
  const docs = fs
    .readFileSync(path.join(big, "b000", "objects.yaml"), "utf8")
    .split("---\n")
    .map((d) => YAML.parse(d));
  const file = path.join(ctx.work, "kubectl-500.yaml");
  fs.writeFileSync(file, docs.map((d) => YAML.stringify({ ...d, metadata: { ...d.metadata, namespace: "big-kubectl" } })).join("---\n"));
  const kc = ["--kubeconfig", ctx.clusters[0].kubeconfig];
  execFileSync(kubectl, [...kc, "create", "namespace", "big-kubectl"], { stdio: "ignore" });
  const timeKubectl = () => {
    const t = performance.now();
    execFileSync(kubectl, [...kc, "apply", "--server-side", "-f", file], { stdio: "ignore" });
    return performance.now() - t;
  };
  const kubectlMs = timeKubectl();
  const kubectlNoopMs = timeKubectl();
  // helm.takeOwnership's read (core/desired/ownership.ts, through core/desired/facts.ts): what a first up of this bundle pays before registering.
  const tOwners = performance.now();
  const owners = (
    await readObjects([
      {
        id: "c0",
        kubeconfig: fs.readFileSync(ctx.clusters[0].kubeconfig, "utf8"),
        context: "",
        objects: docs.map((d) => ({ apiVersion: d.apiVersion, kind: d.kind, namespace: "big-kubectl", name: d.metadata.name })),
      },
    ])
  ).c0;
  const ownersMs = performance.now() - tOwners;
  if (owners.error || owners.objects?.filter(Boolean).length !== docs.length) throw new Error(`ownership read: ${owners.error ?? "objects missing"}`);
  const result = {
    upS: seconds(upMs),
    kubectlS: seconds(kubectlMs),
    ratio: +(upMs / kubectlMs).toFixed(2),
    noopUpS: seconds(noopMs),
    kubectlReapplyS: seconds(kubectlNoopMs),
    noopRatio: +(noopMs / kubectlNoopMs).toFixed(2),
    ownershipReadS: seconds(ownersMs),
    kubectlVersion: execFileSync(kubectl, ["version", "--client", "-o", "json"], { encoding: "utf8" }).match(/"gitVersion":\s*"([^"]+)"/)?.[1],
  };
  console.log("500-object bundle, one cluster (create, then again unchanged):");
  printTable([
    { what: "create", "pulumi-fleet up s": result.upS, "kubectl apply --server-side s": result.kubectlS, ratio: result.ratio },
    { what: "unchanged", "pulumi-fleet up s": result.noopUpS, "kubectl apply --server-side s": result.kubectlReapplyS, ratio: result.noopRatio },
  ]);
  console.log(`goals: create at most 3x, unchanged at most 2x (kubectl ${result.kubectlVersion})`);
  console.log(`ownership read of the 500 objects (helm.takeOwnership, paid by a first up or a changed deployment): ${result.ownershipReadS} s`);
  return result;
}

async function agentChurn(ctx: Ctx, repo: string) {
  const all = syntheticConfig(repo, ctx.kubeconfigs);
  const agents = () => Promise.all(ctx.clusters.map((c) => kubeList(c, "/api/v1/namespaces/cattle-fleet-system/pods", "app=fleet-agent")));
  await ops.up(ctx.options(all, "prune"));
  const before = (await agents()).map((pods) => pods.map((p: any) => p.metadata.uid));
  let replaces = 0;
  let changes = 0;
  const t = performance.now();
  for (let i = 0; i < 20; i++) {
    const r = await ops.up(ctx.options(all, "prune"));
    replaces += r.changes.replace ?? 0;
    changes += (r.changes.update ?? 0) + (r.changes.create ?? 0) + (r.changes.delete ?? 0) + (r.changes.replace ?? 0);
  }
  const after = await agents();
  const result = {
    updates: 20,
    meanNoopUpS: seconds((performance.now() - t) / 20),
    replaces,
    otherChanges: changes,
    podsReplaced: after.filter((pods, i) => JSON.stringify(pods.map((p: any) => p.metadata.uid)) !== JSON.stringify(before[i])).length,
    restarts: after.flat().reduce((n: number, p: any) => n + (p.status.containerStatuses ?? []).reduce((m: number, s: any) => m + s.restartCount, 0), 0),
  };
  console.log("agent churn over 20 no-op updates (3 clusters):");
  printTable([
    {
      "no-op ups": result.updates,
      "mean s": result.meanNoopUpS,
      "replace steps": result.replaces,
      "other changes": result.otherChanges,
      "agent pods replaced": result.podsReplaced,
      restarts: result.restarts,
    },
  ]);
  return result;
}

export async function liveBench(): Promise<void> {
  toolchain();
  const runs = Number(arg("runs") ?? 3);
  const parts = (arg("parts") ?? "prune,apply,churn").split(",");
  const kubectl = path.join(clusterBinaries({ kubectl: true }), "kubectl");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-live-"));
  const live = await startLocalClusters({ names: ["c-000", "c-001", "c-002"], baseDir: path.join(work, "clusters") });
  try {
    const ctx: Ctx = {
      clusters: live.clusters,
      work,
      kubeconfigs: syntheticClusters(3, (i) => ({ kubeconfig: fs.readFileSync(live.clusters[i].kubeconfig, "utf8") })),
      options: (config, stack) => ({
        stack,
        stateDir: path.join(work, "state"),
        stackConfigDir: work,
        config,
        deploy: { cacheRoot: path.join(work, "git") },
        env: { PULUMI_CONFIG_PASSPHRASE: "bench", ...engineEnvArg() },
      }),
    };
    const repo = syntheticRepo(10, 10);
    const prune = parts.includes("prune") ? await pruneLatency(ctx, repo, runs) : undefined;
    const apply = parts.includes("apply") ? await applyVsKubectl(ctx, kubectl) : undefined;
    const churn = parts.includes("churn") ? await agentChurn(ctx, repo) : undefined;
    console.log(`written ${writeResult("live", { prune, apply, churn, startupMs: live.startupMs })}`);
  } finally {
    await stopLocalClusters(live.baseDir);
    fs.rmSync(work, { recursive: true, force: true });
  }
}
