/**
 * What pulumi-fleet and fleet-render (tools/fleet-render) say to each other: one request of jobs per
 * batch, one response of results by job. Their types are inferred from the schema
 * (schema/renderer-request.ts, schema/renderer-response.ts), from which fleet-render's are generated.
 * The bridge that runs a batch is fleet-render.ts.
 */
import type { Shape } from "./schema/describe";
import type {
  CAPABILITIES,
  CLUSTER_CONTEXT,
  HELM_AUTH,
  HELM_VALUES_INPUT,
  IMPERSONATE_JOB,
  LOOKUP_ANSWER,
  LOOKUP_JOB,
  LOOKUP_KEY,
  OWNERS_JOB,
  PULL_JOB,
  RENDER_BUNDLE,
  RENDER_FILE,
  RENDER_JOB,
  RENDERER_REQUEST,
} from "./schema/renderer-request";
import type { RENDER_OPTIONS } from "./schema/render-options";
import type { READINESS_RESULT, RENDER_HOOK, RENDER_RESULT, RENDERER_RESPONSE, VALUES_RESULT } from "./schema/renderer-response";

export type ClusterContext = Shape<typeof CLUSTER_CONTEXT>;
export type HelmValuesInput = Shape<typeof HELM_VALUES_INPUT>;
export type RenderFile = Shape<typeof RENDER_FILE>;
export type RenderBundle = Shape<typeof RENDER_BUNDLE>;
/** fleet.yaml's options a render reads (schema/render-options.ts). */
export type RenderOptions = Shape<typeof RENDER_OPTIONS>;
/** kubeVersion and apiVersions: Helm's --kube-version and --api-versions; capabilities: a key of RendererRequest.capabilities, a live cluster's own. */
export type RenderJob = Shape<typeof RENDER_JOB>;
/** One `lookup apiVersion kind namespace name` call of a template (an empty name lists). */
export type LookupKey = Shape<typeof LOOKUP_KEY>;
/** What the cluster returned for a lookup: the object (or list); neither when it does not exist. */
export type LookupAnswer = Shape<typeof LOOKUP_ANSWER>;
/** Lookups to read on one cluster, with the identity that deploys the bundle. */
export type LookupJob = Shape<typeof LOOKUP_JOB>;
/** What a chart sees of a live cluster: its version and every group/version(/kind) it serves (discovery). */
export type Capabilities = Shape<typeof CAPABILITIES>;
/** A cluster whose capabilities to read (the stack's credentials). */
export type DiscoveryJob = NonNullable<RendererWireRequest["discovery"]>[number];
/** A cluster's connection and objects to look up (or, with `delete`, to delete: the crash journal's sweep). */
export type OwnersJob = Shape<typeof OWNERS_JOB>;
/** A cluster's connection, rewritten to act as user `as`. */
export type ImpersonateJob = Shape<typeof IMPERSONATE_JOB>;
/** A GitRepo's Helm credentials and transport settings (Fleet's helmSecretName keys). */
export type HelmAuth = Shape<typeof HELM_AUTH>;
/** A remote chart to download into a bundle (Helm repository, OCI reference or archive URL). */
export type PullJob = Shape<typeof PULL_JOB>;

/** A batch as fleet-render reads it (fleet-render.ts sends each sandbox process its GitRepos' part, with their groups). */
export type RendererWireRequest = Shape<typeof RENDERER_REQUEST>;

/** A batch as core asks for it: the wire's jobs and inputs, and which GitRepo each content job is of (fleet-render.ts makes the groups). */
export type RendererRequest = Omit<RendererWireRequest, "jobGroups" | "groupSeconds"> & {
  /**
   * The GitRepo of each content job (yaml by key, values by position, renders by id), whose jobs share
   * PULUMI_FLEET_GITREPO_RENDER_SECONDS (sandbox.ts); a job without one has only the per-job limit.
   */
  gitRepoOf?: { yaml?: Record<string, string>; values?: string[]; renders?: Record<string, string> };
  /** The time each GitRepo has left of its budget, seconds (core/renderer/render-budget.ts); absent: all of it. */
  gitRepoSecondsLeft?: Record<string, number>;
};

/** What runs a renderer request: runRenderer, or a fake in unit tests (core/desired/facts.ts). */
export type Renderer = (request: RendererRequest) => Promise<RendererResponse>;

export type RenderedObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
};

/** A batch's results as fleet-render writes them (schema/renderer-response.ts). */
type WireResponse = Shape<typeof RENDERER_RESPONSE>;

export type ValuesResult = Shape<typeof VALUES_RESULT>;
/** A live object judged as Fleet's agent judges it (core/renderer/readiness.ts asks). */
export type Readiness = Shape<typeof READINESS_RESULT>;
export type PullResult = WireResponse["pulls"][string];
export type OwnersResult = WireResponse["owners"][string];
/** An object's live metadata; null in OwnersResult.objects when it does not exist. */
export type LiveObject = NonNullable<NonNullable<OwnersResult["objects"]>[number]>;
export type ImpersonateResult = WireResponse["impersonate"][string];
export type DiscoveryResult = WireResponse["discovery"][string];
export type LookupResult = WireResponse["lookupReads"][string];

export type RenderHook = Omit<Shape<typeof RENDER_HOOK>, "object"> & { object: RenderedObject };

/** A render's objects, as the schema gives them, typed as the Kubernetes objects they are. */
export type RenderResult = Omit<Shape<typeof RENDER_RESULT>, "objects" | "crds" | "hooks"> & {
  objects: RenderedObject[] | null;
  crds: RenderedObject[] | null;
  hooks: RenderHook[] | null;
};

/**
 * `values`: the distinct results of the values jobs; `valueOf[i]`: the index of job i's result in it
 * (jobs with equal results share one, so they are parsed once and share one object).
 */
export type RendererResponse = Omit<WireResponse, "renders" | "groupUsedMs"> & {
  renders: Record<string, RenderResult>;
  /** The time each GitRepo's content jobs took in this batch, seconds (core/renderer/render-budget.ts). */
  gitRepoSpentSeconds?: Record<string, number>;
};
