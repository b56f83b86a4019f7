/**
 * One operation's render budget per GitRepo. Every sandbox batch of a plan (fleet.yaml, helm values,
 * renders, each round of lookups) spends from the same PULUMI_FLEET_GITREPO_RENDER_SECONDS, so what a
 * GitRepo's content can add to an `up` is that budget once, however many batches it reaches; a GitRepo
 * with nothing left fails its next jobs at once, naming the limit.
 */
import type { Renderer, RendererRequest } from "../model/renderer-protocol";
import { sandboxLimits } from "./sandbox";

/** `render`, charging each GitRepo's time to one account kept for as long as the returned renderer is used. */
export function withRenderBudget(render: Renderer, seconds = sandboxLimits().gitRepoSeconds): Renderer {
  const spent = new Map<string, number>();
  return async (request) => {
    const names = gitReposOf(request);
    if (!names.size) return render(request);
    const gitRepoSecondsLeft = Object.fromEntries([...names].map((n) => [n, Math.max(0, seconds - (spent.get(n) ?? 0))]));
    const response = await render({ ...request, gitRepoSecondsLeft });
    for (const [n, s] of Object.entries(response.gitRepoSpentSeconds ?? {})) spent.set(n, (spent.get(n) ?? 0) + s);
    return response;
  };
}

function gitReposOf(request: RendererRequest): Set<string> {
  const of = request.gitRepoOf;
  return new Set([...Object.values(of?.yaml ?? {}), ...(of?.values ?? []), ...Object.values(of?.renders ?? {})]);
}
