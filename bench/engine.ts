/**
 * `npm run bench -- engine [--clusters 10,50,200] [--bundles 10] [--objects 10]`: the real engine in
 * render mode on synthetic fleets (every cluster gets every bundle; each bundle is `objects`
 * ConfigMaps; each cluster also has its agent's 7 resources). Per size: the first `up`, a `preview`
 * with nothing to do, and a no-op `up`: wall time, engine cost per resource, and the share of the
 * preview spent in this program (planning + registering every resource, measured inside it), and the
 * size of the stack's checkpoint after the first `up` (the state file every engine event rewrites).
 * Each size runs twice: with the engine's checkpoint after every step (`--checkpoints`) and with the
 * state written once at the end (the default of the operations since the crash journal). Writes bench/results/engine.json.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as ops from "../automation/operations";
import { toolchain } from "../automation/engine/toolchain";
import { arg, engineEnvArg, flag, printTable, seconds, syntheticClusters, syntheticConfig, syntheticRepo, writeResult } from "./support";

async function measure(clusters: number, bundles: number, objects: number, skipCheckpoints: boolean) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-engine-"));
  const repo = syntheticRepo(bundles, objects);
  const config = syntheticConfig(repo, syntheticClusters(clusters), { renderDir: path.join(work, "render") });
  let program = { planMs: 0, registerMs: 0 };
  const options: ops.OperationOptions = {
    stack: "bench",
    stateDir: path.join(work, "state"),
    stackConfigDir: work,
    config,
    deploy: { cacheRoot: path.join(work, "git") },
    onProgramTimings: (t) => {
      program = t;
    },
    env: { PULUMI_CONFIG_PASSPHRASE: "bench", ...engineEnvArg() },
    skipCheckpoints,
  };
  const timed = async <T>(f: () => Promise<T>) => {
    const t = performance.now();
    const r = await f();
    return { r, ms: performance.now() - t, program: { ...program } };
  };
  const up = await timed(() => ops.up(options));
  const resources = Object.values(up.r.changes).reduce((a, b) => a + b, 0);
  const stateBytes = checkpointBytes(options.stateDir!);
  const preview = await timed(() => ops.preview({ ...options, expectNoChanges: true }));
  const noop = await timed(() => ops.up({ ...options, expectNoChanges: true }));
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(repo, { recursive: true, force: true });
  const programMs = preview.program.planMs + preview.program.registerMs;
  return {
    clusters,
    bundles,
    objects,
    resources,
    checkpoints: skipCheckpoints ? "final only" : "every step",
    stateMB: +(stateBytes / 1e6).toFixed(2),
    upS: seconds(up.ms),
    previewS: seconds(preview.ms),
    noopUpS: seconds(noop.ms),
    previewMsPerResource: +(preview.ms / resources).toFixed(2),
    programMs: Math.round(programMs),
    programPlanMs: Math.round(preview.program.planMs),
    programShareOfPreview: +(programMs / preview.ms).toFixed(3),
  };
}

/** The size of the stack's checkpoint (<stateDir>/.pulumi/stacks/<project>/<stack>.json; the file backend may gzip it). */
function checkpointBytes(stateDir: string): number {
  const stacks = path.join(stateDir, ".pulumi", "stacks");
  const files = fs.existsSync(stacks) ? (fs.readdirSync(stacks, { recursive: true }) as string[]) : [];
  const checkpoint = files.find((f) => /(^|\/)bench\.json(\.gz)?$/.test(f));
  return checkpoint ? fs.statSync(path.join(stacks, checkpoint)).size : 0;
}

export async function engineBench(): Promise<void> {
  toolchain();
  const sizes = (arg("clusters") ?? "10,50").split(",").map(Number);
  const bundles = Number(arg("bundles") ?? 10);
  const objects = Number(arg("objects") ?? 10);
  const results = [];
  // With a checkpoint per step the file backend rewrites the whole state after every step: both are
  // measured, since that rewrite grows with the fleet.
  const modes = flag("skip-checkpoints-only") ? [true] : [false, true];
  for (const n of sizes) {
    for (const skip of modes) {
      console.log(`engine, render mode: ${n} clusters x ${bundles} bundles x ${objects} objects, checkpoints ${skip ? "final only" : "every step"}...`);
      results.push(await measure(n, bundles, objects, skip));
    }
  }
  printTable(
    results.map((r) => ({
      "clusters x bundles x objects": `${r.clusters} x ${r.bundles} x ${r.objects}`,
      resources: r.resources,
      checkpoints: r.checkpoints,
      "state MB": r.stateMB,
      "first up s": r.upS,
      "preview s": r.previewS,
      "no-op up s": r.noopUpS,
      "preview ms/resource": r.previewMsPerResource,
      "program ms (plan)": `${r.programMs} (${r.programPlanMs})`,
      "program share of preview": `${(r.programShareOfPreview * 100).toFixed(1)}%`,
    })),
  );
  console.log(`goal: the program at most 10% of preview time${arg("engine-env") ? `; engine environment: ${arg("engine-env")}` : ""}`);
  console.log(`written ${writeResult("engine", { results })}`);
}
