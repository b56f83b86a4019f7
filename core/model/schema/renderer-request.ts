/**
 * One batch of jobs for fleet-render (tools/fleet-render), as it crosses the boundary: the one source
 * of renderer-protocol.ts's request types and of fleet-render's Request (generated). Each job kind
 * names its trust class (describe.ts Trust); the other fields are inputs the jobs reference by key.
 */
import { anyMap, bool, describe, float, int, list, map, oneOf, pair, raw, struct, text, type Trust } from "./describe";
import { RENDER_OPTIONS } from "./render-options";

export const RENDER_FILE = describe({
  name: "FileInput",
  doc: "",
  fields: {
    name: { type: text, doc: "" },
    content: { type: text, doc: "" },
    encoding: { type: oneOf(["base64"]), optional: true, doc: `"base64" for files that are not UTF-8 text (chart archives); empty for text.` },
  },
});

export const RENDER_BUNDLE = describe({
  name: "BundleInput",
  doc: "BundleInput is a bundle's files after Fleet's content rules (paths relative to the bundle root).",
  fields: {
    name: { type: text, doc: "" },
    manifestId: { type: text, doc: "" },
    commit: { type: text, doc: "" },
    files: { type: list(struct(RENDER_FILE)), doc: "" },
  },
});

export const CLUSTER_CONTEXT = describe({
  name: "ClusterInput",
  doc: "ClusterInput is the template context Fleet gives helm values (`.ClusterName` and the rest).",
  goEmbed: "clusterCache",
  fields: {
    name: { type: text, doc: "" },
    namespace: { type: text, doc: "" },
    labels: { type: map(text), doc: "" },
    annotations: { type: map(text), doc: "" },
    templateValues: { type: anyMap, doc: "" },
  },
});

export const HELM_VALUES_INPUT = describe({
  name: "HelmValuesInput",
  doc: "HelmValuesInput is the part of the merged helm options that values processing reads.",
  fields: {
    values: { type: anyMap, optional: true, doc: "" },
    templateValues: { type: map(text), optional: true, doc: "" },
    disablePreProcess: { type: bool, optional: true, doc: "" },
  },
});

export const LOOKUP_KEY = describe({
  name: "LookupKey",
  doc: "LookupKey is one `lookup apiVersion kind namespace name` call of a template (an empty name lists).",
  fields: { apiVersion: { type: text, doc: "" }, kind: { type: text, doc: "" }, namespace: { type: text, doc: "" }, name: { type: text, doc: "" } },
});

export const LOOKUP_ANSWER = describe({
  name: "LookupAnswer",
  doc: "LookupAnswer is what the cluster returned for a lookup: the object (or list); neither when it does not exist.",
  fields: { key: { type: struct(LOOKUP_KEY), doc: "" }, object: { type: anyMap, optional: true, doc: "" }, error: { type: text, optional: true, doc: "" } },
});

export const RENDER_JOB = describe({
  name: "RenderJob",
  doc: "",
  fields: {
    id: { type: text, doc: "" },
    bundle: { type: text, doc: "" },
    releaseName: { type: text, doc: "" },
    namespace: { type: text, doc: "" },
    kubeVersion: {
      type: text,
      optional: true,
      doc: "KubeVersion and APIVersions: Helm's --kube-version and --api-versions (render mode; the API versions join Helm's defaults). Capabilities, a key of Request.Capabilities, replaces both with a live cluster's own, as Fleet's agent sees them.",
    },
    apiVersions: { type: list(text), optional: true, doc: "" },
    capabilities: { type: text, optional: true, doc: "" },
    lookups: {
      type: list(struct(LOOKUP_ANSWER)),
      optional: true,
      goPointer: true,
      doc: "Lookups: on a live cluster (with Capabilities), what `lookup` answers, as read for this job; absent, `lookup` finds nothing, as in `helm template`.",
    },
    revision: {
      type: int,
      optional: true,
      doc: "Revision: on a live cluster, the Helm revision the pair last deployed (0: never): the render is then Helm's upgrade to Revision+1 (.Release.IsUpgrade, .Release.Revision), as on Fleet's agent.",
    },
    options: { type: struct(RENDER_OPTIONS), doc: "" },
    valuesFrom: {
      type: list(struct(describe({ name: "ValuesFromInput", doc: "", fields: { from: { type: text, doc: "" }, data: { type: text, doc: "" } } }))),
      optional: true,
      doc: "ValuesFrom: on a live cluster, the keys helm.valuesFrom references, as read there with the deploying identity, in Fleet's order (valuesfrom.go): merged over Options.Helm.Values.",
    },
  },
});

