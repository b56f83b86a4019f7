/**
 * Which server and credentials a cluster is reached with, decided once: the stack's kubeconfig (its text
 * or a path to it) and context, else the ambient kubeconfig as kubectl reads it (KUBECONFIG's files,
 * else ~/.kube/config). The renderer's jobs, the reachability probe, the shard fingerprint and the
 * desired state's ambient contexts all take it from here.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";

/** The part of a cluster's stack entry that says how it is reached. */
export interface ClusterReach {
  kubeconfig?: string;
  context?: string;
}

/**
 * The credentials a renderer job (fleet-render) gets for a cluster: "" means the ambient kubeconfig, its
 * current context; `impersonating`, a kubeconfig acting as a user (core/desired/service-accounts.ts), replaces both.
 */
export function accessOf(c: ClusterReach | undefined, impersonating?: string): { kubeconfig: string; context: string } {
  if (impersonating !== undefined) return { kubeconfig: impersonating, context: "" };
  return { kubeconfig: c?.kubeconfig ?? "", context: c?.context ?? "" };
}

/**
 * Whether a cluster is reached through the ambient kubeconfig: its stack entry (as parsed, or as written
 * with an encrypted value) has no kubeconfig of its own, whether it names a context of the ambient one
 * or none (then the ambient one's current context).
 */
export function usesAmbientKubeconfig(entry: { kubeconfig?: unknown }): boolean {
  return entry.kubeconfig === undefined;
}

/** KUBECONFIG's files, as the user listed them (none when it is unset). */
export function kubeconfigEnvFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.KUBECONFIG ?? "").split(path.delimiter).filter((f) => f !== "");
}

/** The ambient kubeconfig's files, as kubectl reads them: KUBECONFIG's, else ~/.kube/config. */
export function kubeconfigFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  return env.KUBECONFIG !== undefined ? kubeconfigEnvFiles(env) : [path.join(os.homedir(), ".kube", "config")];
}

/** The ambient kubeconfig's files' contents (a missing file as empty), for fingerprints. */
export function ambientKubeconfigText(env: NodeJS.ProcessEnv = process.env): string {
  return kubeconfigFiles(env)
    .map((f) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : ""))
    .join("\0");
}

interface Kubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context?: { cluster?: string } }[];
  clusters?: { name: string; cluster?: { server?: string } }[];
}

/** The API server URL a cluster's provider would talk to, or undefined if it cannot be told here. */
export function serverOf(c: ClusterReach, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let doc: Kubeconfig | undefined;
  if (c.kubeconfig !== undefined) {
    // The provider takes either the kubeconfig's text or a path to it.
    const parsed = tryParse(c.kubeconfig);
    doc = parsed?.clusters ? parsed : fs.existsSync(c.kubeconfig) ? tryParse(fs.readFileSync(c.kubeconfig, "utf8")) : undefined;
  } else {
    // KUBECONFIG's files merged as kubectl merges them: the first file to name a context or cluster wins.
    const docs = kubeconfigFiles(env)
      .filter((f) => fs.existsSync(f))
      .map((f) => tryParse(fs.readFileSync(f, "utf8")))
      .filter((d): d is Kubeconfig => !!d);
    const first = <T extends { name: string }>(lists: (T[] | undefined)[]) => [
      ...new Map(
        lists
          .flatMap((l) => l ?? [])
          .reverse()
          .map((x) => [x.name, x]),
      ).values(),
    ];
    doc = docs.length
      ? {
          "current-context": docs.find((d) => d["current-context"])?.["current-context"],
          contexts: first(docs.map((d) => d.contexts)),
          clusters: first(docs.map((d) => d.clusters)),
        }
      : undefined;
  }
  if (!doc) return undefined;
  const contextName = c.context ?? doc["current-context"];
  const clusterName = doc.contexts?.find((x) => x.name === contextName)?.context?.cluster ?? (doc.clusters?.length === 1 ? doc.clusters[0].name : undefined);
  return doc.clusters?.find((x) => x.name === clusterName)?.cluster?.server;
}

function tryParse(text: string): Kubeconfig | undefined {
  try {
    const v = YAML.parse(text);
    return v && typeof v === "object" ? (v as Kubeconfig) : undefined;
  } catch {
    return undefined;
  }
}
