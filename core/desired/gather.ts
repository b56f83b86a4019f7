/**
 * Facts gathered from the clusters for the desired state, per cluster name, through `Facts`: what charts
 * see of each cluster (discovery), the ambient kubeconfig a cluster without its own is reached with, and
 * the impersonating kubeconfigs of the users held deployments were applied as. Nothing here decides what
 * is deployed; a cluster that cannot be read is an error naming it.
 */
import * as path from "node:path";
import { accessOf, kubeconfigEnvFiles } from "../cluster-access";
import { StackConfig, ClusterConfig } from "../config/stack";
import { FleetError } from "../errors";
import { ClusterCapabilities } from "../render/deployments";
import { AccountProviders } from "../service-accounts";
import { PlanEntry } from "../targeting/plan";
import { Facts } from "./facts";

/**
 * What charts see of each cluster, as Fleet's agent renders on it: a live cluster's version and served
 * API versions, read once per operation (discovery; a cluster that cannot be read is an error naming
 * it, unless the operation leaves it out); in render mode the cluster's kubeVersion and apiVersions.
 */
export async function clusterCapabilities(config: StackConfig, entries: PlanEntry[], facts: Facts, leftOut?: ReadonlySet<string>): Promise<Map<string, ClusterCapabilities>> {
  const out = new Map<string, ClusterCapabilities>();
  if (config.renderDir) {
    for (const c of config.clusters) out.set(c.name, { kubeVersion: c.kubeVersion, apiVersions: c.apiVersions });
    return out;
  }
  const deployed = new Set(entries.map((e) => e.cluster));
  const jobs = config.clusters.filter((c) => deployed.has(c.name) && !leftOut?.has(c.name))
    .map((c) => ({ id: c.name, ...accessOf(c) }));
  if (!jobs.length) return out;
  const results = await facts.discovery(jobs);
  for (const job of jobs) {
    const r = results[job.id];
    if (!r?.capabilities) {
      throw new FleetError(`cannot read the cluster's version and served API versions, which its charts see as .Capabilities (discovery): ${r?.error ?? "no answer"}`, { file: config.file, cluster: job.id });
    }
    out.set(job.id, { live: r.capabilities });
  }
  return out;
}

/**
 * Clusters without a kubeconfig of their own use the ambient one, as kubectl does: KUBECONFIG's files
 * merged (else ~/.kube/config), `context` found in any of them. The Kubernetes provider reads a
 * KUBECONFIG of several files as one kubeconfig and fails every object, so when it lists several, the
 * cluster's context is resolved here (client-go's loader, in fleet-render) and the provider gets that
 * one context, its files inlined. A context that does not exist is an error naming it. Without a
 * context and with one file (or none: in-cluster), the provider's own reading is left alone.
 */
export async function ambientKubeconfigs(config: StackConfig, facts: Facts): Promise<Map<string, string>> {
  const files = kubeconfigEnvFiles();
  const ambient = config.clusters.filter((c) => c.kubeconfig === undefined && (c.context !== undefined || files.length > 1));
  const out = new Map<string, string>();
  if (!ambient.length) return out;
  const results = await facts.ambientKubeconfig(ambient.map((c) => ({ id: c.name, context: c.context ?? "" })));
  for (const c of ambient) {
    const r = results[c.name];
    if (!r?.kubeconfig) {
      const where = files.length ? `KUBECONFIG (${files.join(path.delimiter)})` : "the ambient kubeconfig (~/.kube/config)";
      throw new FleetError(`${c.context !== undefined ? `context ${JSON.stringify(c.context)} ` : "the current context "}cannot be used from ${where}: ${r?.error ?? "no answer"}`,
        { file: config.file, cluster: c.name, field: "context" });
    }
    if (files.length > 1) out.set(c.name, r.kubeconfig);
  }
  return out;
}

/** Impersonating kubeconfigs for the users held deployments were applied as that no planned one uses now. */
export async function withHeldAccounts(accounts: AccountProviders, wanted: { cluster: string; user: string }[], clusters: ClusterConfig[], facts: Facts): Promise<void> {
  const missing = wanted.filter((w) => !accounts.kubeconfigs.get(w.cluster)?.has(w.user));
  if (!missing.length) return;
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const jobs = [...new Map(missing.map((m) => [`${m.cluster} ${m.user}`, m])).entries()].map(([id, m]) => ({
    id, ...accessOf(byName.get(m.cluster)), as: m.user,
  }));
  const results = await facts.impersonate(jobs);
  for (const job of jobs) {
    const cluster = job.id.slice(0, job.id.indexOf(" "));
    const r = results[job.id];
    if (!r?.kubeconfig) throw new FleetError(`cannot act as ${job.as}, which a failed bundle deployment's objects were applied as: ${r?.error ?? "no answer"}`, { cluster });
    (accounts.kubeconfigs.get(cluster) ?? accounts.kubeconfigs.set(cluster, new Map()).get(cluster)!).set(job.as, r.kubeconfig);
  }
}
