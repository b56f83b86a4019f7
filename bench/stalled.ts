/**
 * `npm run bench -- stalled [--clusters 200] [--bundles 5] [--objects 5] [--runs 2]`: what a Stalled pair
 * costs an `up` (issue 56 item 2). Three stacks of the same synthetic fleet, the real engine in render
 * mode: "clean" (every pair deploys), "stalled" (one pair on c-000 is refused by its provider: its file
 * already holds another object; it fails `stalledAfter` ups in a row and is then Stalled) and "retried"
 * (the same refused pair, `stalledAfter: 0`: applied and refused by every `up`). Then, alternating
 * clean, stalled, retried per round (after one untimed round), the wall time of an `up` with nothing new to deploy. The Stalled
 * `up` should cost what the clean one does. Writes bench/results/stalled.json.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as ops from "../automation/operations";
import { toolchain } from "../automation/engine/toolchain";
import { arg, engineEnvArg, printTable, seconds, syntheticClusters, syntheticConfig, syntheticRepo, writeResult } from "./support";

const VARIANTS = ["clean", "stalled", "retried"] as const;
type Variant = (typeof VARIANTS)[number];
const STALLED_AFTER = 3;

export async function stalledBench(): Promise<void> {
  toolchain();
  const clusters = Number(arg("clusters") ?? 200);
  const bundles = Number(arg("bundles") ?? 5);
  const objects = Number(arg("objects") ?? 5);
  const runs = Number(arg("runs") ?? 2);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-stalled-"));
  const repo = syntheticRepo(bundles, objects);
  try {
    const options = (v: Variant): ops.OperationOptions => {
      const renderDir = path.join(work, `render-${v}`);
      return {
        stack: `stalled-${v}`,
        stateDir: path.join(work, "state"),
        stackConfigDir: work,
        config: syntheticConfig(repo, syntheticClusters(clusters), { renderDir, stalledAfter: v === "retried" ? 0 : STALLED_AFTER }),
        deploy: { cacheRoot: path.join(work, "git") },
        env: { PULUMI_CONFIG_PASSPHRASE: "bench", ...engineEnvArg() },
        onProgramTimings: (t) => {
          program = t;
        },
      };
    };
    // The program's own share (computing the desired state, registering it): less noisy than the wall time on a shared machine.
    let program = { planMs: 0, registerMs: 0 };
    // The refused pair: c-000's first object of bundle b000, its file already holding another ConfigMap (render.go refuses it).
    const refuse = (v: Variant) => {
      const dir = path.join(work, `render-${v}`, "c-000", "1-manifest");
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(
        path.join(dir, "v1_ConfigMap_bench-0_cm-0.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: intruder\n  namespace: bench-0\n",
      );
    };
    /** One up: its wall time, and the pairs it failed (Stalled ones marked). */
    const up = async (v: Variant) => {
      const t = performance.now();
      const failed = await ops.up(options(v)).then(
        () => [] as string[],
        (e: unknown) => {
          if (!(e instanceof ops.BundlesFailedError)) throw e;
          return e.failures.map((f) => `${f.cluster}/${f.bundle}${f.stalled ? " (Stalled)" : ""}`);
        },
      );
      return { ms: performance.now() - t, failed, planMs: program.planMs };
    };
    for (const v of VARIANTS) {
      if (v !== "clean") refuse(v);
      console.log(`${v}: first up of ${clusters} clusters x ${bundles} bundles x ${objects} objects...`);
      await up(v);
    }
    // The stalled stack's pair fails STALLED_AFTER ups in a row (the first included), then is Stalled.
    for (let i = 1; i < STALLED_AFTER; i++) await up("stalled");
    // One untimed round: the first Stalled up records the pair's pause (one engine step); the rounds after are the steady state.
    for (const v of VARIANTS) await up(v);
    const times: Record<Variant, number[]> = { clean: [], stalled: [], retried: [] };
    const planMs: Record<Variant, number[]> = { clean: [], stalled: [], retried: [] };
    const failures: Record<Variant, string[]> = { clean: [], stalled: [], retried: [] };
    for (let round = 0; round < runs; round++) {
      for (const v of VARIANTS) {
        const r = await up(v);
        times[v].push(seconds(r.ms));
        planMs[v].push(Math.round(r.planMs));
        failures[v] = r.failed;
      }
    }
    const one = (xs: string[], stalled: boolean) => xs.length === 1 && xs[0].startsWith("c-000/") && xs[0].endsWith(" (Stalled)") === stalled;
    if (failures.clean.length || !one(failures.stalled, true) || !one(failures.retried, false))
      throw new Error(`unexpected failures: ${JSON.stringify(failures)}`);
    const mean = (xs: number[]) => +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2);
    printTable(
      VARIANTS.map((v) => ({
        variant: v,
        "up s (each round)": times[v].join(" / "),
        "mean s": mean(times[v]),
        "vs clean": (mean(times[v]) / mean(times.clean)).toFixed(3),
        "desired state ms (each)": planMs[v].join(" / "),
        failed: failures[v].join(", ") || "none",
      })),
    );
    console.log(`written ${writeResult("stalled", { clusters, bundles, objects, runs, stalledAfter: STALLED_AFTER, times, planMs, failures })}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(repo, { recursive: true, force: true });
  }
}
