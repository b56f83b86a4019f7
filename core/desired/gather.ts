/**
 * Gathering, before rendering: what is read from the clusters for the desired state, into each
 * cluster's ClusterFacts (cluster-facts.ts), through `Facts`: whether `fleet-default` exists, the
 * impersonating kubeconfigs of the users deployments are applied as, what helm.valuesFrom references,
 * and the ambient kubeconfig a cluster without its own is reached with. Nothing here decides what is
 * deployed; a cluster that cannot be read is an error naming it, unless the decisions can tell without
 * it. What a render sees of its cluster (capabilities, lookups) is read by render-lookups.ts, what is
 * read of the rendered objects by gather-objects.ts.
 */
import * as path from "node:path";
import { accessOf, kubeconfigEnvFiles } from "../config/cluster-access";
import { StackConfig, ClusterConfig } from "../config/stack";
import { FleetError } from "../base/errors";
import { OwnersJob } from "../model/renderer-protocol";
import { DEFAULT_SERVICE_ACCOUNT, impersonationRefused } from "./service-accounts";
import { PlanEntry } from "../targeting/plan";
import { factsOf, kubeconfigAs, KnownClusters } from "./cluster-facts";
import { Facts } from "./facts";
import { valuesFromKey, ValuesFromAsks } from "./read-values-from";
import { clusterReadBounds, readEachGitRepo, readError } from "./cluster-reads";

/**
 * The first stage, from the plan alone: every cluster of the stack, whether `fleet-default` exists on
 * those given (their bundles name no account), and the ambient kubeconfig of clusters without their own
 * (not in render mode: nothing is reached).
 */
export async function gatherClusters(
  config: StackConfig,
  defaultAccountClusters: ReadonlySet<string>,
  agentNamespace: (cluster: string) => string,
  facts: Facts,
): Promise<KnownClusters> {
  const known: KnownClusters = new Map();
  for (const c of config.clusters) factsOf(known, c.name);
  await gatherDefaultAccounts(defaultAccountClusters, config.clusters, agentNamespace, facts, known);
  if (!config.renderDir) await gatherAmbientKubeconfigs(config, facts, known);
  return known;
}

/** The second stage, once who applies what is decided: the users' kubeconfigs, then what helm.valuesFrom references, read as those users. */
export async function gatherAsUsers(
  wanted: { cluster: string; user: string; entry: PlanEntry }[],
  asks: ValuesFromAsks,
  clusters: ClusterConfig[],
  facts: Facts,
  known: KnownClusters,
): Promise<void> {
  await gatherKubeconfigs(wanted, clusters, facts, known, impersonationRefused);
  await gatherValuesFrom(asks, clusters, facts, known);
}

/**
 * Whether `fleet-default` exists in each given cluster's agent namespace, read once per preview or up.
 * A cluster that cannot be read says why (its bundles are applied with the stack's credentials and
 * say so: an unreachable cluster applies nothing anyway, and a PR preview must not stop on it).
 */
export async function gatherDefaultAccounts(
  wanted: ReadonlySet<string>,
  clusters: ClusterConfig[],
  agentNamespace: (cluster: string) => string,
  facts: Facts,
  known: KnownClusters,
): Promise<void> {
  const jobs: OwnersJob[] = clusters
    .filter((c) => wanted.has(c.name))
    .map((c) => ({
      id: c.name,
      ...accessOf(c),
      objects: [{ apiVersion: "v1", kind: "ServiceAccount", namespace: agentNamespace(c.name), name: DEFAULT_SERVICE_ACCOUNT }],
    }));
  if (!jobs.length) return;
  const results = await facts.objects(jobs);
  for (const job of jobs) {
    const r = results[job.id];
    if (!r || r.error) {
      factsOf(known, job.id).defaultAccount = {
        unread:
          `could not tell whether ${job.objects[0].namespace}/${DEFAULT_SERVICE_ACCOUNT} exists (${r?.error ?? "no answer"}): ` +
          "applied with the stack's credentials, as when it does not (Fleet would apply as that account if it exists)",
      };
    } else if (r.objects?.[0]) {
      factsOf(known, job.id).defaultAccount = true;
    }
  }
}

/**
 * Kubeconfigs acting as each wanted user, made from its cluster's (one job per cluster and user, in the
 * order given); a user whose kubeconfig cannot be made is the error `refused` gives.
 */
export async function gatherKubeconfigs<W extends { cluster: string; user: string }>(
  wanted: W[],
  clusters: ClusterConfig[],
  facts: Facts,
  known: KnownClusters,
  refused: (w: W, error: string) => FleetError,
): Promise<void> {
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

/**
 * What helm.valuesFrom references, read on each cluster as each identity that asked (read-values-from.ts),
 * one job per cluster, identity and GitRepo, each with the operator's deadline (cluster-reads.ts).
 */
async function gatherValuesFrom(asks: ValuesFromAsks, clusters: ClusterConfig[], facts: Facts, known: KnownClusters): Promise<void> {
  if (!asks.asks.size) return;
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const bounds = clusterReadBounds();
  const jobs = [...asks.asks].map(([id, a]) => ({
    id,
    keys: a.keys,
    ...accessOf(byName.get(a.cluster), kubeconfigAs(known, a.cluster, a.user)),
    timeoutSeconds: bounds.seconds,
  }));
  const results = await readEachGitRepo(jobs, facts.lookup, (error) => ({ error }));
  for (const [id, a] of asks.asks) {
    const r = results[id] ?? { error: "no answer" };
    factsOf(known, a.cluster).valuesFrom.set(valuesFromKey(a), r.error ? { error: readError(r.error, bounds) } : r);
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
async function gatherAmbientKubeconfigs(config: StackConfig, facts: Facts, known: KnownClusters): Promise<void> {
  const files = kubeconfigEnvFiles();
  const ambient = config.clusters.filter((c) => c.kubeconfig === undefined && (c.context !== undefined || files.length > 1));
  if (!ambient.length) return;
  const results = await facts.ambientKubeconfig(ambient.map((c) => ({ id: c.name, context: c.context ?? "" })));
  for (const c of ambient) {
    const r = results[c.name];
    if (!r?.kubeconfig) {
      const where = files.length ? `KUBECONFIG (${files.join(path.delimiter)})` : "the ambient kubeconfig (~/.kube/config)";
      throw new FleetError(
        `${c.context !== undefined ? `context ${JSON.stringify(c.context)} ` : "the current context "}cannot be used from ${where}: ${r?.error ?? "no answer"}`,
        { file: config.file, cluster: c.name, field: "context" },
      );
    }
    if (files.length > 1) factsOf(known, c.name).ambientKubeconfig = r.kubeconfig;
  }
}
