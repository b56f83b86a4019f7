/**
 * Gathering, before rendering: what is read from the clusters for the desired state, into each
 * cluster's ClusterFacts (cluster-facts.ts), through `Facts`: whether `fleet-default` exists, the
 * impersonating kubeconfigs of the users deployments are applied as, what helm.valuesFrom references,
 * what charts see of each cluster (discovery), and the ambient kubeconfig a cluster without its own is
 * reached with. Nothing here decides what is deployed; a cluster that cannot be read is an error naming
 * it, unless the decisions can tell without it. What is read after rendering is gather-objects.ts's.
 */
import * as path from "node:path";
import { accessOf, kubeconfigEnvFiles } from "../cluster-access";
import { StackConfig, ClusterConfig } from "../config/stack";
import { FleetError } from "../errors";
import { OwnersJob } from "../render/fleet-render";
import { DEFAULT_SERVICE_ACCOUNT } from "../service-accounts";
import { PlanEntry } from "../targeting/plan";
import { factsOf, kubeconfigAs, KnownClusters } from "./cluster-facts";
import { Facts } from "./facts";
import { ValuesFromAsks } from "./read-values-from";

/** Every cluster of the stack, nothing read yet. */
export function unknownClusters(config: StackConfig): KnownClusters {
  const known: KnownClusters = new Map();
  for (const c of config.clusters) factsOf(known, c.name);
  return known;
}

/**
 * Whether `fleet-default` exists in each given cluster's agent namespace, read once per preview or up.
 * A cluster that cannot be read says why (its bundles are applied with the stack's credentials and
 * say so: an unreachable cluster applies nothing anyway, and a PR preview must not stop on it).
 */
export async function gatherDefaultAccounts(wanted: ReadonlySet<string>, clusters: ClusterConfig[], agentNamespace: (cluster: string) => string,
  facts: Facts, known: KnownClusters): Promise<void> {
  const jobs: OwnersJob[] = clusters.filter((c) => wanted.has(c.name)).map((c) => ({
    id: c.name, ...accessOf(c),
    objects: [{ apiVersion: "v1", kind: "ServiceAccount", namespace: agentNamespace(c.name), name: DEFAULT_SERVICE_ACCOUNT }],
  }));
  if (!jobs.length) return;
  const results = await facts.objects(jobs);
  for (const job of jobs) {
    const r = results[job.id];
    if (!r || r.error) {
      factsOf(known, job.id).defaultAccount = { unread: `could not tell whether ${job.objects[0].namespace}/${DEFAULT_SERVICE_ACCOUNT} exists (${r?.error ?? "no answer"}): ` +
        "applied with the stack's credentials, as when it does not (Fleet would apply as that account if it exists)" };
    } else if (r.objects?.[0]) {
      factsOf(known, job.id).defaultAccount = true;
    }
  }
}

/**
 * Kubeconfigs acting as each wanted user, made from its cluster's (one job per cluster and user, in the
 * order given); a user whose kubeconfig cannot be made is the error `refused` gives.
 */
export async function gatherKubeconfigs<W extends { cluster: string; user: string }>(wanted: W[], clusters: ClusterConfig[], facts: Facts, known: KnownClusters,
  refused: (w: W, error: string) => FleetError): Promise<void> {
  const missing = wanted.filter((w) => !known.get(w.cluster)?.kubeconfigs.has(w.user));
  if (!missing.length) return;
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const byId = new Map(missing.map((w) => [`${w.cluster} ${w.user}`, w]));
  const jobs = [...byId].map(([id, w]) => ({ id, ...accessOf(byName.get(w.cluster)), as: w.user }));
  const results = await facts.impersonate(jobs);
  for (const [id, w] of byId) {
    const r = results[id];
    if (!r?.kubeconfig) throw refused(w, r?.error ?? "no answer");
    factsOf(known, w.cluster).kubeconfigs.set(w.user, r.kubeconfig);
  }
}

/** What helm.valuesFrom references, read on each cluster as each identity that asked (read-values-from.ts), one job per cluster and identity. */
export async function gatherValuesFrom(asks: ValuesFromAsks, clusters: ClusterConfig[], facts: Facts, known: KnownClusters): Promise<void> {
  if (!asks.asks.size) return;
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const jobs = [...asks.asks.values()].map((a) => ({
    id: `${a.cluster} ${a.user ?? ""}`, keys: a.keys,
    ...accessOf(byName.get(a.cluster), kubeconfigAs(known, a.cluster, a.user)),
  }));
  const results = await facts.lookup(jobs);
  for (const a of asks.asks.values()) factsOf(known, a.cluster).valuesFrom.set(a.user ?? "", results[`${a.cluster} ${a.user ?? ""}`] ?? { error: "no answer" });
}

/**
 * What charts see of each cluster, as Fleet's agent renders on it: a live cluster's version and served
 * API versions, read once per operation (discovery; a cluster that cannot be read is an error naming
 * it, unless the operation leaves it out); in render mode the cluster's kubeVersion and apiVersions.
 */
export async function gatherCapabilities(config: StackConfig, entries: PlanEntry[], facts: Facts, known: KnownClusters, leftOut?: ReadonlySet<string>): Promise<void> {
  if (config.renderDir) {
    for (const c of config.clusters) factsOf(known, c.name).capabilities = { kubeVersion: c.kubeVersion, apiVersions: c.apiVersions };
    return;
  }
  const deployed = new Set(entries.map((e) => e.cluster));
  const jobs = config.clusters.filter((c) => deployed.has(c.name) && !leftOut?.has(c.name))
    .map((c) => ({ id: c.name, ...accessOf(c) }));
  if (!jobs.length) return;
  const results = await facts.discovery(jobs);
  for (const job of jobs) {
    const r = results[job.id];
    if (!r?.capabilities) {
      throw new FleetError(`cannot read the cluster's version and served API versions, which its charts see as .Capabilities (discovery): ${r?.error ?? "no answer"}`, { file: config.file, cluster: job.id });
    }
    factsOf(known, job.id).capabilities = { live: r.capabilities };
  }
}

/**
 * Clusters without a kubeconfig of their own use the ambient one, as kubectl does: KUBECONFIG's files
 * merged (else ~/.kube/config), `context` found in any of them. The Kubernetes provider reads a
 * KUBECONFIG of several files as one kubeconfig and fails every object, so when it lists several, the
 * cluster's context is resolved here (client-go's loader, in fleet-render) and the provider gets that
 * one context, its files inlined. A context that does not exist is an error naming it. Without a
 * context and with one file (or none: in-cluster), the provider's own reading is left alone.
 */
export async function gatherAmbientKubeconfigs(config: StackConfig, facts: Facts, known: KnownClusters): Promise<void> {
  const files = kubeconfigEnvFiles();
  const ambient = config.clusters.filter((c) => c.kubeconfig === undefined && (c.context !== undefined || files.length > 1));
  if (!ambient.length) return;
  const results = await facts.ambientKubeconfig(ambient.map((c) => ({ id: c.name, context: c.context ?? "" })));
  for (const c of ambient) {
    const r = results[c.name];
    if (!r?.kubeconfig) {
      const where = files.length ? `KUBECONFIG (${files.join(path.delimiter)})` : "the ambient kubeconfig (~/.kube/config)";
      throw new FleetError(`${c.context !== undefined ? `context ${JSON.stringify(c.context)} ` : "the current context "}cannot be used from ${where}: ${r?.error ?? "no answer"}`,
        { file: config.file, cluster: c.name, field: "context" });
    }
    if (files.length > 1) factsOf(known, c.name).ambientKubeconfig = r.kubeconfig;
  }
}
