/**
 * `npm run bench -- rollout [--runs 3]`: what a progressive rollout costs. The example fleet (examples/,
 * the local stack's three clusters) on three live local clusters, and the same image update of its
 * `simple` bundle deployed unpartitioned and with a 2-partition rolloutStrategy (dev-1 first, holding
 * the rest until ready). Prints each `up`'s wall time, the difference per partition boundary, and how
 * long the first partition's Deployment took to become ready (the waiting the rest does), so the
 * overhead can be told from the wait. Writes bench/results/rollout.json.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { EngineEvent } from "@pulumi/pulumi/automation";
import { startLocalClusters, stopLocalClusters } from "../automation/clusters/local-clusters";
import * as ops from "../automation/operations";
import { toolchain } from "../automation/engine/toolchain";
import { loadStackFile } from "../core/plan/pipeline";
import { PROJECT_DIR } from "../core/base/project-dir";
import { StackConfig } from "../core/config/stack";
import { arg, engineEnvArg, printTable, seconds, writeResult } from "./support";

const ROLLOUT =
  "rolloutStrategy:\n  partitions:\n    - name: first\n      clusterName: dev-1\n      maxUnavailable: 0\n    - name: rest\n      clusterSelector: {}\n";

export async function rolloutBench(): Promise<void> {
  toolchain();
  const runs = Number(arg("runs") ?? 3);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-rollout-"));
  const local = loadStackFile("local", PROJECT_DIR);
  const live = await startLocalClusters({ names: local.clusters.map((c) => c.name), baseDir: path.join(work, "clusters") });
  try {
    const results: Record<string, { upS: number[]; firstReadyS: number[] }> = {};
    for (const variant of ["unpartitioned", "2 partitions"] as const) {
      // Each variant its own copy of the examples and its own stack, on the same clusters, one after the other (destroyed between).
      const repo = path.join(work, `examples-${Object.keys(results).length}`);
      fs.cpSync(path.join(PROJECT_DIR, "examples"), repo, { recursive: true });
      const fleetYaml = path.join(repo, "simple", "fleet.yaml");
      if (variant === "2 partitions") fs.appendFileSync(fleetYaml, ROLLOUT);
      const config: StackConfig = {
        ...local,
        renderDir: undefined,
        clusters: local.clusters.map((c) => ({ ...c, kubeconfig: fs.readFileSync(live.clusters.find((l) => l.name === c.name)!.kubeconfig, "utf8") })),
        gitRepos: local.gitRepos.map((r) => ({ ...r, repo })),
      };
      const options = (onEvent?: (e: EngineEvent) => void): ops.OperationOptions => ({
        stack: `rollout-${variant === "unpartitioned" ? "flat" : "partitioned"}`,
        stateDir: path.join(work, "state"),
        stackConfigDir: work,
        config,
        deploy: { cacheRoot: path.join(work, "git") },
        env: { PULUMI_CONFIG_PASSPHRASE: "bench", ...engineEnvArg() },
        ...(onEvent ? { onEvent } : {}),
      });
      await ops.up(options());
      const row = { upS: [] as number[], firstReadyS: [] as number[] };
      const image = path.join(repo, "simple", "deployment.yaml");
      for (let i = 0; i < runs; i++) {
        fs.writeFileSync(image, fs.readFileSync(image, "utf8").replace(/hello:[\w.-]+/, `hello:bench-${i}`));
        let began: number | undefined;
        let ready: number | undefined;
        const firstDeployment = "::dev-1/examples-simple/apps:Deployment:simple:hello";
        const t = performance.now();
        const r = await ops.up(
          options((e) => {
            if (e.resourcePreEvent?.metadata.urn.endsWith(firstDeployment)) began = performance.now();
            if (e.resOutputsEvent?.metadata.urn.endsWith(firstDeployment)) ready = performance.now();
          }),
        );
        row.upS.push(seconds(performance.now() - t));
        row.firstReadyS.push(began !== undefined && ready !== undefined ? seconds(ready - began) : NaN);
        if (r.events.filter((e) => e.bundle === "examples-simple").length !== 3)
          throw new Error(`${variant}: expected the simple bundle deployed to 3 clusters, got ${JSON.stringify(r.events)}`);
      }
      results[variant] = row;
      await ops.destroy(options());
    }
    const mean = (xs: number[]) => +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2);
    const flat = mean(results.unpartitioned.upS);
    const staged = mean(results["2 partitions"].upS);
    printTable(
      Object.entries(results).map(([variant, r]) => ({
        variant,
        "up s (each)": r.upS.join(" / "),
        "mean s": mean(r.upS),
        "dev-1 Deployment ready after s": r.firstReadyS.join(" / "),
      })),
    );
    const overhead = +(staged - flat).toFixed(2);
    console.log(
      `overhead of one partition boundary: ${overhead} s (${(staged / flat).toFixed(2)}x); the first partition's Deployment took ${mean(results["2 partitions"].firstReadyS)} s to be ready`,
    );
    console.log(`written ${writeResult("rollout", { runs, results, meanUpS: { unpartitioned: flat, partitioned: staged }, overheadPerBoundaryS: overhead })}`);
  } finally {
    await stopLocalClusters(live.baseDir);
    fs.rmSync(work, { recursive: true, force: true });
  }
}