export const HELM_AUTH = describe({
  name: "HelmAuth",
  doc: "HelmAuth is a GitRepo's Helm credentials and transport settings (Fleet's helmSecretName keys).",
  fields: {
    username: { type: text, optional: true, doc: "" },
    password: { type: text, optional: true, doc: "" },
    caBundle: { type: text, optional: true, goName: "CABundle", doc: "" },
    insecureSkipVerify: { type: bool, optional: true, doc: "" },
    basicHTTP: { type: bool, optional: true, doc: "" },
  },
});

export const PULL_JOB = describe({
  name: "PullJob",
  doc: "PullJob is a remote chart to download into a bundle (Helm repository, OCI reference or archive URL).",
  fields: {
    id: { type: text, doc: "" },
    chart: { type: text, optional: true, doc: "" },
    repo: { type: text, optional: true, doc: "" },
    version: { type: text, optional: true, doc: "" },
    auth: { type: struct(HELM_AUTH), optional: true, doc: "" },
    credentialsRegex: {
      type: text,
      optional: true,
      doc: "CredentialsRegex is the GitRepo's helmRepoURLRegex: the credentials in Auth are sent only with requests whose normalized URL (pull_transport.go) it matches from the start; empty sends them nowhere.",
    },
    allowedURLs: {
      type: list(text),
      optional: true,
      doc: "AllowedURLs is the GitRepo's allowedChartURLs (the operator's, never the content's): regular expressions, each matched against the whole normalized URL of a request; a request none matches is refused. Empty: no remote chart may be pulled.",
    },
    timeoutSeconds: { type: float, optional: true, doc: "TimeoutSeconds bounds the whole pull (default pullTimeout); set by the operator's environment." },
    resolveOnly: {
      type: bool,
      optional: true,
      doc: "ResolveOnly: only the version is resolved, nothing downloaded (Fleet's ChartVersion for a HelmOp): the OCI repository's tags, the Helm repository's index.yaml, or the version as given without a repository.",
    },
  },
});

/** A cluster's connection: the stack's kubeconfig text or path, else the ambient one, and its context. */
const connection = {
  id: { type: text, doc: "" },
  kubeconfig: {
    type: text,
    doc: "Kubeconfig: the stack's kubeconfig for the cluster, as text or as a path; empty for the ambient kubeconfig (KUBECONFIG or ~/.kube/config) with Context.",
  },
  context: { type: text, doc: "" },
} as const;
const deadline = {
  type: int,
  optional: true,
  doc: "TimeoutSeconds: the job's own deadline (the operator's PULUMI_FLEET_CLUSTER_READ_SECONDS, per GitRepo and cluster); 0: fleet-render's 60 s.",
} as const;

export const OWNERS_JOB = describe({
  name: "OwnersJob",
  doc: "OwnersJob: per cluster, objects whose live metadata to read (owners.go), or to delete.",
  fields: {
    ...connection,
    objects: {
      type: list(
        struct(
          describe({
            name: "ObjectRef",
            doc: "",
            fields: {
              ...LOOKUP_KEY.fields,
              labels: { type: map(text), optional: true, doc: "Labels an object must carry to be deleted (Delete jobs only)." },
            },
          }),
        ),
      ),
      doc: "",
    },
    delete: {
      type: bool,
      optional: true,
      doc: "Delete: remove each object that exists and carries all of its ref's Labels (the crash journal's sweep, core/desired/journal.ts).",
    },
    propagation: {
      type: oneOf(["background", "foreground", "orphan"]),
      optional: true,
      doc: "Propagation of those deletes, as the delete policy decided it (core/desired/delete-policy.ts); a Delete job without one is refused.",
    },
    timeoutSeconds: deadline,
  },
});

export const IMPERSONATE_JOB = describe({
  name: "ImpersonateJob",
  doc: "ImpersonateJob: a cluster's connection, rewritten to act as user `as`.",
  fields: {
    ...connection,
    as: { type: text, doc: "As: the user to act as, system:serviceaccount:<namespace>:<name>; empty: none, the kubeconfig as kubectl reads it." },
  },
});

export const READINESS_JOB = describe({
  name: "ReadinessJob",
  doc: "ReadinessJob: a live object to judge as Fleet's agent does (readiness.go).",
  fields: { id: { type: text, doc: "" }, object: { type: raw, doc: "" }, ignore: { type: list(map(text)), doc: "" } },
});

