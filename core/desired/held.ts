/**
 * What a failed bundle deployment keeps: exactly what the last update deployed. Its record (deploymentID,
 * commit, revision) stays, and its objects are registered as the state holds them, frozen, so the engine
 * neither changes nor prunes them; the namespaces they sit in and the user they were applied as stay too.
 * Fleet gets the same by leaving the BundleDeployment's release alone while the new one cannot be applied.
 */
import { UnreadBundle } from "../bundles/read";
import { FleetError } from "../base/errors";
import { DeploymentFailure, describeFailure, FailedDeployments } from "../plan/failures";
import { DeployedBundle, DeployedNamespace } from "./facts";
import { bundleRef, deploymentKey, parseBundleRef } from "../model/keys";
import { clusterNamespacesOf, DesiredObject } from "./objects";
import { ownerLabels } from "./ownership";
import { PairSpec, pairObjectKey, pairObjects } from "../model/pair";
import { deletePolicyOf } from "./delete-policy";
import { PreviousDeployment } from "./previous";
import { DeploymentRecord } from "./records";
import { describeObject, objectKey } from "../model/k8s-object";
import { FleetState } from "../plan/pipeline";
import { RenderedDeployment } from "../render/deployments";
import { PlanEntry } from "../targeting/plan";
import { DesiredDeployment } from "./types";

/**
 * The deployments the failures hold, by key, with their last records. A bundle that could not be read
 * holds every cluster it was deployed to; so does every other bundle its GitRepo deployed that was not
 * read now, since a fleet.yaml that cannot be read may have given it its name (it is pruned once the
 * GitRepo reads cleanly). Those clusters' failures replace the bundle's cluster-less one. `readNow`
 * holds the bundle refs (keys.ts) read in this update. A GitRepo that could not be read as a whole
 * (`unreadGitRepos`) holds everything it deployed; one that deployed nothing fails on its own line.
 */
export function heldRecords(
  failures: FailedDeployments,
  unread: UnreadBundle[],
  readNow: ReadonlySet<string>,
  previous: PreviousDeployment | undefined,
  unreadGitRepos: ReadonlyMap<string, FleetError> = new Map(),
): Map<string, DeploymentRecord> {
  const held = new Map<string, DeploymentRecord>();
  const records = previous?.records ?? {};
  for (const [gitRepo, err] of unreadGitRepos) {
    const deployed = Object.values(records).filter((r) => r.gitRepo === gitRepo);
    for (const r of deployed)
      failures.fail(r, new FleetError(`kept as deployed: the GitRepo could not be read: ${err.reason}`, { file: err.context.file, field: err.context.field }));
    if (!deployed.length) failures.fail({ gitRepo, bundle: "", cluster: "" }, err);
  }
  const unreadRepos = new Map<string, string[]>();
  for (const b of unread) unreadRepos.set(b.gitRepo, [...(unreadRepos.get(b.gitRepo) ?? []), b.bundle]);
  for (const r of Object.values(records)) {
    const names = unreadRepos.get(r.gitRepo);
    if (!names || readNow.has(bundleRef(r)) || failures.has(r)) continue;
    const own = failures.get({ gitRepo: r.gitRepo, bundle: r.bundle, cluster: "" });
    failures.fail(
      r,
      own
        ? new FleetError(own.reason, { file: own.file, field: own.field })
        : new FleetError(
            `kept as deployed, not pruned: bundle(s) ${names.join(", ")} of this GitRepo could not be read, and a fleet.yaml that cannot be read may be the one naming this bundle; ` +
              "it is pruned once every bundle of the GitRepo reads",
          ),
    );
  }
  for (const f of failures.list()) {
    if (!f.cluster) continue;
    const r = records[deploymentKey(f)];
    if (r) held.set(deploymentKey(f), r);
  }
  // A bundle-level failure stands alone only where no cluster had the bundle.
  for (const b of unread)
    if ([...held.values()].some((r) => r.gitRepo === b.gitRepo && r.bundle === b.bundle))
      failures.forget({ gitRepo: b.gitRepo, bundle: b.bundle, cluster: "" });
  return held;
}

/** The state's objects of a held deployment, retained as they were. */
export function heldObjects(deployed: DeployedBundle): DesiredObject[] {
  return deployed.objects.map(({ manifest, retain }) => ({ key: pairObjectKey(manifest), manifest, ...(retain ? { retain } : {}) }));
}

/**
 * A held deployment's BundleDeployment: its last inputs, frozen, so the engine changes nothing (and
 * retries it only if its last apply did not reach Ready). Deployed by an earlier version (one resource
 * per object, no inputs), it holds those objects, paused: they stay as they are, in its inventory (its
 * adoption of them is the migration's: core/migrate/adoptions.ts). One whose content is not in the state
 * holds its inputs as the state does (core/model/pair.ts keptAsInState), never its objects' identities.
 */
export function heldSpec(record: DeploymentRecord, deployed: DeployedBundle, objects: DesiredObject[]): PairSpec {
  if (deployed.spec) return deployed.spec;
  return {
    deploymentId: deployed.appliedDeploymentId ?? record.deploymentId,
    objects: pairObjects(objects),
    paused: true,
    deletePolicy: deletePolicyOf(ownerLabels(record)),
  };
}

