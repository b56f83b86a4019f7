/**
 * The bridge to fleet-render (tools/fleet-render), the Go program that runs Fleet's own libraries:
 * helm values templating (text/template + sprig), Helm's chart rendering and kustomize, and pulling
 * remote charts with Helm's downloader. One process per batch: the pipeline sends every job of a stage
 * at once and awaits every result. The batch runs asynchronously in a process group of its own
 * (core/child-group.ts), so a stopped operation kills it at once (core/stop-signal.ts). The binary is
 * built from pinned modules on first use (tools/build-render.sh) and cached outside the repository; a
 * build failure is an error, never a fallback to something approximate.
 */
import { runInGroup } from "../child-group";
import { childCommand, stopSignal, throwIfStopped } from "../stop-signal";
import { builtToolPath } from "../tool-build";
import { JobKey, MAX_RENDERER_OUTPUT_BYTES, runIsolating, runSandboxOnce, sandboxLimits } from "./sandbox";
import type { DeletePolicy } from "../desired/pair";

export interface ClusterContext {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  templateValues: Record<string, unknown>;
}

export interface HelmValuesInput {
  values?: Record<string, unknown>;
  templateValues?: Record<string, string>;
  disablePreProcess?: boolean;
}

export interface RenderFile {
  name: string;
  content: string;
  encoding?: "base64";
}

export interface RenderBundle {
  name: string;
  manifestId: string;
  commit: string;
  files: RenderFile[];
}

export interface RenderOptions {
  defaultNamespace?: string;
  namespace?: string;
  deleteCRDResources?: boolean;
  helm: {
    chart?: string;
    repo?: string;
    version?: string;
    releaseName?: string;
    values?: Record<string, unknown>;
    disableDNS?: boolean;
    skipSchemaValidation?: boolean;
    disableDependencyUpdate?: boolean;
  };
  kustomize: { dir?: string };
  yaml: { overlays?: string[] };
}

/**
 * kubeVersion and apiVersions: Helm's --kube-version and --api-versions (render mode; the API versions
 * join Helm's defaults). capabilities: a key of RendererRequest.capabilities, a live cluster's own.
 */
export interface RenderJob {
  id: string;
  bundle: string;
  releaseName: string;
  namespace: string;
  kubeVersion?: string;
  apiVersions?: string[];
  capabilities?: string;
  /** On a live cluster: what `lookup` answers (as read for this job); absent, `lookup` finds nothing, as in `helm template`. */
  lookups?: LookupAnswer[];
  /** On a live cluster, the Helm revision the pair last deployed: rendered as Helm's upgrade to the next. */
  revision?: number;
  options: RenderOptions;
  /** On a live cluster, the keys helm.valuesFrom references as read there, in Fleet's order: merged over options.helm.values. */
  valuesFrom?: { from: string; data: string }[];
}

