/**
 * The bridge to fleet-render (tools/fleet-render), the Go program that runs Fleet's own libraries:
 * helm values templating (text/template + sprig), Helm's chart rendering and kustomize, and pulling
 * remote charts with Helm's downloader. One process per batch: the pipeline sends every job of a stage
 * at once and awaits every result. The batch runs asynchronously in a process group of its own
 * (core/base/child-group.ts), so a stopped operation kills it at once (core/base/stop-signal.ts). The binary is
 * built from pinned modules on first use (tools/build-render.sh) and cached outside the repository; a
 * build failure is an error, never a fallback to something approximate.
 */
import { runInGroup } from "../base/child-group";
import { childCommand, stopSignal, throwIfStopped } from "../base/stop-signal";
import { builtToolPath } from "../base/tool-build";
import { JobKey, MAX_RENDERER_OUTPUT_BYTES, runPerGitRepo, runSandboxOnce, sandboxLimits } from "./sandbox";
import type { RendererRequest, RendererResponse, RendererWireRequest, ValuesResult } from "../model/renderer-protocol";
import { TRUST } from "../model/schema/renderer-request";
import type { Trust } from "../model/schema/describe";

let binary: string | undefined;

/** The fleet-render binary, built or reused by tools/build-render.sh. */
export function rendererBinary(): string {
  if (binary) return binary;
  if (process.env.PULUMI_FLEET_RENDER_BIN) return (binary = process.env.PULUMI_FLEET_RENDER_BIN);
  binary = builtToolPath("build-render.sh", "fleet-render");
  return binary;
}

/**
 * Runs one batch. Job failures come back per job; a failure of the program itself throws. Jobs that
 * evaluate GitRepo content (yaml, values, renders) run in the sandbox (sandbox.ts), the others (pulls,
 * owners, impersonate, readiness, discovery, lookupReads: the network and the clusters' credentials,
 * the operator's data) in a plain process, which the sandbox refuses to be. A stopped operation starts
 * no batch and kills the one running: it throws StoppedError (core/base/stop-signal.ts).
 */
export async function runRenderer(request: RendererRequest): Promise<RendererResponse> {
  throwIfStopped();
  const response = emptyResponse();
  const trusted = jobKinds("trusted");
  if (trusted.some((kind) => hasJobs(request, kind))) {
    const only = Object.fromEntries(trusted.map((kind) => [kind, request[kind]])) as RendererRequest;
    Object.assign(response, pick(await runTrusted(only), trusted as (keyof RendererResponse)[]));
  }
  if (jobKinds("content").some((kind) => hasJobs(request, kind))) {
    Object.assign(response, pick(await runContent(request), ["values", "valueOf", "renders", "yaml", "gitRepoSpentSeconds"]));
  }
  return response;
}

type JobKind = keyof RendererRequest & keyof RendererResponse;

/** The job kinds of a trust class, as the schema gives them (tools/fleet-render/main.go refuses a mix by the same). */
function jobKinds(trust: Trust): JobKind[] {
  return Object.keys(TRUST).filter((kind) => TRUST[kind] === trust) as JobKind[];
}

/** Whether a request has a job that reads or writes a cluster, or downloads (its answer may differ from one call to the next). */
export function hasTrustedJobs(request: RendererRequest): boolean {
  return jobKinds("trusted").some((kind) => hasJobs(request, kind));
}

function hasJobs(request: RendererRequest, kind: JobKind): boolean {
  const jobs = request[kind];
  return Array.isArray(jobs) ? jobs.length > 0 : Object.keys(jobs ?? {}).length > 0;
}

function emptyResponse(): RendererResponse {
  return { values: [], valueOf: [], renders: {}, pulls: {}, yaml: {}, owners: {}, impersonate: {}, readiness: {}, discovery: {}, lookupReads: {} };
}

function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>;
}

async function runTrusted(request: RendererWireRequest): Promise<RendererResponse> {
  const [file, args] = childCommand(rendererBinary(), []);
  const result = await runInGroup(file, args, { input: JSON.stringify(request), name: "fleet-render", maxOutputBytes: MAX_RENDERER_OUTPUT_BYTES });
  if (result.aborted) throw stopSignal.reason;
  if (result.stopped) throw new Error(`fleet-render could not run: ${result.stopped}`);
  if (result.code !== 0) throw new Error(`fleet-render failed (exit ${result.code}): ${result.stderr.trim()}`);
  return JSON.parse(result.stdout.toString("utf8")) as RendererResponse;
}

/**
 * The content jobs, in the sandbox. Each job is named by its kind and its index here (not by a key
 * the content chose, such as a file name), so the sandbox's stderr markers cannot be forged by names.
 */
