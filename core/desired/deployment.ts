/**
 * One deployment as the program registers it, once the steps have decided (state.ts): its spec, its
 * dependencies and gates, its record, and the lines its preview says.
 */
import { healthChecksInput } from "../config/health-checks";
import { kubernetesEventsInput } from "../config/notifications";
import { RenderedDeployment } from "../render/deployments";
import { PlanEntry } from "../targeting/plan";
import { clusterNamespacesOf, crdsNotUpgraded, desiredHooks, desiredObjects, pairSpecOf } from "./objects";
import { Ground } from "./ground";
import { deploymentKey, parseBundleRef } from "../model/keys";
import { deploymentRecord } from "./records";
import { renderedSecretsNotes } from "./render-secrets";
import { Gathered, Holds, Rendered } from "./state-steps";
import { DesiredDeployment, DesiredNamespace } from "./types";

/** Where a deployment lands: its cluster's namespaces, and the clusters new to this stack. */
export interface Placement {
  namespaces: Map<string, DesiredNamespace[]>;
  arrived: Set<string>;
}

/** What the steps produced that a deployment's registration reads. */
export interface Decided {
  got: Gathered;
  r: Rendered;
  holds: Holds;
}

/** One deployment as the program registers it. */
export function desiredDeployment(g: Ground, { got, r, holds }: Decided, e: PlanEntry, at: Placement): DesiredDeployment {
  const key = deploymentKey(e);
  const rendered = r.rendered.get(e)!;
  const nsNames = new Set(at.namespaces.get(e.cluster)!.map((ns) => ns.metadata.name));
  const repo = g.config.gitRepos.find((x) => x.name === e.gitRepo);
  const objects = desiredObjects(e, rendered, repo?.chartCrds);
  const hookObjects = [...(rendered.hooks?.keys() ?? [])].map((manifest) => ({ manifest }));
  const account = got.accounts.userOf.get(e);
  const commit = g.commitOf(e.gitRepo);
  const revision = r.unchanged.has(e) ? (r.lastRevisions.get(e) ?? 1) : (r.lastRevisions.get(e) ?? 0) + 1;
  return {
    key,
    entry: e,
    gitRepo: e.gitRepo,
    cluster: e.cluster,
    commit,
    dependsOn: [
      ...e.dependsOn.map((ref) => deploymentKey({ ...parseBundleRef(ref), cluster: e.cluster })),
      ...(holds.rollouts.gates.get(e) ?? []).map(deploymentKey),
    ],
    ...(account ? { account } : {}),
    // A hook creates its object where it says, as the set does: the setup's namespaces first.
    clusterNamespaces: clusterNamespacesOf([...objects, ...hookObjects], nsNames),
    ...(g.secrets.get(e.cluster)?.some((s) => s.gitRepo === e.gitRepo) ? { afterOperatorSecrets: true as const } : {}),
    ...([...objects, ...hookObjects].some((o) => o.manifest.metadata.namespace && o.manifest.metadata.namespace === g.agentOwned(e.cluster))
      ? { inAgentNamespace: true as const }
      : {}),
    spec: {
      ...pairSpecOf(e, objects, rendered.secret, desiredHooks(e, rendered)),
      // Fleet's agent then installs without server-side apply (install.go configureInstallAction): a chart's crds/ only created when absent.
      ...(e.options.helm?.takeOwnership || repo?.takeOwnership || e.options.helm?.force || e.options.correctDrift?.force
        ? { installsWithoutServerSideApply: true }
        : {}),
      ...healthChecksInput(g.config.healthChecks),
      ...kubernetesEventsInput(g.config.notifications, e),
    },
    warnings: warningsOf(e, [...rendered.warnings, ...notesOf(g, got, e, rendered), ...crdsNotUpgraded(objects, g.facts.deployed?.get(key)?.spec)]),
    objects,
    arrived: at.arrived.has(e.cluster),
    ...(rendered.secret ? { secret: true as const } : {}),
    record: deploymentRecord(e, commit, objects.length, revision, r.unchanged.has(e) ? g.previous?.records?.[key]?.deployedAt : g.deployedNow),
  };
}

/** What the deployment says beyond its render: who it cannot act as, values not read, Secrets written in render mode, drift not corrected. */
function notesOf(g: Ground, got: Gathered, e: PlanEntry, r: RenderedDeployment): string[] {
  const unread = e.options.serviceAccount ? undefined : got.accounts.unread.get(e.cluster);
  const valuesNotRead = got.valuesFrom.notRead.get(e);
  return [
    ...(unread ? [`serviceAccount: ${unread}`] : []),
    ...(valuesNotRead ? [valuesNotRead] : []),
    ...(g.renderMode ? renderedSecretsNotes(g.pinned.renderDir!, e.cluster, r.objects, r.decrypted) : []),
    ...(e.options.correctDrift?.enabled && !g.options.correctsDrift
      ? [
          "correctDrift.enabled is honoured by `npm run up` and the operations' Automation API (it refreshes this bundle's objects first); a plain `pulumi up` corrects drift only with --refresh",
        ]
      : []),
  ];
}

/** The deployment's preview lines: paused first, then what the bundle, the render and the checks said. */
function warningsOf(e: PlanEntry, warnings: string[]): string[] {
  return [
    ...(e.paused ? [`bundle ${e.bundle} is paused on cluster ${e.cluster}: its objects stay exactly as deployed (no update, no delete)`] : []),
    ...warnings.map((w) => `bundle ${e.bundle} on cluster ${e.cluster}: ${w}`),
  ];
}
