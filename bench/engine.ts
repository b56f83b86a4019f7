/**
 * `npm run bench -- engine [--clusters 10,50,200] [--bundles 10] [--objects 10]`: the real engine in
 * render mode on synthetic fleets (every cluster gets every bundle; each bundle is `objects`
 * ConfigMaps; each cluster also has its agent). Per size, each phase in a process of its own, as
 * `npm run up` runs one from the stack file (bench/engine-op.ts): the first `up`, a `preview` with nothing
 * to do, a no-op `up` that runs the engine (recording the stack's inputs, as a shard's up does), the same
 * no-op as a sharded run decides it (left out: inputs unchanged, docs/sharding.md), and a target edit
 * leaving out 5% of the clusters (one `group` label of 20) until its `up` has pruned their pairs. Per phase: wall time, the peak resident memory of the operation's process (the
 * program runs in it), of the Pulumi CLI and of the provider, and the state's size after it; the share
 * of the preview spent in this program. Each size runs twice: with the engine's checkpoint after every
 * step (`--checkpoints`) and with the state written once at the end (the default of the operations
 * since the crash journal). Writes bench/results/engine.json.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { toolchain } from "../automation/engine/toolchain";
import { PROJECT_DIR } from "../core/base/project-dir";
import type { EngineOp } from "./engine-op";
import { samplePeaks } from "./process-peaks";
import { arg, engineEnvArg, flag, mib, printTable, seconds, stateSizes, syntheticRepo, writeResult } from "./support";

interface PhaseResult {
  ms: number;
  program: { planMs: number; registerMs: number };
  /** After a preview, outside its figures: a status page of as many pairs (engine-op.ts). */
  statusPageMs?: number;
  /** The phase process's whole CPU, the status page included. */
  totalCpuMs: number;
  changes: Record<string, number>;
  /** CPU time of the operation's process (the program runs in it), the CLI and the provider excluded. */
  programCpuMs: number;
  /** Peak resident memory in MiB (VmHWM) of the operation's process, the CLI and the provider. */
  peakMiB: { program: number; cli: number; provider: number };
  /**
   * CPU seconds of the provider's process, as last sampled (within 200 ms of its end), and of the CLI with
   * the rest of the operation's descendants (proc-guard, the language host): every descendant's reaped
   * time less the program's and the provider's. (Sampled, the CLI read near zero: bin/pulumi is proc-guard,
   * which runs the real CLI; what it started is reaped through it, exactly.)
   */
  cpuS: { cli: number; provider: number };
  stateMiB: number;
  /** The shard runner's decision left the engine out (engine-op.ts "noop-decided"). */
  leftOut: boolean;
}

