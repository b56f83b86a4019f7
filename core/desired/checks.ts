/**
 * The decisions on the rendered objects, from them, the state and what was gathered alone: one owner
 * per object (the deployment that deployed it before keeps it), another GitRepo's namespaces, what
 * content reaches beyond its GitRepo's stack entry, the operator's Secrets, and label syntax. Each fails
 * the deployments it finds wrong, alone (a deployment fails once: the first reason stands).
 */
import { GitRepoConfig } from "../config/git-repo";
import { Bundle } from "../bundles/types";
import { checkReachObjects } from "./reach";
import { RenderedDeployment } from "../render/deployments";
import { checkSingleOwner } from "../render/single-owner";
import { PlanEntry } from "../targeting/plan";
import { Failed } from "../plan/failures";
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
}

/** The deployments the checks find wrong, in the order found (a deployment's first reason stands). */
export function checkRendered(entries: PlanEntry[], rendered: ReadonlyMap<PlanEntry, RenderedDeployment>, c: RenderedChecks): Failed[] {
  const failed: Failed[] = [];
  const fail = (pair: PlanEntry, error: unknown) => failed.push({ pair, error });
  checkSingleOwner(new Map(entries.map((e) => [e, rendered.get(e)!])), fail, c.owners);
  checkNamespaceSquats(entries, rendered, c.prior, fail);
  checkNamespaceMetadata(entries, c.namespacesBefore, fail);
  checkReachObjects(entries, rendered, c.stack, c.bundles, fail);
  checkSecretClaims(entries, (e) => rendered.get(e)!.objects, c.secrets, fail);
  for (const e of entries) {
    try {
      for (const obj of rendered.get(e)!.objects) validateObjectLabels(obj, { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster });
    } catch (err) {
      fail(e, err);
    }
  }
  return failed;
}
