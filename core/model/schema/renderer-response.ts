/**
 * What fleet-render answers a batch with, results by job: the one source of renderer-protocol.ts's
 * result types and of fleet-render's (generated). Go writes some fields even when empty
 * (`goKeepEmpty`: null rather than absent), which TypeScript reads as optional.
 */
import { anyMap, anyValue, bool, describe, int, int64, list, map, nullable, oneOf, struct, text } from "./describe";
import { CAPABILITIES, LOOKUP_ANSWER, LOOKUP_KEY, RENDER_FILE } from "./renderer-request";

const error = { type: text, optional: true, doc: "" } as const;

export const VALUES_RESULT = describe({
  name: "ValuesResult",
  doc: "",
  fields: {
    values: { type: anyMap, optional: true, doc: "Values is absent when Fleet leaves the options untouched (a cluster without labels, no values)." },
    changed: { type: bool, doc: "" },
    error,
  },
});

export const RENDER_HOOK = describe({
  name: "Hook",
  doc: "",
  fields: {
    events: { type: list(text), doc: "" },
    weight: { type: int, doc: "" },
    deletePolicies: { type: list(text), doc: "" },
    object: { type: anyMap, doc: "" },
  },
});

export const RENDER_RESULT = describe({
  name: "RenderResult",
  doc: "RenderResult: objects in Helm's install order, then the chart's crds/ and hooks apart, as the agent treats them differently (CRDs first, never post-rendered; hooks around the install).",
  fields: {
    objects: { type: nullable(list(anyMap)), doc: "" },
    crds: { type: nullable(list(anyMap)), doc: "" },
    hooks: { type: nullable(list(struct(RENDER_HOOK))), doc: "" },
    style: { type: oneOf(["helm", "kustomize", "yaml"]), doc: "" },
    warnings: { type: list(text), optional: true, doc: "Warnings: what Fleet does silently (a file skipped, an overlay that does not exist)." },
    error,
    lookups: {
      type: list(struct(LOOKUP_KEY)),
      optional: true,
      doc: "Lookups: every `lookup` the templates made (with a table: Lookups of the job), answered or not.",
    },
  },
});

const PULL_RESULT = describe({
  name: "PullResult",
  doc: "PullResult: the chart's files, named under `prefix`, or why it could not be had.",
  fields: {
    prefix: { type: text, doc: "Prefix is the bundle directory the files belong under: Fleet's `.chart/<sha256>`." },
    files: { type: nullable(list(struct(RENDER_FILE))), doc: "" },
    source: { type: text, doc: "Source is what was downloaded (the archive URL or OCI reference), for messages." },
    version: {
      type: text,
      optional: true,
      doc: "Version is the exact chart version this job resolved (ResolveOnly), or, of a pull, the version in the pulled chart's Chart.yaml when it has one.",
    },
    warnings: { type: list(text), optional: true, doc: "" },
    error,
  },
});

const LIVE_OBJECT = describe({
  name: "LiveObject",
  doc: "LiveObject is an object's live metadata; null in OwnersResult.objects when it does not exist.",
  fields: {
    labels: { type: nullable(map(text)), optional: true, goKeepEmpty: true, doc: "" },
    annotations: { type: nullable(map(text)), optional: true, goKeepEmpty: true, doc: "" },
    managers: { type: nullable(list(text)), optional: true, goKeepEmpty: true, doc: "" },
    deleted: { type: bool, optional: true, doc: "Deleted: a Delete job removed it." },
  },
});

export const READINESS_RESULT = describe({
  name: "ReadinessResult",
  doc: "ReadinessResult is a live object judged as Fleet's agent judges it (core/renderer/readiness.ts asks).",
  fields: {
    ready: { type: bool, doc: "" },
    state: { type: text, optional: true, doc: "" },
    error: { type: bool, optional: true, doc: "" },
    transitioning: { type: bool, optional: true, doc: "" },
    message: { type: list(text), optional: true, doc: "" },
    problem: { type: text, optional: true, doc: "Problem: the object could not be read as one (not judged)." },
  },
});

export const RENDERER_RESPONSE = describe({
  name: "Response",
  doc: "",
  fields: {
    values: {
      type: list(struct(VALUES_RESULT)),
      goRaw: true,
      doc: "Values: the distinct ValuesResults of the values jobs; ValueOf: per job, in job order, the index of its result in Values. Many jobs share a result (the same values on clusters that differ only in what the template does not read), and the caller then parses and hashes it once.",
    },
    valueOf: { type: list(int), doc: "" },
    renders: {
      type: map(struct(RENDER_RESULT)),
      goRaw: true,
      doc: "Renders: each RenderResult encoded by its worker (in parallel, and measured against the output limit).",
    },
    pulls: { type: map(struct(PULL_RESULT)), doc: "" },
    yaml: {
      type: map(
        struct(describe({ name: "YAMLResult", doc: "", fields: { json: { type: anyValue, optional: true, goRaw: true, goName: "JSON", doc: "" }, error } })),
      ),
      goName: "YAML",
      doc: "",
    },
    owners: {
      type: map(
        struct(
          describe({
            name: "OwnersResult",
            doc: "",
            fields: { objects: { type: nullable(list(nullable(struct(LIVE_OBJECT)))), optional: true, goKeepEmpty: true, doc: "" }, error },
          }),
        ),
      ),
      doc: "",
    },
    impersonate: {
      type: map(struct(describe({ name: "ImpersonateResult", doc: "", fields: { kubeconfig: { type: text, optional: true, doc: "" }, error } }))),
      doc: "",
    },
    readiness: { type: map(struct(READINESS_RESULT)), doc: "" },
    discovery: {
      type: map(
        struct(
          describe({
            name: "DiscoveryResult",
            doc: "",
            fields: { capabilities: { type: struct(CAPABILITIES), optional: true, goPointer: true, doc: "" }, error },
          }),
        ),
      ),
      doc: "",
    },
    lookupReads: {
      type: map(
        struct(
          describe({
            name: "LookupResult",
            doc: "",
            fields: { answers: { type: list(struct(LOOKUP_ANSWER)), optional: true, goKeepEmpty: true, doc: "" }, error },
          }),
        ),
      ),
      doc: "",
    },
    groupUsedMs: {
      type: list(int64),
      optional: true,
      doc: "GroupUsedMs: the time each group (GitRepo, by index) spent here, which the caller charges to it across the batches of one operation (core/renderer/render-budget.ts).",
    },
  },
});