export const LOOKUP_JOB = describe({
  name: "LookupJob",
  doc: "LookupJob: lookups to read on one cluster, with the identity that deploys the bundle.",
  fields: { ...connection, keys: { type: list(struct(LOOKUP_KEY)), doc: "" }, timeoutSeconds: deadline },
});

export const CAPABILITIES = describe({
  name: "Capabilities",
  doc: "Capabilities is what a chart sees of a live cluster: its version and every group/version(/kind) it serves (discovery).",
  fields: {
    kubeVersion: {
      type: struct(
        describe({
          name: "KubeVersion",
          doc: "",
          fields: { version: { type: text, doc: "" }, major: { type: text, doc: "" }, minor: { type: text, doc: "" } },
        }),
      ),
      doc: "",
    },
    apiVersions: { type: list(text), goName: "APIVersions", doc: "" },
  },
});

export const RENDERER_REQUEST = describe({
  name: "Request",
  doc: "Request is one batch. Bundles and clusters are sent once and referenced by key from the jobs.",
  fields: {
    bundles: { type: map(struct(RENDER_BUNDLE)), optional: true, goPointer: true, doc: "" },
    clusters: { type: map(struct(CLUSTER_CONTEXT)), optional: true, goPointer: true, doc: "" },
    helm: {
      type: map(struct(HELM_VALUES_INPUT)),
      optional: true,
      goPointer: true,
      doc: "Helm: helm options by key, shared by the values jobs of many clusters.",
    },
    yaml: {
      type: map(text),
      optional: true,
      trust: "content",
      goName: "YAML",
      doc: "YAML: texts (fleet.yaml, values files) to read as Fleet reads them (sigs.k8s.io/yaml), by id (yamljson.go).",
    },
    values: {
      type: list(pair),
      optional: true,
      trust: "content",
      doc: "Values: [cluster key, helm key] per job; results come back in the same order. Tuples, not objects: a large fleet sends tens of thousands, and their decoding was a tenth of the batch.",
    },
    renders: { type: list(struct(RENDER_JOB)), optional: true, trust: "content", doc: "" },
    pulls: {
      type: list(struct(PULL_JOB)),
      optional: true,
      trust: "trusted",
      doc: "Pulls: remote charts to download into bundles (pull.go), run before any render of the batch.",
    },
    owners: { type: list(struct(OWNERS_JOB)), optional: true, trust: "trusted", doc: "Owners: per cluster, objects whose live metadata to read (owners.go)." },
    impersonate: {
      type: list(struct(IMPERSONATE_JOB)),
      optional: true,
      trust: "trusted",
      doc: "Impersonate: kubeconfigs to rewrite so that they act as a service account (impersonate.go).",
    },
    readiness: {
      type: list(struct(READINESS_JOB)),
      optional: true,
      trust: "trusted",
      doc: "Readiness: live objects to judge as Fleet's agent does (readiness.go).",
    },
    discovery: {
      type: list(
        struct(describe({ name: "DiscoveryJob", doc: "DiscoveryJob: a cluster whose capabilities to read (the stack's credentials).", fields: connection })),
      ),
      optional: true,
      trust: "trusted",
      doc: "Discovery: clusters whose version and API versions to read for Helm's .Capabilities (capabilities.go).",
    },
    capabilities: {
      type: map(struct(CAPABILITIES)),
      optional: true,
      goPointer: true,
      doc: "Capabilities: a live cluster's, by key, referenced by render jobs (sent once, not per job).",
    },
    lookupReads: {
      type: list(struct(LOOKUP_JOB)),
      optional: true,
      trust: "trusted",
      doc: "LookupReads: objects templates asked `lookup` for, to read on their cluster (lookup.go).",
    },
    jobGroups: {
      type: map(int),
      optional: true,
      doc: `JobGroups: the group (a GitRepo, by index) of each content job, keyed "kind id" as the sandbox's markers name it; GroupSeconds: each group's time left, shared by its jobs (sandbox.go).`,
    },
    groupSeconds: { type: list(float), optional: true, doc: "" },
  },
});

/** Each job kind's trust class, read from the request's fields. */
export const TRUST: Readonly<Record<string, Trust>> = Object.fromEntries(
  Object.entries(RENDERER_REQUEST.fields as Record<string, { trust?: Trust }>).flatMap(([k, f]) => (f.trust ? [[k, f.trust]] : [])),
);
