/**
 * Reach and identity are the operator's (the stack file); a GitRepo's content may only narrow them
 * (issue 41). Each rule decides, for one bundle deployment, whether its content (fleet.yaml and its
 * targetCustomizations, the rendered objects, the templates' lookups) asks for more than its GitRepo's
 * stack entry gives: which clusters, which service account, which namespaces, whether existing objects
 * may be adopted. A refusal fails that deployment alone (core/plan/failures.ts), and its message
 * names the fleet.yaml field and the stack setting that would allow it. Pure: state.ts records them.
 */
import { GitRepoConfig, namespaceAllowed } from "../config/git-repo";
import { Bundle, DeploymentOptions } from "../bundles/types";
import { describeObject, K8sObject } from "../model/k8s-object";
import { FleetError } from "../base/errors";
import { bundleRef } from "../model/keys";
import { PlanEntry } from "../targeting/plan";
import { Targeting } from "../targeting/match";
import { RenderedDeployment } from "../render/deployments";

type Fail = (entry: PlanEntry, err: FleetError) => void;

/** What of the stack the rules read. */
export interface ReachStack {
  file: string;
  gitRepos: GitRepoConfig[];
}

/** Where the operator would allow it: `gitRepos[<name>].<setting>` (a HelmOp's: `helmOps[<name>]`) in the stack file. */
const setting = (stack: { file: string }, repo: GitRepoConfig, name: string, value = "") =>
  `${repo.helmOp ? "helmOps" : "gitRepos"}[${repo.name}].${name}${value && `: ${value}`} in ${stack.file}`;

/**
 * Before anything is rendered, so nothing is rendered, looked up or impersonated as content asked: the
 * clusters (overrideTargets), the service account, the namespace and adoption (helm.takeOwnership).
 * `targeting`: what the bundles' and the GitRepos' targets select (targeting/match.ts).
 */
export function checkReach(entries: PlanEntry[], stack: ReachStack, bundles: Bundle[], targeting: Pick<Targeting, "bundles" | "gitRepos">, fail: Fail): void {
  const repos = new Map(stack.gitRepos.map((r) => [r.name, r]));
  // By bundle ref: two GitRepos' bundles of one name are two bundles (core/model/keys.ts).
  const byRef = new Map(bundles.map((b) => [bundleRef({ gitRepo: b.gitRepo, bundle: b.name }), b]));
  const outside = outsideTargets(
    bundles.filter((b) => b.overrideTargets && !repos.get(b.gitRepo)?.allowOverrideTargets),
    targeting,
  );
  for (const e of entries) {
    const repo = repos.get(e.gitRepo);
    const bundle = byRef.get(bundleRef(e));
    if (!repo || !bundle) continue;
    const ctx = { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: bundle.fleetYaml };
    const clusters = outside.get(bundle);
    // The whole bundle fails, not only its clusters outside: fleet.yaml said where it goes as one intent,
    // and deploying part of it would be deploying somewhere else than it said, seen on no cluster it reached.
    const err = clusters?.length
      ? new FleetError(
          `overrideTargets reaches cluster(s) ${clusters.join(", ")}, outside the GitRepo's targets: content may narrow where it deploys, not widen it, ` +
            `so this bundle deploys nowhere until it does; set ${setting(stack, repo, "allowOverrideTargets", "true")} to allow it (Fleet's behaviour), ` +
            `or add those clusters to gitRepos[${repo.name}].targets`,
          { ...ctx, field: "overrideTargets" },
        )
      : (serviceAccountRefusal(e, bundle, repo, stack) ?? namespaceRefusal(e, bundle, repo, stack) ?? takeOwnershipRefusal(e, bundle, repo, stack));
    if (err) fail(e, err.within(ctx));
  }
}

/** Per bundle whose fleet.yaml sets overrideTargets, the clusters it reaches that its GitRepo's targets do not. */
function outsideTargets(bundles: Bundle[], targeting: Pick<Targeting, "bundles" | "gitRepos">): Map<Bundle, string[]> {
  const out = new Map<Bundle, string[]>();
  for (const b of bundles) {
    const allowed = targeting.gitRepos.get(b.gitRepo);
    const reached = (targeting.bundles.get(b) ?? []).filter((m) => !m.doNotDeploy && !allowed?.has(m.cluster)).map((m) => m.cluster);
    if (reached.length) out.set(b, reached);
  }
  return out;
}

/**
 * The fleet.yaml field an option of the deployment came from: the last of its targetCustomizations that
 * sets it (Fleet's merge: a later one overrides), else the bundle's own.
 */
function fieldOf(e: PlanEntry, bundle: Bundle, field: string, sets: (o: DeploymentOptions) => boolean): string {
  const custom = bundle.targets.slice(0, bundle.targets.length - bundle.restrictions.length);
  for (const name of [...e.customizations].reverse()) {
    const t = custom.find((c) => c.name === name);
    if (t && sets(t)) return `targetCustomizations[${name}].${field}`;
  }
  return field;
}