/** One `lookup apiVersion kind namespace name` call of a template (an empty name lists). */
export interface LookupKey {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** What the cluster returned for a lookup: the object (or list); neither when it does not exist. */
export interface LookupAnswer {
  key: LookupKey;
  object?: Record<string, unknown>;
  error?: string;
}

/** Lookups to read on one cluster, with the identity that deploys the bundle. */
export interface LookupJob {
  id: string;
  kubeconfig: string;
  context: string;
  keys: LookupKey[];
}

export interface LookupResult {
  answers?: LookupAnswer[];
  error?: string;
}

/** What a chart sees of a live cluster: its version and every group/version(/kind) it serves (discovery). */
export interface Capabilities {
  kubeVersion: { version: string; major: string; minor: string };
  apiVersions: string[];
}

/** A cluster whose capabilities to read (the stack's credentials). */
export interface DiscoveryJob {
  id: string;
  kubeconfig: string;
  context: string;
}

export interface DiscoveryResult {
  capabilities?: Capabilities;
  error?: string;
}

export interface RendererRequest {
  bundles?: Record<string, RenderBundle>;
  clusters?: Record<string, ClusterContext>;
  helm?: Record<string, HelmValuesInput>;
  /** Values jobs: [cluster key, helm key]; results come back in the same order. */
  values?: [cluster: string, helm: string][];
  renders?: RenderJob[];
  pulls?: PullJob[];
  /** YAML texts to read as Fleet reads them (sigs.k8s.io/yaml), by key. */
  yaml?: Record<string, string>;
  /** Per cluster, objects whose live metadata to read (core/ownership.ts). */
  owners?: OwnersJob[];
  /** Kubeconfigs to rewrite so they act as a service account (core/service-accounts.ts). */
  impersonate?: ImpersonateJob[];
  /** Live objects to judge ready or not, as Fleet's agent does (core/readiness.ts). */
  readiness?: { id: string; object: Record<string, unknown>; ignore: Record<string, string>[] }[];
  /** Clusters whose capabilities to read (discovery). */
  discovery?: DiscoveryJob[];
  /** Live clusters' capabilities by key, referenced by render jobs (sent once, not per job). */
  capabilities?: Record<string, Capabilities>;
  /** Objects templates asked `lookup` for, to read on their clusters (read-only). */
  lookupReads?: LookupJob[];
  /**
   * The GitRepo of each content job (yaml by key, values by position, renders by id), whose jobs share
   * PULUMI_FLEET_GITREPO_RENDER_SECONDS (sandbox.ts); a job without one has only the per-job limit.
   */
  gitRepoOf?: { yaml?: Record<string, string>; values?: string[]; renders?: Record<string, string> };
}

/** A cluster's connection (the stack's kubeconfig text or path, else the ambient one and context) and objects to look up. */
export interface OwnersJob {
  id: string;
  kubeconfig: string;
  context: string;
  objects: { apiVersion: string; kind: string; namespace: string; name: string; labels?: Record<string, string> }[];
  /** Delete each object that exists and carries all of its `labels` (the crash journal's sweep, core/journal.ts). */
  delete?: boolean;
  /** How those deletes propagate, as the delete policy decided (core/desired/delete-policy.ts); required with `delete`. */
  propagation?: DeletePolicy["propagation"];
}

/** What runs a renderer request: runRenderer, or a fake in unit tests (core/desired/facts.ts). */
export type Renderer = (request: RendererRequest) => Promise<RendererResponse>;

/** A cluster's connection, rewritten to act as user `as`. */
export interface ImpersonateJob {
  id: string;
  kubeconfig: string;
  context: string;
  as: string;
}

export interface ImpersonateResult {
  kubeconfig?: string;
  error?: string;
}

/** An object's live metadata; null in OwnersResult.objects when it does not exist. */
export interface LiveObject {
  labels?: Record<string, string> | null;
  annotations?: Record<string, string> | null;
  managers?: string[] | null;
  deleted?: boolean;
}

export interface OwnersResult {
  objects?: (LiveObject | null)[] | null;
  error?: string;
}

/** A GitRepo's Helm credentials and transport settings (Fleet's helmSecretName keys). */
export interface HelmAuth {
  username?: string;
  password?: string;
  caBundle?: string;
  insecureSkipVerify?: boolean;
  basicHTTP?: boolean;
}

/** A remote chart to download into a bundle (Helm repository, OCI reference or archive URL). */
export interface PullJob {
  id: string;
  chart?: string;
  repo?: string;
  version?: string;
  auth?: HelmAuth;
  credentialsRegex?: string;
  /** The GitRepo's allowedChartURLs (pull_transport.go); empty refuses every pull. */
  allowedURLs?: string[];
  timeoutSeconds?: number;
}

/** The chart's files, named under `prefix` (Fleet's `.chart/<sha256>`), or why it could not be had. */
export interface PullResult {
  prefix: string;
  files: RenderFile[] | null;
  source: string;
  warnings?: string[];
  error?: string;
}

export interface ValuesResult {
  values?: Record<string, unknown>;
  changed: boolean;
  error?: string;
}

export type RenderedObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
};

export interface RenderHook {
  events: string[];
  weight: number;
  deletePolicies: string[];
  object: RenderedObject;
}

export interface RenderResult {
  objects: RenderedObject[] | null;
  crds: RenderedObject[] | null;
  hooks: RenderHook[] | null;
  style: "helm" | "kustomize" | "yaml";
  warnings?: string[];
  error?: string;
  /** Every `lookup` the templates made (only with a table: RenderJob.lookups). */
  lookups?: LookupKey[];
}

