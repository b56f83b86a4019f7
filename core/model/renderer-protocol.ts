/**
 * What pulumi-fleet and fleet-render (tools/fleet-render) say to each other: one request of jobs per
 * batch, one response of results by job (the Go side's request.go mirrors these shapes). The bridge
 * that runs a batch is fleet-render.ts.
 */
import type { DeletePolicy } from "./pair";

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
  /** The job's own deadline (the operator's PULUMI_FLEET_CLUSTER_READ_SECONDS); absent: fleet-render's 60 s. */
  timeoutSeconds?: number;
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
  /** Per cluster, objects whose live metadata to read (core/desired/ownership.ts). */
  owners?: OwnersJob[];
  /** Kubeconfigs to rewrite so they act as a service account (core/desired/service-accounts.ts). */
  impersonate?: ImpersonateJob[];
  /** Live objects to judge ready or not, as Fleet's agent does (core/renderer/readiness.ts). */
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
  /** The time each GitRepo has left of its budget, seconds (core/renderer/render-budget.ts); absent: all of it. */
  gitRepoSecondsLeft?: Record<string, number>;
}

/** A cluster's connection (the stack's kubeconfig text or path, else the ambient one and context) and objects to look up. */
export interface OwnersJob {
  id: string;
  kubeconfig: string;
  context: string;
  objects: { apiVersion: string; kind: string; namespace: string; name: string; labels?: Record<string, string> }[];
  /** Delete each object that exists and carries all of its `labels` (the crash journal's sweep, core/desired/journal.ts). */
  delete?: boolean;
  /** How those deletes propagate, as the delete policy decided (core/desired/delete-policy.ts); required with `delete`. */
  propagation?: DeletePolicy["propagation"];
  /** The job's own deadline (the operator's PULUMI_FLEET_CLUSTER_READ_SECONDS); absent: fleet-render's 60 s. */
  timeoutSeconds?: number;
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

/** A live object judged as Fleet's agent judges it (core/renderer/readiness.ts asks). */
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
  /** The time each GitRepo's content jobs took in this batch, seconds (core/renderer/render-budget.ts). */
  gitRepoSpentSeconds?: Record<string, number>;
}
