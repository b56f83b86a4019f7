/**
 * A renderer that answers a batch it has answered before from memory. Deciding which shards of an
 * environment have work plans every shard from the same checkouts, so every shard's content jobs
 * (fleet.yaml, values, renders) are the same batch: rendered once instead of once per shard
 * (BENCHMARKS.md §23). Only batches of content jobs alone, a function of what they carry and of the
 * checkouts their render jobs name, which do not change during one decision (it is made for one, and
 * dropped with it): a batch with a job that reads or writes a cluster, or downloads a chart, always runs.
 * A concurrent identical batch waits for the first's answer; a batch that throws is not kept, while a
 * job's failure inside an answer is every shard's that asked it (those shards then run: inputs.ts
 * mustRun). The shards share one render budget per GitRepo, spent once for what they share.
 */
import type { Renderer, RendererResponse } from "../model/renderer-protocol";
import { stableJson } from "../base/hash";
import { hasTrustedJobs } from "./fleet-render";

export function rememberingRenderer(render: Renderer): Renderer {
  const answers = new Map<string, Promise<RendererResponse>>();
  return (request) => {
    if (hasTrustedJobs(request)) return render(request);
    const key = stableJson(request);
    let answer = answers.get(key);
    if (!answer) {
      answer = render(request);
      answers.set(key, answer);
      answer.catch(() => answers.delete(key));
    }
    // Each caller gets its own copy: the planners annotate what they are given.
    return answer.then((a) => structuredClone(a));
  };
}
