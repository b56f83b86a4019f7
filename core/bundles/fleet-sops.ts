/**
 * fleet-sops (tools/fleet-sops) runs under the renderer's bounds, with the renderer's flags and the
 * operator's same limits (SandboxLimits, PULUMI_FLEET_RENDER_*): no environment, a seccomp filter (no
 * paths, sockets or programs), the process's memory, each file's time and each result's size. The
 * files it decrypts are GitRepo content: one that only looks SOPS-encrypted could make SOPS's stores
 * grow without end. When fleet-sops ends early, it has said on stderr which file it was decrypting:
 * that file gets the error (naming the limit and its variable) and the others are decrypted again,
 * so only the bundles that need the offending file fail. All runs of one GitRepo together have that
 * GitRepo's time (PULUMI_FLEET_GITREPO_RENDER_SECONDS).
 */
import { runInGroup } from "../base/child-group";
import { SandboxLimits, sandboxArgs, sandboxLimits } from "../renderer/sandbox";
import { childCommand, stopSignal } from "../base/stop-signal";
import { builtToolPath } from "../base/tool-build";
import type { K8sObject } from "../model/k8s-object";

/** What fleet-sops is asked: the GitRepo's age identities and the files to decrypt. */
export interface DecryptRequest {
  identities: string;
  files: { name: string; content: string }[];
}
/** Per file name: its Secrets, or why it cannot be decrypted (never a value of it). */
export type DecryptResults = Record<string, { objects?: K8sObject[]; error?: string }>;

/** How one run of fleet-sops ended: its answer, or the file in flight, the limit it hit, and why. */
export type SopsRun = { ok: true; files: DecryptResults } | { ok: false; file?: string; limit?: "memory" | "time"; reason: string };

/** One run of fleet-sops on a request, bounded by `deadlineMs` (the GitRepo's time left). */
export type SopsRunner = (request: DecryptRequest, limits: SandboxLimits, deadlineMs: number) => Promise<SopsRun>;

/**
 * Decrypts the request's files, each that ends fleet-sops failing alone: at most one run per file.
 * A run that fails with no file in flight (its build, its request) fails every file left.
 */
export async function decryptBounded(
  request: DecryptRequest,
  run: SopsRunner = runFleetSopsOnce,
  limits: SandboxLimits = sandboxLimits(),
  now: () => number = Date.now,
): Promise<DecryptResults> {
  const results: DecryptResults = {};
  const end = now() + limits.gitRepoSeconds * 1000;
  let pending = request.files;
  while (pending.length) {
    const left = end - now();
    const outcome: SopsRun = left > 0 ? await run({ ...request, files: pending }, limits, left) : { ok: false, reason: gitRepoTimeReason(limits) };
    if (outcome.ok) {
      Object.assign(results, outcome.files);
      break;
    }
    const culprit = outcome.file;
    if (culprit === undefined || !pending.some((f) => f.name === culprit)) {
      for (const f of pending) results[f.name] = { error: `the SOPS-encrypted file was not decrypted: ${outcome.reason}` };
      break;
    }
    results[culprit] = { error: `the SOPS-encrypted file was not decrypted: ${outcome.reason}` };
    pending = pending.filter((f) => f.name !== culprit);
  }
  return results;
}

/** The reason a run ended early, by the limit it hit (the operator's variable named). */
export function limitReason(limit: "memory" | "time" | undefined, limits: SandboxLimits, detail: string): string {
  if (limit === "memory") return `decrypting it needed more than the limit of ${limits.memoryMiB} MiB of memory (PULUMI_FLEET_RENDER_MEMORY_MIB): stopped`;
  if (limit === "time") return `decrypting it took longer than the limit of ${limits.jobSeconds} s per file (PULUMI_FLEET_RENDER_TIMEOUT_SECONDS): stopped`;
  return `fleet-sops failed: ${detail}`;
}

const gitRepoTimeReason = (l: SandboxLimits) =>
  `decrypting this GitRepo's files took longer than the limit of ${l.gitRepoSeconds} s per GitRepo (PULUMI_FLEET_GITREPO_RENDER_SECONDS): stopped`;

/** What fleet-sops's stderr says after it ended early: the last file it started, and the limit it named. */
export function readSopsStderr(stderr: string): { file?: string; limit?: "memory" | "time"; other: string } {
  let file: string | undefined;
  let limit: "memory" | "time" | undefined;
  const other: string[] = [];
  for (const line of stderr.split("\n")) {
    let m: RegExpExecArray | null;
    if ((m = /^fleet-sops-file (".*")$/.exec(line))) file = JSON.parse(m[1]) as string;
    else if (line === "fleet-sops-file-done") file = undefined;
    else if ((m = /^fleet-sops-limit (memory|time) /.exec(line))) limit = m[1] as "memory" | "time";
    else if (line.trim()) other.push(line);
  }
  // Go's own "out of memory" (an allocation past the address-space rlimit, before the watchdog saw it).
  if (!limit && other.some((l) => /^fatal error: (runtime: )?out of memory|cannot allocate memory/.test(l))) limit = "memory";
  return { file, limit, other: other.slice(0, 5).join("\n").slice(0, 2000) };
}

/** fleet-sops, built on first use (tools/build-sops.sh), once on `request` with an empty environment. */
async function runFleetSopsOnce(request: DecryptRequest, limits: SandboxLimits, deadlineMs: number): Promise<SopsRun> {
  const bin = builtToolPath("build-sops.sh", "fleet-sops (SOPS decryption)");
  const [file, args] = childCommand(bin, ["decrypt", ...sandboxArgs(limits)]);
  const r = await runInGroup(file, args, {
    env: {},
    input: JSON.stringify(request),
    name: "fleet-sops",
    // Its results are bounded by totalOutputMiB; the error messages and JSON around them fit in the rest.
    maxOutputBytes: (limits.totalOutputMiB + 16) * 1024 * 1024,
    stderrKeptBytes: 64 * 1024,
    deadlineMs,
    deadlineReason: gitRepoTimeReason(limits),
  });
  if (r.aborted) throw stopSignal.reason;
  if (r.code === 0 && !r.stopped) return { ok: true, files: (JSON.parse(r.stdout.toString("utf8")) as { files: DecryptResults }).files };
  const said = readSopsStderr(r.stderr);
  if (r.stopped) return { ok: false, reason: r.stopped }; // the GitRepo's time: every file left
  return { ok: false, file: said.file, limit: said.limit, reason: limitReason(said.limit, limits, said.other || `exit code ${r.code}`) };
}
