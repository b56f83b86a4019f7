/**
 * The decisions on the rendered objects, from them, the state and what was gathered alone: one owner
 * per object (the deployment that deployed it before keeps it), another GitRepo's namespaces, what
 * content reaches beyond its GitRepo's stack entry, the operator's Secrets, and label syntax. Each fails
 * the deployments it finds wrong, alone (a deployment fails once: the first reason stands).
 */
import { GitRepoConfig } from "../config/git-repo";
import { Bundle } from "../bundles/types";
import { checkReachObjects } from "../reach";
import { checkSingleOwner, RenderedDeployment } from "../render/deployments";
import { PlanEntry } from "../targeting/plan";
import { validateObjectLabels } from "./labels";
import { checkSecretClaims, OperatorSecret } from "./operator-secrets";
import { checkNamespaceMetadata, checkNamespaceSquats, Owner, Prior } from "./owners";

export interface RenderedChecks {
  /** Who deployed each contested object before, by claimKey (owners.ts knownOwners). */
  owners: ReadonlyMap<string, Owner>;
  prior: Prior;
  /** Namespaces other GitRepos' deployments were in first (owners.ts namespaceOwners). */
  namespacesBefore: ReadonlyMap<string, ReadonlySet<string>>;
  stack: { file: string; gitRepos: GitRepoConfig[] };
  bundles: Bundle[];
  /** The operator's Secrets per cluster (operator-secrets.ts). */
  secrets: ReadonlyMap<string, OperatorSecret[]>;
  fail: (e: PlanEntry, err: unknown) => void;
}

export function checkRendered(entries: PlanEntry[], rendered: ReadonlyMap<PlanEntry, RenderedDeployment>, c: RenderedChecks): void {
  checkSingleOwner(new Map(entries.map((e) => [e, rendered.get(e)!])), c.fail, c.owners);
  checkNamespaceSquats(entries, rendered, c.prior, c.fail);
  checkNamespaceMetadata(entries, c.namespacesBefore, c.fail);
  checkReachObjects(entries, rendered, c.stack, c.bundles, c.fail);
  checkSecretClaims(entries, (e) => rendered.get(e)!.objects, c.secrets, c.fail);
  for (const e of entries) {
    try {
      for (const obj of rendered.get(e)!.objects) validateObjectLabels(obj, { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster });
    } catch (err) {
      c.fail(e, err);
    }
  }
}
