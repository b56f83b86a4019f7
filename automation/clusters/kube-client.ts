/**
 * A deliberately small Kubernetes REST client (bearer token, the cluster's CA) for the local clusters'
 * readiness checks and the end-to-end tests' live reads. Deploys never go through it: they go through
 * the Pulumi Kubernetes provider like a user's would.
 */
import * as https from "node:https";

export interface KubeEndpoint {
  server: string;
  token: string;
  /** PEM of the API server's serving certificate authority. */
  ca: string;
}

export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly body: string,
  ) {
    super(`${method} ${path}: HTTP ${status}: ${body.slice(0, 500)}`);
  }
}

export interface RequestOptions {
  body?: unknown;
  /** Content type of a PATCH (default merge-patch). */
  patchType?: "application/merge-patch+json" | "application/strategic-merge-patch+json" | "application/json-patch+json";
  timeoutMs?: number;
}

export function kubeRequest<T = any>(ep: KubeEndpoint, method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const url = new URL(path, ep.server);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const contentType = method === "PATCH" ? (options.patchType ?? "application/merge-patch+json") : "application/json";
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        ca: ep.ca,
        headers: {
          authorization: `Bearer ${ep.token}`,
          accept: "application/json",
          ...(payload === undefined ? {} : { "content-type": contentType, "content-length": Buffer.byteLength(payload) }),
        },
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if ((res.statusCode ?? 0) >= 300) return reject(new KubeApiError(res.statusCode ?? 0, method, path, text));
          try {
            resolve(text && res.headers["content-type"]?.includes("json") ? JSON.parse(text) : (text as unknown as T));
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer from ${ep.server} within ${options.timeoutMs ?? 10_000} ms`)));
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** The object, or undefined when the API server answers 404. */
export async function kubeGet<T = any>(ep: KubeEndpoint, path: string): Promise<T | undefined> {
  try {
    return await kubeRequest<T>(ep, "GET", path);
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404) return undefined;
    throw err;
  }
}

export async function kubeList<T = any>(ep: KubeEndpoint, path: string, labelSelector?: string): Promise<T[]> {
  const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : "";
  const list = await kubeRequest<{ items: T[] }>(ep, "GET", path + query);
  return list.items;
}
