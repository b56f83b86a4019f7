/**
 * Between GitRepos (issue 41): an object has one owner, the deployment that deployed it before, and a
 * bundle of another GitRepo that declares it (a squatter) never takes it nor holds the owner back.
 * Who deployed it before: the stack's state (the objects of each deployment), else the live object's
 * ownership labels. A Namespace another GitRepo's deployments use on a cluster (the cluster creates it
 * for them) cannot be declared by a bundle of a different GitRepo: declaring it would make it that
 * bundle's, to change and to delete with everything in it.
 */
import { hookObject } from "../model/pair";
import { K8sObject, objectKey } from "../model/k8s-object";
import { FleetError } from "../base/errors";
import { RenderedDeployment } from "../render/deployments";
import { PlanEntry } from "../targeting/plan";
import { DeployedBundle } from "./facts";
import { clusterOfKey, deploymentKey } from "../model/keys";
import { DeploymentRecord } from "./records";
import { ClusterFacts } from "./cluster-facts";

export interface Owner {
  gitRepo: string;
  bundle: string;
}

/** What the stack deployed before: the state's objects per deployment key, and whose deployment each key was. */
export interface Prior {
  deployed?: ReadonlyMap<string, DeployedBundle>;
  records?: Record<string, DeploymentRecord>;
}

/** The key checkSingleOwner claims an object under on a cluster. */
export const claimKey = (cluster: string, o: K8sObject) => `${cluster}\u0000${objectKey(o)}`;

/** Who deployed each contested object before as the state holds it (by claimKey). */
function ownersInState(contested: { cluster: string; object: K8sObject }[], prior: Prior): Map<string, Owner> {
  const owners = new Map<string, Owner>();
  const wanted = new Set(contested.map((c) => claimKey(c.cluster, c.object)));
  for (const [key, d] of prior.deployed ?? []) {
    const record = prior.records?.[key];
    if (!record) continue;
    // Its hooks' objects are its own too, though not in its set (a hook-succeeded hook is gone between runs).
    // A hook the state holds only by its key (its content gone) claims its object all the same.
    const hooks = (d.spec?.hooks ?? []).map((h) => ({ manifest: hookObject(h) as K8sObject }));
    for (const o of [...d.objects, ...hooks]) {
      const k = claimKey(record.cluster, o.manifest);
      if (wanted.has(k)) owners.set(k, { gitRepo: record.gitRepo, bundle: record.bundle });
    }
  }
  return owners;
}

/** The contested objects whose owner the state does not tell: their live labels are read (gather-objects.ts). */
export function ownersUnknown<C extends { cluster: string; object: K8sObject }>(contested: C[], prior: Prior): C[] {
  const inState = ownersInState(contested, prior);
  return contested.filter((c) => !inState.has(claimKey(c.cluster, c.object)));
}

/**
 * Who deployed each contested object before (by claimKey): the state first, then, for what it does not
 * hold, the live object's labels as gathered (ClusterFacts.owners; none in render mode). A cluster that
 * could not be read tells nothing (plan order decides).
 */
export function knownOwners(contested: { cluster: string; object: K8sObject }[], prior: Prior, known?: ReadonlyMap<string, ClusterFacts>): Map<string, Owner> {
  const owners = ownersInState(contested, prior);
  for (const c of contested) {
    const k = claimKey(c.cluster, c.object);
    const live = known?.get(c.cluster)?.owners.get(k);
    if (!owners.has(k) && live) owners.set(k, live);
  }
  return owners;
}

/** Per "<cluster>\0<namespace>": the GitRepos whose deployments were in that namespace (their own namespace) in the last update. */
export function namespaceOwners(prior: Prior): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const r of Object.values(prior.records ?? {})) {
    const k = `${r.cluster}\u0000${r.namespace}`;
    (out.get(k) ?? out.set(k, new Set()).get(k)!).add(r.gitRepo);
  }
  return out;
}

/** The other GitRepos a namespace belongs to when the deployment's own GitRepo was not there before; undefined when it is its own (or nobody's). */
export function foreignOwners(
  owners: ReadonlyMap<string, ReadonlySet<string>>,
  at: { cluster: string; gitRepo: string; namespace: string },
): string[] | undefined {
  const here = owners.get(`${at.cluster}\u0000${at.namespace}`);
  return here?.size && !here.has(at.gitRepo) ? [...here].sort() : undefined;
}