/** A live object judged as Fleet's agent judges it (core/readiness.ts asks). */
export interface Readiness {
  ready: boolean;
  state?: string;
  error?: boolean;
  transitioning?: boolean;
  message?: string[];
  /** The object could not be read as one (not judged). */
  problem?: string;
}

/**
 * `values`: the distinct results of the values jobs; `valueOf[i]`: the index of job i's result in it
 * (jobs with equal results share one, so they are parsed once and share one object).
 */
export interface RendererResponse {
  values: ValuesResult[];
  valueOf: number[];
  renders: Record<string, RenderResult>;
  pulls: Record<string, PullResult>;
  yaml: Record<string, { json?: unknown; error?: string }>;
  owners: Record<string, OwnersResult>;
  impersonate: Record<string, ImpersonateResult>;
  readiness: Record<string, Readiness>;
  discovery: Record<string, DiscoveryResult>;
  lookupReads: Record<string, LookupResult>;
}

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
 * no batch and kills the one running: it throws StoppedError (core/stop-signal.ts).
 */
export async function runRenderer(request: RendererRequest): Promise<RendererResponse> {
  throwIfStopped();
  const { pulls, owners, impersonate, readiness, discovery, lookupReads, ...content } = request;
  const response = emptyResponse();
  if (pulls?.length || owners?.length || impersonate?.length || readiness?.length || discovery?.length || lookupReads?.length) {
    Object.assign(
      response,
      pick(await runTrusted({ pulls, owners, impersonate, readiness, discovery, lookupReads }), [
        "pulls",
        "owners",
        "impersonate",
        "readiness",
        "discovery",
        "lookupReads",
      ]),
    );
  }
  if (Object.keys(content.yaml ?? {}).length || content.values?.length || content.renders?.length) {
    Object.assign(response, pick(await runContent(content), ["values", "valueOf", "renders", "yaml"]));
  }
  return response;
}

function emptyResponse(): RendererResponse {
  return { values: [], valueOf: [], renders: {}, pulls: {}, yaml: {}, owners: {}, impersonate: {}, readiness: {}, discovery: {}, lookupReads: {} };
}

function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>;
}

async function runTrusted(request: RendererRequest): Promise<RendererResponse> {
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
  const groups = { of: gitRepoOf, secondsLeft: [...gitRepos.keys()].map(() => limits.gitRepoSeconds) };
  await runIsolating<{ response: RendererResponse; valuesAt: number[] }>(
    jobs,
    async (group, secondsLeft) => {
      const sub: RendererRequest & { jobGroups: Record<string, number>; groupSeconds: (number | null)[] } = {
        bundles: request.bundles,
        clusters: request.clusters,
        helm: request.helm,
        capabilities: request.capabilities,
        yaml: {},
        values: [],
        renders: [],
        jobGroups: {},
        groupSeconds: secondsLeft.map((s) => (Number.isFinite(s) ? Math.max(s, 0) : null)),
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
        } else {
          sub.renders!.push({ ...renders[i], id: String(i) });
          local = key;
        }
        const g = gitRepoOf(key);
        if (g !== undefined && Number.isFinite(secondsLeft[g])) sub.jobGroups[local] = g;
      }
      const o = await runSandboxOnce<RendererResponse>(rendererBinary(), sub, limits);
      if (o.ok) return { ok: true, response: { response: o.response, valuesAt } };
      const global = (k: JobKey) => (k.startsWith("values ") ? `values ${valuesAt[indexOf(k)[1]]}` : k);
      return { ...o, running: o.running.map(global), limit: o.limit?.kind === "time" ? { kind: "time", job: global(o.limit.job) } : o.limit };
    },
    ({ response, valuesAt }) => {
      for (const [i, r] of Object.entries(response.yaml)) out.yaml[yamlKeys[Number(i)]] = r;
      for (const [i, r] of Object.entries(response.renders)) out.renders[renders[Number(i)].id] = r;
      valuesAt.forEach((i, pos) => (valueResults[i] = response.values[response.valueOf[pos]]));
    },
    (key, reason) => {
      const [kind, i] = indexOf(key);
      if (kind === "yaml") out.yaml[yamlKeys[i]] = { error: reason };
      else if (kind === "values") valueResults[i] = { changed: false, error: reason };
      else out.renders[renders[i].id] = { objects: null, crds: null, hooks: null, style: "yaml", error: reason };
    },
    limits,
    groups,
  );
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
