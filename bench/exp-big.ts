// EXPERIMENT (not committed): 500-object new stack up on one local cluster, with phases, vs kubectl.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { clusterBinaries, startLocalClusters, stopLocalClusters } from "../automation/clusters/local-clusters";
import * as ops from "../automation/operations";
import { kubeList } from "../automation/clusters/kube-client";
import { toolchain } from "../automation/engine/toolchain";
import { syntheticClusters, syntheticConfig, syntheticRepo } from "./support";

async function main() {
  toolchain();
  const kubectl = path.join(clusterBinaries({ kubectl: true }), "kubectl");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-exp-"));
  const live = await startLocalClusters({ names: ["c-000"], baseDir: path.join(work, "clusters") });
  const c0 = live.clusters[0];
  try {
    const kc = syntheticClusters(1, () => ({ kubeconfig: fs.readFileSync(c0.kubeconfig, "utf8") }));
    const runs = Number(process.env.RUNS ?? 3);
    for (let i = 0; i < runs; i++) {
      const big = syntheticRepo(1, 500, `pf-big${i}`);
      const cfg = syntheticConfig(big, kc, { agent: { enabled: false } });
      const t0 = performance.now();
      console.error(`timing start ${Math.round(t0)} ms`);
      let stop = false; let last = -1;
      const poll = (async () => { while (!stop) { const n = (await kubeList(c0, `/api/v1/namespaces/pf-big${i}-0/configmaps`).catch(() => [])).length; if (n !== last) { console.error(`timing objects=${n} ${Math.round(performance.now())} ms`); last = n; } await new Promise((r) => setTimeout(r, 30)); } })();
      await ops.up({ stack: `big${i}`, stateDir: path.join(work, "state"), stackConfigDir: work, config: cfg,
        deploy: { cacheRoot: path.join(work, "git") }, env: { PULUMI_CONFIG_PASSPHRASE: "bench", ...(process.env.PROG_NODE_OPTIONS ? { NODE_OPTIONS: process.env.PROG_NODE_OPTIONS } : {}) } });
      const upS = (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, 300)); stop = true; await poll;
      const docs = fs.readFileSync(path.join(big, "b000", "objects.yaml"), "utf8").split("---\n").map((d) => YAML.parse(d));
      const file = path.join(work, `k${i}.yaml`);
      fs.writeFileSync(file, docs.map((d) => YAML.stringify({ ...d, metadata: { ...d.metadata, namespace: `kubectl-big${i}` } })).join("---\n"));
      execFileSync(kubectl, ["--kubeconfig", c0.kubeconfig, "create", "namespace", `kubectl-big${i}`], { stdio: "ignore" });
      const t1 = performance.now();
      execFileSync(kubectl, ["--kubeconfig", c0.kubeconfig, "apply", "--server-side", "-f", file], { stdio: "ignore", env: { ...process.env, HOME: work } });
      const kS = (performance.now() - t1) / 1000;
      console.log(`run ${i}: up ${upS.toFixed(2)} s, kubectl ${kS.toFixed(2)} s, ratio ${(upS / kS).toFixed(2)}x`);
    }
  } finally {
    await stopLocalClusters(live.baseDir);
    fs.rmSync(work, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