async function phase(p: EngineOp): Promise<PhaseResult> {
  const profile = arg("cpu-profile");
  const flags = profile
    ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(profile)}`, `--cpu-prof-name=${p.clusters}-${p.op}${p.leaveOutGroup ? "-edit" : ""}.cpuprofile`]
    : [];
  // The operation's process inherits scripts/node-options.sh's NODE_OPTIONS, as `npm run up` does; --node-options=
  // replaces them (empty: none), to measure what they buy.
  const nodeOptions = arg("node-options");
  const child = spawn(process.execPath, [...flags, path.join(PROJECT_DIR, "scripts", "run-ts.js"), path.join(__dirname, "engine-op.ts"), JSON.stringify(p)], {
    stdio: ["ignore", "pipe", "inherit"],
    env: nodeOptions === undefined ? process.env : { ...process.env, NODE_OPTIONS: nodeOptions },
  });
  const peaks = samplePeaks(200, child.pid!);
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const { peakMiB, sampledCpuS, cpuS } = peaks.stop();
  if (code !== 0) throw new Error(`bench engine: the ${p.op} phase at ${p.clusters} clusters exited ${code}`);
  const line = out.trim().split("\n").pop()!;
  const result = JSON.parse(line) as Omit<PhaseResult, "peakMiB" | "cpuS" | "stateMiB">;
  return {
    ...result,
    peakMiB: { program: peakMiB.program, cli: peakMiB.pulumi, provider: peakMiB.provider },
    cpuS: { cli: +Math.max(0, cpuS.children - result.totalCpuMs / 1000 - sampledCpuS.provider).toFixed(1), provider: sampledCpuS.provider },
    stateMiB: mib(stateSizes(path.join(p.work, "state"), "bench").checkpoint),
  };
}

async function measure(clusters: number, bundles: number, objects: number, skipCheckpoints: boolean) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-engine-"));
  const repo = syntheticRepo(bundles, objects);
  const base = { work, repo, clusters, bundles, skipCheckpoints, env: engineEnvArg() };
  const up = await phase({ ...base, op: "up" });
  const preview = await phase({ ...base, op: "preview" });
  const noop = await phase({ ...base, op: "noop" });
  const decided = await phase({ ...base, op: "noop-decided" });
  const edit = await phase({ ...base, op: "up", leaveOutGroup: "0" });
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(repo, { recursive: true, force: true });
  const resources = Object.values(up.changes).reduce((a, b) => a + b, 0);
  const programMs = preview.program.planMs + preview.program.registerMs;
  const peak = (r: PhaseResult) => `${r.peakMiB.program} / ${r.peakMiB.cli} / ${r.peakMiB.provider}`;
  return {
    clusters,
    bundles,
    objects,
    resources,
    checkpoints: skipCheckpoints ? "final only" : "every step",
    upS: seconds(up.ms),
    previewS: seconds(preview.ms),
    noopUpS: seconds(noop.ms),
    /** The same no-op as a sharded run decides it: its inputs unchanged since the last successful up, the engine is not run. */
    noopDecidedS: seconds(decided.ms),
    noopDecidedLeftOut: decided.leftOut,
    editS: seconds(edit.ms),
    editDeleted: edit.changes.delete ?? 0,
    previewMsPerResource: +(preview.ms / resources).toFixed(2),
    programMs: Math.round(programMs),
    programPlanMs: Math.round(preview.program.planMs),
    programShareOfPreview: +(programMs / preview.ms).toFixed(3),
    stateMiB: up.stateMiB,
    peakMiB: { up: up.peakMiB, preview: preview.peakMiB, noop: noop.peakMiB, edit: edit.peakMiB },
    peaks: { up: peak(up), preview: peak(preview), noop: peak(noop), edit: peak(edit) },
    /** Per stage of the preview: the program's desired state (plan, render, desired) and registration, each process's CPU; the status page. */
    stages: {
      pairs: clusters * bundles,
      planMs: Math.round(preview.program.planMs),
      registerMs: Math.round(preview.program.registerMs),
      programCpuS: seconds(preview.programCpuMs),
      cliCpuS: preview.cpuS.cli,
      providerCpuS: preview.cpuS.provider,
      previewS: seconds(preview.ms),
      statusPageMs: preview.statusPageMs ?? 0,
    },
    /** CPU seconds per phase: the program's process, the CLI, the provider. */
    cpuS: Object.fromEntries(
      Object.entries({ up, preview, noop, edit }).map(([k, r]) => [k, { program: seconds(r.programCpuMs), cli: r.cpuS.cli, provider: r.cpuS.provider }]),
    ),
  };
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
      "first up s": r.upS,
      "preview s": r.previewS,
      "no-op up s": r.noopUpS,
      "no-op as a shard s": `${r.noopDecidedS}${r.noopDecidedLeftOut ? " (left out)" : " (engine ran)"}`,
      "edit -5% s (deleted)": `${r.editS} (${r.editDeleted})`,
      "state MiB": r.stateMiB,
      "peak MiB up (program / CLI / provider)": r.peaks.up,
      "peak MiB preview": r.peaks.preview,
      "preview CPU s (program / CLI / provider)": `${r.cpuS.preview.program} / ${r.cpuS.preview.cli} / ${r.cpuS.preview.provider}`,
      "preview ms/resource": r.previewMsPerResource,
      "program ms (plan)": `${r.programMs} (${r.programPlanMs})`,
      "program share of preview": `${(r.programShareOfPreview * 100).toFixed(1)}%`,
    })),
  );
  // Each stage's cost per cluster and per pair (ms), to see whether any grows faster than the fleet (issue 57).
  const perUnit = (v: number, n: number) => +(v / n).toFixed(3);
  printTable(
    results.map((r) => {
      const st = r.stages;
      const row: Record<string, string | number> = { clusters: r.clusters, pairs: st.pairs, resources: r.resources };
      const stage = (name: string, ms: number) => {
        row[`${name} ms`] = Math.round(ms);
        row[`${name} ms/cluster`] = perUnit(ms, r.clusters);
        row[`${name} ms/pair`] = perUnit(ms, st.pairs);
      };
      stage("plan+render+desired", st.planMs);
      stage("registration", st.registerMs);
      stage("program CPU", st.programCpuS * 1000);
      stage("CLI CPU", st.cliCpuS * 1000);
      stage("provider CPU", st.providerCpuS * 1000);
      stage("preview wall", st.previewS * 1000);
      stage("status page", st.statusPageMs);
      return row;
    }),
  );
  console.log(`goal: the program at most 10% of preview time${arg("engine-env") ? `; engine environment: ${arg("engine-env")}` : ""}`);
  console.log(`NODE_OPTIONS of each phase's process: ${arg("node-options") ?? process.env.NODE_OPTIONS ?? ""}`);
  console.log(`written ${writeResult("engine", { results })}`);
}
