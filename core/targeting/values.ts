/**
 * Per-cluster helm values, Fleet's preprocessHelmValues (`global.fleet.clusterLabels.<label>`
 * substitution, the values' YAML text rendered as one `${ }` template, then templateValues), run by
 * fleet-render with Fleet's own libraries: Go's text/template, sprig and sigs.k8s.io/yaml, so
 * number formatting, type errors and YAML re-typing are Fleet's. One batch for the whole plan.
 */
import { FleetError } from "../base/errors";
import { HelmOptions } from "../bundles/types";
import { ClusterConfig } from "../config/stack";
import { runRenderer } from "../renderer/fleet-render";
import { ClusterContext, Renderer } from "../model/renderer-protocol";

/** `.ClusterNamespace`: the namespace Fleet keeps Cluster objects in for downstream clusters. */
export const CLUSTER_NAMESPACE = "fleet-default";

export interface ValuesJob {
  helm: HelmOptions;
  cluster: ClusterConfig;
  ctx: { gitRepo: string; bundle: string };
}

export function clusterContext(cluster: ClusterConfig): ClusterContext {
  return {
    name: cluster.name,
    namespace: CLUSTER_NAMESPACE,
    labels: cluster.labels,
    annotations: cluster.annotations,
    templateValues: cluster.templateValues,
  };
}

/**
 * The helm options of every job with Fleet's per-cluster processing applied, in job order. `helm` may
 * be shared by many jobs (the plan merges options once per target combination) and is never mutated;
 * a job Fleet leaves untouched (no labels, no values) gets its own `helm` back. The first failing
 * job (in job order) is thrown.
 */
export async function templateHelmValues(jobs: ValuesJob[], render: Renderer = runRenderer): Promise<HelmOptions[]> {
  return (await templateHelmValuesEach(jobs, render)).map((r) => {
    if (r instanceof FleetError) throw r;
    return r;
  });
}

/** As templateHelmValues, one batch, but each job's failure is returned in its place, not thrown. */
export async function templateHelmValuesEach(jobs: ValuesJob[], render: Renderer = runRenderer): Promise<(HelmOptions | FleetError)[]> {
  // Tens of thousands of jobs for a large fleet, sharing a few hundred helm options: keep the per-job
  // work to index lookups.
  const helmIndex = new Map<HelmOptions, number>();
  const helm: Record<string, { values?: Record<string, unknown>; templateValues?: Record<string, string>; disablePreProcess?: boolean }> = {};
  const clusters: Record<string, ClusterContext> = {};
  const values: [cluster: string, helm: string][] = [];
  const gitRepoOfValues: string[] = [];
  const slot = new Int32Array(jobs.length).fill(-1); // job index -> index in values
  jobs.forEach((job, i) => {
    // Fleet does nothing for a cluster without labels or for options without values: skip the round trip.
    if (isEmpty(job.cluster.labels)) return;
    if (!job.helm.templateValues && isEmpty(job.helm.values)) return;
    let key = helmIndex.get(job.helm);
    if (key === undefined) {
      key = helmIndex.size;
      helmIndex.set(job.helm, key);
      helm[key] = { values: job.helm.values, templateValues: job.helm.templateValues, disablePreProcess: job.helm.disablePreProcess };
    }
    clusters[job.cluster.name] ??= clusterContext(job.cluster);
    slot[i] = values.length;
    values.push([job.cluster.name, String(key)]);
    gitRepoOfValues.push(job.ctx.gitRepo);
  });
  const response = values.length ? await render({ helm, clusters, values, gitRepoOf: { values: gitRepoOfValues } }) : { values: [], valueOf: [] };
  // Jobs with the same helm options and equal results share one options object (the plan hashes it once).
  const shared: HelmOptions[][] = [];
  return jobs.map((job, i) => {
    if (slot[i] < 0) return job.helm;
    const index = response.valueOf[slot[i]];
    const r = response.values[index];
    if (r.error) {
      const m = /^templateValues\.([^:]+): /.exec(r.error);
      const field = m ? `helm.templateValues.${m[1]}` : "helm.values";
      return new FleetError(m ? r.error.slice(m[0].length) : r.error, { gitRepo: job.ctx.gitRepo, bundle: job.ctx.bundle, cluster: job.cluster.name, field });
    }
    if (!r.changed) return job.helm;
    const byResult = (shared[helmIndex.get(job.helm)!] ??= []);
    return (byResult[index] ??= { ...job.helm, values: r.values ?? {} });
  });
}

function isEmpty(o: object | undefined): boolean {
  for (const _ in o) return false;
  return true;
}
