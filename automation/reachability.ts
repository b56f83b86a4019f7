/**
 * Which clusters answer at all, checked before an update: a cluster whose API server cannot be
 * reached is left out of the update (its resources excluded, so nothing of it is deleted or changed
 * in the state) while the rest of the fleet converges, and the operation then fails naming it.
 * Reachable means a TCP connection to the kubeconfig's server opens; credentials are the engine's
 * business and fail there, clearly, per resource.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { ClusterConfig } from "../core/config/stack";

interface Kubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context?: { cluster?: string } }[];
  clusters?: { name: string; cluster?: { server?: string } }[];
}

/** The API server URL a cluster's provider would talk to, or undefined if it cannot be told here. */
export function serverOf(c: ClusterConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let doc: Kubeconfig | undefined;
  if (c.kubeconfig !== undefined) {
    // The provider takes either the kubeconfig's text or a path to it.
    const parsed = tryParse(c.kubeconfig);
    doc = parsed?.clusters ? parsed : fs.existsSync(c.kubeconfig) ? tryParse(fs.readFileSync(c.kubeconfig, "utf8")) : undefined;
  } else {
    // KUBECONFIG's files merged as kubectl merges them: the first file to name a context or cluster wins.
    const files = (env.KUBECONFIG ?? path.join(os.homedir(), ".kube", "config")).split(path.delimiter).filter((f) => f !== "");
    const docs = files.filter((f) => fs.existsSync(f)).map((f) => tryParse(fs.readFileSync(f, "utf8"))).filter((d): d is Kubeconfig => !!d);
    const first = <T extends { name: string }>(lists: (T[] | undefined)[]) => [...new Map(lists.flatMap((l) => l ?? []).reverse().map((x) => [x.name, x])).values()];
    doc = docs.length ? {
      "current-context": docs.find((d) => d["current-context"])?.["current-context"],
      contexts: first(docs.map((d) => d.contexts)), clusters: first(docs.map((d) => d.clusters)),
    } : undefined;
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

/** Why a TCP connection to the server fails, or undefined when it opens. */
export function probe(server: string, timeoutMs = 3000): Promise<string | undefined> {
  const url = new URL(server);
  const port = Number(url.port || (url.protocol === "http:" ? 80 : 443));
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (reason?: string) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer from ${server} within ${timeoutMs} ms`));
    socket.once("connect", () => done());
    socket.once("error", (err) => done(`${server}: ${err.message}`));
  });
}

/** Clusters whose API server does not answer, with the reason, probed in parallel. */
export async function unreachableClusters(clusters: ClusterConfig[], timeoutMs = 3000): Promise<Map<string, string>> {
  const results = await Promise.all(clusters.map(async (c) => {
    const server = serverOf(c);
    return [c.name, server ? await probe(server, timeoutMs) : undefined] as const;
  }));
  return new Map(results.filter((r): r is readonly [string, string] => r[1] !== undefined));
}