/**
 * Content's serviceAccount must be the stack's or in allowedServiceAccounts. When the stack names neither,
 * content may name any, as in Fleet (whose GitRepoRestriction binds only the GitRepo's own field).
 */
function serviceAccountRefusal(e: PlanEntry, bundle: Bundle, repo: GitRepoConfig, stack: ReachStack): FleetError | undefined {
  const account = e.options.serviceAccount;
  if (!account || account === repo.serviceAccount || repo.allowedServiceAccounts?.includes(account)) return undefined;
  if (!repo.serviceAccount && !repo.allowedServiceAccounts) return undefined;
  const given = [
    repo.serviceAccount ? `serviceAccount ${repo.serviceAccount}` : "no serviceAccount",
    ...(repo.allowedServiceAccounts?.length ? [`allowedServiceAccounts ${repo.allowedServiceAccounts.join(", ")}`] : []),
  ].join(" and ");
  return new FleetError(
    `service account ${account} is refused: the stack gives this GitRepo ${given}, and content may not choose whom it deploys as; ` +
      `add ${account} to ${setting(stack, repo, "allowedServiceAccounts")} to allow it`,
    { field: fieldOf(e, bundle, "serviceAccount", (o) => o.serviceAccount === account) },
  );
}

/** The namespace objects without one land in (and the cluster creates) must be allowed. */
function namespaceRefusal(e: PlanEntry, bundle: Bundle, repo: GitRepoConfig, stack: ReachStack): FleetError | undefined {
  const allowed = repo.allowedTargetNamespaces;
  if (!allowed || namespaceAllowed(e.namespace, allowed)) return undefined;
  const key = e.options.namespace ? "namespace" : "defaultNamespace";
  return new FleetError(
    `namespace ${e.namespace}${e.options[key] ? "" : " (none set: Fleet's default)"} is not in ${setting(stack, repo, "allowedTargetNamespaces")} ` +
      `(${allowed.join(", ")}); add it there to allow it`,
    { field: fieldOf(e, bundle, key, (o) => o[key] === e.namespace) },
  );
}

/** Content may adopt what exists (helm.takeOwnership) only when the stack allows it. */
function takeOwnershipRefusal(e: PlanEntry, bundle: Bundle, repo: GitRepoConfig, stack: ReachStack): FleetError | undefined {
  if (!e.options.helm?.takeOwnership || repo.allowTakeOwnership) return undefined;
  const field = bundle.options.helm?.takeOwnership ? "helm.takeOwnership" : fieldOf(e, bundle, "helm.takeOwnership", (o) => !!o.helm?.takeOwnership);
  return new FleetError(
    `adopting objects that already exist on the cluster is not allowed for this GitRepo's content; set ` +
      `${setting(stack, repo, "allowTakeOwnership", "true")} to allow it (it never adopts what another GitRepo owns)`,
    { field },
  );
}

/** Whether an object is inside `allowed`: namespaced ones by namespace; of cluster scope only a Namespace of an allowed name. */
const objectAllowed = (o: K8sObject, allowed: readonly string[]) =>
  o.metadata.namespace ? namespaceAllowed(o.metadata.namespace, allowed) : o.kind === "Namespace" && namespaceAllowed(o.metadata.name, allowed);

/**
 * After rendering: with allowedTargetNamespaces, every namespaced object must be in an allowed namespace,
 * and of cluster scope only Namespaces of allowed names pass (Fleet rejects every cluster-scoped object
 * under a targetNamespace).
 */
export function checkReachObjects(
  entries: PlanEntry[],
  rendered: ReadonlyMap<PlanEntry, RenderedDeployment>,
  stack: { file: string; gitRepos: GitRepoConfig[] },
  bundles: Bundle[],
  fail: Fail,
): void {
  const repos = new Map(stack.gitRepos.map((r) => [r.name, r]));
  for (const e of entries) {
    const repo = repos.get(e.gitRepo);
    const allowed = repo?.allowedTargetNamespaces;
    if (!allowed) continue;
    const refused = rendered
      .get(e)!
      .objects.filter((o) => !objectAllowed(o, allowed))
      .map((o) => `${describeObject(o)}${o.metadata.namespace ? "" : " (cluster-scoped)"}`);
    if (!refused.length) continue;
    fail(
      e,
      new FleetError(
        `${refused.length} object(s) outside ${setting(stack, repo, "allowedTargetNamespaces")} (${allowed.join(", ")}): ` +
          `${refused.slice(0, 5).join(", ")}${refused.length > 5 ? ", …" : ""}; objects of cluster scope other than those Namespaces are refused too, ` +
          "as Fleet refuses them under a targetNamespace; move them, or add the namespace there to allow it",
        { gitRepo: e.gitRepo, bundle: e.bundle, cluster: e.cluster, file: bundles.find((b) => b.gitRepo === e.gitRepo && b.name === e.bundle)?.fleetYaml },
      ),
    );
  }
}
