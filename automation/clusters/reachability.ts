/**
 * Which clusters answer at all, checked before an update: a cluster whose API server cannot be
 * reached is left out of the update (its resources excluded, so nothing of it is deleted or changed
 * in the state) while the rest of the fleet converges, and the operation then fails naming it.
 * Reachable means a TCP connection to the kubeconfig's server (core/config/cluster-access.ts) opens; credentials are the engine's
 * business and fail there, clearly, per resource.
 */
import * as net from "node:net";
import { ClusterConfig } from "../../core/config/stack";
import { serverOf } from "../../core/config/cluster-access";

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
  const results = await Promise.all(
    clusters.map(async (c) => {
      const server = serverOf(c);
      return [c.name, server ? await probe(server, timeoutMs) : undefined] as const;
    }),
  );
  return new Map(results.filter((r): r is readonly [string, string] => r[1] !== undefined));
}
