/**
 * `npm run bench -- engine [--clusters 10,50,200] [--bundles 10] [--objects 10]`: the real engine in
 * render mode on synthetic fleets (every cluster gets every bundle; each bundle is `objects`
 * ConfigMaps; each cluster also has its agent). Per size, each phase in a process of its own, as
 * `npm run up` runs one (bench/engine-op.ts): the first `up`, a `preview` with nothing to do, a no-op
 * `up`, and a target edit leaving out 5% of the clusters (one `group` label of 20) until its `up` has
 * pruned their pairs. Per phase: wall time, the peak resident memory of the operation's process (the
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
import { arg, engineEnvArg, flag, printTable, seconds, syntheticRepo, writeResult } from "./support";

interface PhaseResult {
  ms: number;
  program: { planMs: number; registerMs: number };
  changes: Record<string, number>;
  /** CPU time of the operation's process (the program runs in it), the CLI and the provider excluded. */
  programCpuMs: number;
  /** Peak resident memory in MiB (VmHWM) of the operation's process, the CLI and the provider. */
  peakMiB: { program: number; cli: number; provider: number };
  /** CPU seconds of the CLI's and the provider's processes, as last sampled (within 200 ms of their end). */
  cpuS: { cli: number; provider: number };
  stateMiB: number;
}

/** Peak VmHWM, sampled every 200 ms, of a process and its descendants, by role. */
function sampleTree(root: number, peaks: PhaseResult["peakMiB"], cpu: PhaseResult["cpuS"]): () => void {
  const ticks = new Map<string, { role: "cli" | "provider"; ticks: number }>();
  const hz = 100; // USER_HZ: /proc's clock ticks per second on Linux
  const read = (pid: string, file: string) => {
    try {
      return fs.readFileSync(`/proc/${pid}/${file}`, "utf8");
    } catch {
      return "";
    }
  };
  const tick = () => {
    const parents = new Map<string, string>();
    const names = new Map<string, string>();
    const fieldsOf = new Map<string, string[]>();
    for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      const stat = read(pid, "stat");
      const close = stat.lastIndexOf(")");
      if (close < 0) continue;
      names.set(pid, stat.slice(stat.indexOf("(") + 1, close));
      fieldsOf.set(pid, stat.slice(close + 2).split(" "));
      parents.set(pid, fieldsOf.get(pid)![1]);
    }
    const inTree = (pid: string): boolean => {
      for (let p: string | undefined = pid, depth = 0; p && depth < 20; p = parents.get(p), depth++) if (p === String(root)) return true;
      return false;
    };
    for (const [pid, name] of names) {
      if (!inTree(pid)) continue;
      const hwm = Number(/VmHWM:\s+(\d+)/.exec(read(pid, "status"))?.[1] ?? 0) / 1024;
      const role = pid === String(root) ? "program" : name === "pulumi" ? "cli" : name.startsWith("pulumi-resource") ? "provider" : undefined;
      if (role) peaks[role] = Math.max(peaks[role], Math.round(hwm));
      if (role === "cli" || role === "provider") {
        const fields = fieldsOf.get(pid)!; // after the name: state, ppid, ..., utime (12th), stime (13th)
        const t = Number(fields[11]) + Number(fields[12]);
        if (t >= 0) ticks.set(pid, { role, ticks: t });
      }
    }
    cpu.cli = cpu.provider = 0;
    for (const { role, ticks: t } of ticks.values()) cpu[role] = +(cpu[role] + t / hz).toFixed(2);
  };
  const timer = setInterval(tick, 200);
  return () => clearInterval(timer);
}

/** The size of the stack's checkpoint (the file backend's state of the one stack). */
function stateMiB(stateDir: string): number {
  const stacks = path.join(stateDir, ".pulumi", "stacks");
  const files = fs.existsSync(stacks) ? fs.readdirSync(stacks, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith("bench.json")) : [];
  return files.length ? +(fs.statSync(path.join(stacks, files[0])).size / 1048576).toFixed(1) : 0;
}

async function phase(p: EngineOp): Promise<PhaseResult> {
  const peakMiB = { program: 0, cli: 0, provider: 0 };
  const cpuS = { cli: 0, provider: 0 };
  const profile = arg("cpu-profile");
  const flags = profile
    ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(profile)}`, `--cpu-prof-name=${p.clusters}-${p.op}${p.leaveOutGroup ? "-edit" : ""}.cpuprofile`]
    : [];
  const child = spawn(process.execPath, [...flags, path.join(PROJECT_DIR, "scripts", "run-ts.js"), path.join(__dirname, "engine-op.ts"), JSON.stringify(p)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const stop = sampleTree(child.pid!, peakMiB, cpuS);
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  stop();
  if (code !== 0) throw new Error(`bench engine: the ${p.op} phase at ${p.clusters} clusters exited ${code}`);
  const line = out.trim().split("\n").pop()!;
  return { ...JSON.parse(line), peakMiB, cpuS, stateMiB: stateMiB(path.join(p.work, "state")) };
}

async function measure(clusters: number, bundles: number, objects: number, skipCheckpoints: boolean) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-engine-"));
  const repo = syntheticRepo(bundles, objects);
  const base = { work, repo, clusters, skipCheckpoints, env: engineEnvArg() };
  const up = await phase({ ...base, op: "up" });
  const preview = await phase({ ...base, op: "preview" });
  const noop = await phase({ ...base, op: "noop" });
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
    editS: seconds(edit.ms),
    editDeleted: edit.changes.delete ?? 0,
    previewMsPerResource: +(preview.ms / resources).toFixed(2),
    programMs: Math.round(programMs),
    programPlanMs: Math.round(preview.program.planMs),
    programShareOfPreview: +(programMs / preview.ms).toFixed(3),
    stateMiB: up.stateMiB,
    peakMiB: { up: up.peakMiB, preview: preview.peakMiB, noop: noop.peakMiB, edit: edit.peakMiB },
    peaks: { up: peak(up), preview: peak(preview), noop: peak(noop), edit: peak(edit) },
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
  console.log(`goal: the program at most 10% of preview time${arg("engine-env") ? `; engine environment: ${arg("engine-env")}` : ""}`);
  console.log(`written ${writeResult("engine", { results })}`);
}
