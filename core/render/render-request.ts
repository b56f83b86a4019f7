/**
 * The renderer's request for a batch of pairs (renderer-protocol.ts): each bundle's files once, one
 * render job per distinct (bundle, options, cluster capabilities, lookups, revision, valuesFrom), so
 * pairs that render the same bundle the same way share one render.
 */
import { bundleRef } from "../model/keys";
import { sha256Hex, stableJson } from "../base/hash";
import { Bundle } from "../bundles/types";
import { PlanEntry } from "../targeting/plan";
import { FleetError } from "../base/errors";
import { ValuesFromInput } from "./values-from";
import { Capabilities, LookupAnswer, RenderFile, RenderJob } from "../model/renderer-protocol";

/**
 * What a chart sees of the cluster it is rendered for: a live cluster's own capabilities (discovery),
 * or in render mode Helm's --kube-version and --api-versions (the cluster's kubeVersion, apiVersions).
 */
export type ClusterCapabilities = { live: Capabilities } | { kubeVersion?: string; apiVersions?: string[] };

/** What a render sees of the deployment's cluster, beyond the bundle (all optional: `fleet test`'s defaults). */
export interface RenderContext {
  /** Each cluster's capabilities (default: Helm's defaults at v1.25.0, as `fleet test`). */
  capabilitiesOf?: (cluster: string) => ClusterCapabilities;
  /** A live deployment's lookup table (absent: `lookup` finds nothing, as in `helm template`). */
  lookupsOf?: (entry: PlanEntry) => LookupAnswer[] | undefined;
  /** The Helm revision a live deployment last deployed: it renders as Helm's upgrade to the next one. */
  revisionOf?: (entry: PlanEntry) => number | undefined;
  /** A live deployment's helm.valuesFrom as read on its cluster (values-from.ts), merged over its values by fleet-render. */
  valuesFromOf?: (entry: PlanEntry) => ValuesFromInput[] | undefined;
  /**
   * Where a deployment whose render fails goes (left out of the result, the others rendered): a broken
   * bundle fails alone. Absent: the first failure is thrown, and objects are checked for one owner here.
   */
  onFailure?: (entry: PlanEntry, err: FleetError) => void;
}

export interface BatchRequest {
  request: {
    bundles: Record<string, { name: string; manifestId: string; commit: string; files: RenderFile[] }>;
    renders: RenderJob[];
    capabilities: Record<string, Capabilities>;
    gitRepoOf: { renders: Record<string, string> };
  };
  /** Each pair's render job id. */
  jobOf: Map<PlanEntry, string>;
}

export function renderRequest(
  entries: PlanEntry[],
  byRef: ReadonlyMap<string, Bundle>,
  commitOf: (gitRepo: string) => string,
  context: RenderContext,
): BatchRequest {
  const request: BatchRequest["request"] = { bundles: {}, renders: [], capabilities: {}, gitRepoOf: { renders: {} } };
  const capabilitiesJob = capabilityKeys(context.capabilitiesOf ?? ((): ClusterCapabilities => ({})), request.capabilities);
  const jobOf = new Map<PlanEntry, string>();
  const jobIds = new Map<string, string>();
  for (const e of entries) {
    const ref = bundleRef(e);
    const b = byRef.get(ref)!;
    request.bundles[ref] ??= { name: b.name, manifestId: b.manifestId, commit: commitOf(b.gitRepo), files: b.files };
    const { releaseName, namespace, ...rest } = renderJob(e, context);
    const job: Omit<RenderJob, "id"> = { bundle: ref, releaseName, namespace, ...capabilitiesJob(e.cluster), ...rest };
    const key = stableJson(job);
    let id = jobIds.get(key);
    if (id === undefined) {
      id = String(jobIds.size);
      jobIds.set(key, id);
      request.renders.push({ id, ...job });
      request.gitRepoOf.renders[id] = e.gitRepo;
    }
    jobOf.set(e, id);
  }
  return { request, jobOf };
}

/** Clusters with the same capabilities share one key, so their renders stay one render. */
function capabilityKeys(capabilitiesOf: (cluster: string) => ClusterCapabilities, into: Record<string, Capabilities>) {
  const keys = new Map<string, Pick<RenderJob, "kubeVersion" | "apiVersions" | "capabilities">>();
  return (cluster: string) => {
    let job = keys.get(cluster);
    if (!job) {
      const c = capabilitiesOf(cluster);
      if ("live" in c) {
        const key = sha256Hex(stableJson(c.live)).slice(0, 16);
        into[key] = c.live;
        job = { capabilities: key };
      } else {
        job = { ...(c.kubeVersion ? { kubeVersion: c.kubeVersion } : {}), ...(c.apiVersions?.length ? { apiVersions: c.apiVersions } : {}) };
      }
      keys.set(cluster, job);
    }
    return job;
  };
}

/** What a pair's render job says besides its bundle and capabilities: the fleet.yaml options fleet-render reads. */
function renderJob(e: PlanEntry, context: RenderContext): Omit<RenderJob, "id" | "bundle" | "kubeVersion" | "apiVersions" | "capabilities"> {
  const helm = e.options.helm ?? {};
  return {
    releaseName: e.releaseName,
    namespace: e.namespace,
    ...optional("lookups", context.lookupsOf?.(e)),
    ...optional("revision", context.revisionOf?.(e)),
    ...optional("valuesFrom", context.valuesFromOf?.(e)),
    options: {
      defaultNamespace: e.options.defaultNamespace,
      namespace: e.options.namespace,
      deleteCRDResources: e.options.deleteCRDResources,
      helm: {
        chart: helm.chart,
        repo: helm.repo,
        version: helm.version,
        releaseName: helm.releaseName,
        values: helm.values,
        disableDNS: helm.disableDNS,
        skipSchemaValidation: helm.skipSchemaValidation,
        disableDependencyUpdate: helm.disableDependencyUpdate,
      },
      kustomize: { dir: e.options.kustomize?.dir },
      yaml: { overlays: e.options.yaml?.overlays },
    },
  };
}

/** `{ [key]: value }`, or nothing when the value is absent (a render job carries only what is set). */
function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value ? ({ [key]: value } as Record<K, V>) : {};
}