async function runContent(request: RendererRequest): Promise<RendererResponse> {
  const limits = sandboxLimits();
  const yamlKeys = Object.keys(request.yaml ?? {});
  const values = request.values ?? [];
  const renders = request.renders ?? [];
  const jobs: JobKey[] = [...yamlKeys.map((_, i) => `yaml ${i}`), ...values.map((_, i) => `values ${i}`), ...renders.map((_, i) => `renders ${i}`)];
  const out = emptyResponse();
  const valueResults: ValuesResult[] = new Array(values.length);
  const indexOf = (key: JobKey): [string, number] => {
    const [kind, i] = key.split(" ");
    return [kind, Number(i)];
  };
  // GitRepos by index, so that the sandbox sees no name the content chose.
  const gitRepos = new Map<string, number>();
  const gitRepoOf = (key: JobKey): number | undefined => {
    const [kind, i] = indexOf(key);
    const of = request.gitRepoOf;
    const name = kind === "yaml" ? of?.yaml?.[yamlKeys[i]] : kind === "values" ? of?.values?.[i] : of?.renders?.[renders[i].id];
    if (name === undefined) return undefined;
    if (!gitRepos.has(name)) gitRepos.set(name, gitRepos.size);
    return gitRepos.get(name);
  };
  jobs.forEach(gitRepoOf);
  const names = [...gitRepos.keys()];
  const groups = { of: gitRepoOf, secondsLeft: names.map((n) => request.gitRepoSecondsLeft?.[n] ?? limits.gitRepoSeconds) };
  const spentMs = names.map(() => 0);
  await runPerGitRepo<{ response: RendererResponse; valuesAt: number[] }>(
    jobs,
    async (group, secondsLeft) => {
      // Only what this group's jobs read: each GitRepo's process gets its own bundles and values.
      const sub: RendererWireRequest & { jobGroups: Record<string, number> } = {
        bundles: {},
        clusters: {},
        helm: {},
        capabilities: request.capabilities,
        yaml: {},
        values: [],
        renders: [],
        jobGroups: {},
        groupSeconds: secondsLeft,
      };
      const valuesAt: number[] = []; // position in sub.values -> index in values
      for (const key of group) {
        const [kind, i] = indexOf(key);
        let local: JobKey;
        if (kind === "yaml") {
          sub.yaml![String(i)] = request.yaml![yamlKeys[i]];
          local = key;
        } else if (kind === "values") {
          local = `values ${valuesAt.length}`;
          valuesAt.push(i);
          sub.values!.push(values[i]);
          const [cluster, helm] = values[i];
          if (request.clusters?.[cluster]) sub.clusters![cluster] = request.clusters[cluster];
          if (request.helm?.[helm]) sub.helm![helm] = request.helm[helm];
        } else {
          sub.renders!.push({ ...renders[i], id: String(i) });
          if (request.bundles?.[renders[i].bundle]) sub.bundles![renders[i].bundle] = request.bundles[renders[i].bundle];
          local = key;
        }
        const g = gitRepoOf(key);
        if (g !== undefined) sub.jobGroups[local] = g;
      }
      const o = await runSandboxOnce<RendererResponse & { groupUsedMs?: number[] }>(rendererBinary(), sub, limits);
      for (const [g, ms] of o.ok ? (o.response.groupUsedMs ?? []).entries() : o.spentMs) spentMs[g] += ms;
      if (o.ok) return { ok: true, response: { response: o.response, valuesAt } };
      const global = (k: JobKey) => (k.startsWith("values ") ? `values ${valuesAt[indexOf(k)[1]]}` : k);
      return { ...o, running: o.running.map(global), stopped: new Map([...o.stopped].map(([k, why]) => [global(k), why])) };
    },
    {
      done: ({ response, valuesAt }) => {
        for (const [i, r] of Object.entries(response.yaml)) out.yaml[yamlKeys[Number(i)]] = r;
        for (const [i, r] of Object.entries(response.renders)) out.renders[renders[Number(i)].id] = r;
        valuesAt.forEach((i, pos) => (valueResults[i] = response.values[response.valueOf[pos]]));
      },
      failed: (key, reason) => {
        const [kind, i] = indexOf(key);
        if (kind === "yaml") out.yaml[yamlKeys[i]] = { error: reason };
        else if (kind === "values") valueResults[i] = { changed: false, error: reason };
        else out.renders[renders[i].id] = { objects: null, crds: null, hooks: null, style: "yaml", error: reason };
      },
    },
    limits,
    groups,
  );
  out.gitRepoSpentSeconds = Object.fromEntries(names.map((n, g) => [n, spentMs[g] / 1000]));
  // Equal results share one object, as the renderer's own `valueOf` does within one run.
  const distinct = new Map<ValuesResult, number>();
  for (const r of valueResults) {
    if (!distinct.has(r)) {
      distinct.set(r, out.values.length);
      out.values.push(r);
    }
    out.valueOf.push(distinct.get(r)!);
  }
  return out;
}
