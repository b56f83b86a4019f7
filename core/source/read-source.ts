/** A source read as its kind says: a HelmOp's generated bundle (helm-op.ts), else a GitRepo's commit (git.ts). */
import { defaultCacheRoot } from "../base/tool-build";
import { GitRepoConfig } from "../config/git-repo";
import { resolveSource } from "./git";
import { isHelmOp, resolveHelmOpSource } from "./helm-op";
import { Source } from "./types";

export function readSource(repo: GitRepoConfig, cacheRoot = defaultCacheRoot()): Promise<Source> {
  return isHelmOp(repo) ? resolveHelmOpSource(repo) : resolveSource(repo, cacheRoot);
}
