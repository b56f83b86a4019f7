/** What a cluster's own kubeconfig says about its API server: the values Fleet reads from the cluster's secret. */
import * as YAML from "yaml";

export interface ClusterOwnValues {
  apiServerURL?: string;
  apiServerCA?: string;
}

interface Kubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context?: { cluster?: string } }[];
  clusters?: { name: string; cluster?: { server?: string; "certificate-authority-data"?: string } }[];
}

export function clusterOwnValues(kubeconfig: string | undefined, context?: string): ClusterOwnValues {
  if (!kubeconfig) return {};
  let doc: Kubeconfig;
  try {
    doc = YAML.parse(kubeconfig) as Kubeconfig;
  } catch {
    throw new Error("kubeconfig is not valid YAML");
  }
  const ctxName = context ?? doc["current-context"];
  const clusterName = doc.contexts?.find((c) => c.name === ctxName)?.context?.cluster ?? doc.clusters?.[0]?.name;
  const cluster = doc.clusters?.find((c) => c.name === clusterName)?.cluster;
  const out: ClusterOwnValues = {};
  if (cluster?.server) out.apiServerURL = cluster.server;
  const ca = cluster?.["certificate-authority-data"];
  if (ca) out.apiServerCA = Buffer.from(ca, "base64").toString("utf8");
  return out;
}