/**
 * fleet.yaml namespaceLabels and namespaceAnnotations describe the bundle's own namespace, which the
 * cluster creates and which bundles of several GitRepos may share. A namespace's metadata is the
 * GitRepo's (or GitRepos') whose deployments were in it before: a bundle of another GitRepo that sets
 * them there (a pod-security label, say) fails alone and changes nothing, so it can neither change
 * another team's namespace nor, by a conflicting value, hold that team's bundles back.
 */
export function checkNamespaceMetadata(
  entries: PlanEntry[],
  before: ReadonlyMap<string, ReadonlySet<string>>,
  fail: (entry: PlanEntry, err: FleetError) => void,
): void {
  for (const e of entries) {
    const fields = (["namespaceLabels", "namespaceAnnotations"] as const).filter((f) => Object.keys(e.options[f] ?? {}).length);
    if (!fields.length) continue;
    const owners = foreignOwners(before, e);
    if (!owners) continue;
    fail(
      e,
      new FleetError(
        `namespace ${e.namespace} is GitRepo ${owners.join(", ")}'s on this cluster (its deployments were there first): ` +
          `${fields.join(" and ")} of another GitRepo's bundle may not change it; deploy into a namespace of this GitRepo's own, or drop them`,
        { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, field: fields[0] },
      ),
    );
  }
}

/**
 * A Namespace object declared by a bundle of GitRepo G on a cluster where another GitRepo's deployments
 * use that namespace (now, or as the state holds them for deployments not rendered now) fails that bundle
 * deployment, unless G's own deployment declared it before (it is G's, and the others are in G's namespace).
 */
export function checkNamespaceSquats(
  entries: PlanEntry[],
  rendered: ReadonlyMap<PlanEntry, RenderedDeployment>,
  prior: Prior,
  fail: (entry: PlanEntry, err: FleetError) => void,
): void {
  const users = new Map<string, Set<string>>();
  const use = (cluster: string, ns: string, gitRepo: string) => {
    const k = `${cluster}\u0000${ns}`;
    (users.get(k) ?? users.set(k, new Set()).get(k)!).add(gitRepo);
  };
  for (const e of entries) {
    use(e.cluster, e.namespace, e.gitRepo);
    for (const o of rendered.get(e)!.objects) if (o.metadata.namespace) use(e.cluster, o.metadata.namespace, e.gitRepo);
  }
  const now = new Set(entries.map(deploymentKey));
  const declaredBefore = new Set<string>();
  for (const [key, d] of prior.deployed ?? []) {
    const gitRepo = prior.records?.[key]?.gitRepo;
    if (!gitRepo) continue;
    const cluster = clusterOfKey(key);
    for (const { manifest: o } of d.objects) {
      if (o.kind === "Namespace") declaredBefore.add(`${cluster}\u0000${gitRepo}\u0000${o.metadata.name}`);
      else if (o.metadata.namespace && !now.has(key)) use(cluster, o.metadata.namespace, gitRepo);
    }
    if (!now.has(key)) for (const ns of d.namespaces ?? []) use(cluster, ns.metadata.name, gitRepo);
  }
  for (const e of entries) {
    for (const o of rendered.get(e)!.objects) {
      if (o.kind !== "Namespace" || o.metadata.namespace) continue;
      const others = [...(users.get(`${e.cluster}\u0000${o.metadata.name}`) ?? [])].filter((g) => g !== e.gitRepo).sort();
      if (!others.length || declaredBefore.has(`${e.cluster}\u0000${e.gitRepo}\u0000${o.metadata.name}`)) continue;
      fail(
        e,
        new FleetError(
          `Namespace ${o.metadata.name} is used on this cluster by GitRepo ${others.join(", ")}, whose deployments are in it: a bundle of another ` +
            "GitRepo may not declare it (it would be this bundle's to change, and to delete with everything in it), whatever takeOwnership says; " +
            "remove the Namespace from this bundle (the cluster creates the namespaces its deployments use)",
          { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster },
        ),
      );
      break;
    }
  }
}
