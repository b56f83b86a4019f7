/**
 * What a failed bundle deployment keeps: exactly what the last update deployed. Its record (deploymentID,
 * commit, revision) stays, and its objects are registered as the state holds them, frozen, so the engine
 * neither changes nor prunes them; the namespaces they sit in and the user they were applied as stay too.
 * Fleet gets the same by leaving the BundleDeployment's release alone while the new one cannot be applied.
 */
import { UnreadBundle } from "../bundles/read";
import { FleetError } from "../errors";
import { FailedDeployments } from "./failures";
import { DeployedBundle, DeployedNamespace } from "./facts";
import { bundleRef, deploymentKey } from "./keys";
import { DesiredObject } from "./objects";
import { ownerLabels } from "../ownership";
import { PairSpec, pairObjectKey, pairObjects } from "./pair";
import { deletePolicyOf } from "./delete-policy";
import { PreviousDeployment } from "./previous";
import { DeploymentRecord } from "./records";

/**
 * The deployments the failures hold, by key, with their last records. A bundle that could not be read
 * holds every cluster it was deployed to; so does every other bundle its GitRepo deployed that was not
 * read now, since a fleet.yaml that cannot be read may have given it its name (it is pruned once the
 * GitRepo reads cleanly). Those clusters' failures replace the bundle's cluster-less one. `readNow`
 * holds the bundle refs (keys.ts) read in this update. A GitRepo that could not be read as a whole
 * (`unreadGitRepos`) holds everything it deployed; one that deployed nothing fails on its own line.
 */
export function heldRecords(failures: FailedDeployments, unread: UnreadBundle[], readNow: ReadonlySet<string>, previous: PreviousDeployment | undefined,
  unreadGitRepos: ReadonlyMap<string, FleetError> = new Map()): Map<string, DeploymentRecord> {
  const held = new Map<string, DeploymentRecord>();
  const records = previous?.records ?? {};
  for (const [gitRepo, err] of unreadGitRepos) {
    const deployed = Object.values(records).filter((r) => r.gitRepo === gitRepo);
    for (const r of deployed) failures.fail(r, new FleetError(`kept as deployed: the GitRepo could not be read: ${err.reason}`, { file: err.context.file, field: err.context.field }));
    if (!deployed.length) failures.fail({ gitRepo, bundle: "", cluster: "" }, err);
  }
  const unreadRepos = new Map<string, string[]>();
  for (const b of unread) unreadRepos.set(b.gitRepo, [...(unreadRepos.get(b.gitRepo) ?? []), b.bundle]);
  for (const r of Object.values(records)) {
    const names = unreadRepos.get(r.gitRepo);
    if (!names || readNow.has(bundleRef(r)) || failures.has(r)) continue;
    const own = failures.get({ gitRepo: r.gitRepo, bundle: r.bundle, cluster: "" });
    failures.fail(r, own ? new FleetError(own.reason, { file: own.file, field: own.field }) : new FleetError(
      `kept as deployed, not pruned: bundle(s) ${names.join(", ")} of this GitRepo could not be read, and a fleet.yaml that cannot be read may be the one naming this bundle; ` +
      "it is pruned once every bundle of the GitRepo reads"));
  }
  for (const f of failures.list()) {
    if (!f.cluster) continue;
    const r = records[deploymentKey(f)];
    if (r) held.set(deploymentKey(f), r);
  }
  // A bundle-level failure stands alone only where no cluster had the bundle.
  for (const b of unread) if ([...held.values()].some((r) => r.gitRepo === b.gitRepo && r.bundle === b.bundle)) failures.forget({ gitRepo: b.gitRepo, bundle: b.bundle, cluster: "" });
  return held;
}

/** The state's objects of a held deployment, retained as they were. */
export function heldObjects(deployed: DeployedBundle): DesiredObject[] {
  return deployed.objects.map(({ manifest, retain }) => ({ key: pairObjectKey(manifest), manifest, ...(retain ? { retain } : {}) }));
}

/**
 * A held deployment's BundleDeployment: its last inputs, frozen, so the engine changes nothing (and
 * retries it only if its last apply did not reach Ready). Deployed by an earlier version (one resource
 * per object), it adopts those objects, paused: they stay as they are, in its inventory.
 */
export function heldSpec(record: DeploymentRecord, deployed: DeployedBundle, objects: DesiredObject[]): PairSpec {
  if (deployed.spec) return deployed.spec;
  return {
    deploymentId: deployed.appliedDeploymentId ?? record.deploymentId, objects: pairObjects(objects), paused: true,
    deletePolicy: deletePolicyOf(ownerLabels(record)), adopt: pairObjects(objects),
  };
}

/** The namespaces held deployments sit in that nothing else needs now, as the state registered them. */
export function heldNamespaces(held: DeployedBundle[], desired: ReadonlySet<string>): DeployedNamespace[] {
  const out = new Map<string, DeployedNamespace>();
  for (const d of held) for (const ns of d.namespaces ?? []) if (!desired.has(ns.metadata.name)) out.set(ns.name, ns);
  return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}