/** The namespaces held deployments sit in that nothing else needs now, as the state registered them. */
export function heldNamespaces(held: DeployedBundle[], desired: ReadonlySet<string>): DeployedNamespace[] {
  const out = new Map<string, DeployedNamespace>();
  for (const d of held) for (const ns of d.namespaces ?? []) if (!desired.has(ns.metadata.name)) out.set(ns.name, ns);
  return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

export type HeldDeployments = ReturnType<typeof heldDeployments>;

/**
 * The deployments the failures hold (held.ts), with what they need: the state's objects of each (a plain
 * `pulumi up` has no state, so there a failure of a deployed pair stops everything, as before: nothing
 * is lost), the users they were applied as, and which rendered objects they own.
 */
export function heldDeployments(
  failures: FailedDeployments,
  fleet: FleetState,
  readNow: ReadonlySet<string>,
  previous: PreviousDeployment | undefined,
  inState: ReadonlyMap<string, DeployedBundle> | undefined,
) {
  const records = heldRecords(failures, fleet.unread, readNow, previous, fleet.unreadGitRepos);
  if (records.size && !inState) {
    const first = failures.get(records.values().next().value!)!;
    throw new FleetError(
      `${first.reason} (without the stack's state, as in a plain \`pulumi up\`, a ${heldWord(first)} bundle deployment cannot keep its objects as they are, so nothing ` +
        "was changed; `npm run up` keeps them and deploys everything else)",
      { gitRepo: first.gitRepo, bundle: first.bundle, cluster: first.cluster },
    );
  }
  const kept = new Map<string, { record: DeploymentRecord; deployed: DeployedBundle }>();
  for (const [key, record] of records) {
    const deployed = inState?.get(key);
    if (!deployed?.objects.length) continue;
    kept.set(key, { record, deployed });
    failures.kept(record, { deploymentId: record.deploymentId, objects: deployed.objects.length });
  }
  const owners = new Map<string, string>();
  for (const [, { record, deployed }] of kept)
    for (const o of deployed.objects) owners.set(`${record.cluster}\u0000${objectKey(o.manifest)}`, bundleRef(record));
  const ownerOf = (e: PlanEntry, r: RenderedDeployment) =>
    r.objects.map((o) => [o, owners.get(`${e.cluster}\u0000${objectKey(o)}`)] as const).find(([, b]) => b && b !== bundleRef(e));
  return {
    records: () => [...kept.values()].map((k) => k.record),
    deployedOn: (cluster: string) => [...kept.values()].filter((k) => k.record.cluster === cluster).map((k) => k.deployed),
    accounts: () => [...kept.values()].flatMap((k) => (k.deployed.account ? [{ cluster: k.record.cluster, user: k.deployed.account }] : [])),
    taken: (e: PlanEntry, r: RenderedDeployment) => !!ownerOf(e, r),
    takenError: (e: PlanEntry, r: RenderedDeployment) => {
      const [o, ref] = ownerOf(e, r)!;
      const owner = parseBundleRef(ref!);
      return new FleetError(
        `${describeObject(o)} is also deployed by bundle ${owner.bundle} of GitRepo ${owner.gitRepo} on this cluster, ` +
          "which failed and keeps its objects as last deployed; an object has one owner",
        { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster },
      );
    },
    deployments: (namespacesOf: (cluster: string) => ReadonlySet<string>, arrived: ReadonlySet<string>): DesiredDeployment[] =>
      [...kept].map(([key, { record, deployed }]) => {
        const objects = heldObjects(deployed);
        return {
          key,
          gitRepo: record.gitRepo,
          cluster: record.cluster,
          commit: record.commit,
          dependsOn: [],
          ...(deployed.account ? { account: deployed.account } : {}),
          clusterNamespaces: clusterNamespacesOf(objects, namespacesOf(record.cluster)),
          warnings: [
            `bundle ${record.bundle} on cluster ${record.cluster} ${failures.get(record)!.held ? "" : "failed: "}${describeFailure(failures.get(record)!)}`,
            ...(deployed.spec?.content !== undefined ? [contentMissingWarning(record)] : []),
          ],
          objects,
          // A paused cluster's pair, and a Stalled one, is registered paused: its provider neither applies, retries nor prunes it.
          // One whose content is not in the state stays verbatim: a pause would be an Update the provider cannot apply without the manifests.
          spec:
            frozen(failures.get(record)!) && deployed.spec?.content === undefined
              ? { ...heldSpec(record, deployed, objects), paused: true }
              : heldSpec(record, deployed, objects),
          record,
          arrived: arrived.has(record.cluster),
          held: true,
          ...(deployed.appliedDeploymentId ? { appliedDeploymentId: deployed.appliedDeploymentId } : {}),
          ...(deployed.secret ? { secret: true as const } : {}),
        };
      }),
  };
}

/** A held pair whose content is not in the state (deployed-objects.ts): kept as the state holds it, its manifests nowhere to apply again. */
function contentMissingWarning(record: DeploymentRecord): string {
  return (
    `bundle ${record.bundle} on cluster ${record.cluster}: its content (the manifests it applied) is not in the stack's state, so it is registered ` +
    "exactly as the state holds it and cannot be applied again (a retry or a pause fails on that pair) until the bundle deploys again"
  );
}

/** What a kept pair is, in the words of why it is kept. */
function heldWord(f: DeploymentFailure): string {
  return f.held === "paused" ? "paused cluster's" : f.stalled ? "Stalled" : f.held ? "held" : "failed";
}

/** Held so that nothing is tried, not even the last apply again: a paused cluster's pair, a Stalled one. */
const frozen = (f: DeploymentFailure) => f.held === "paused" || !!f.stalled;
