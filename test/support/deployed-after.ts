/**
 * The stack after a desired state was deployed, as the next update reads it: its outputs (records,
 * deploymentIds, pauses) and the objects its state holds per BundleDeployment (with their retain reasons).
 */
import { DeployedBundle } from "../../core/desired/facts";
import { PreviousDeployment } from "../../core/desired/previous";
import { DesiredState } from "../../core/desired/types";

export function deployedAfter(first: DesiredState): { previous: PreviousDeployment; deployed: Map<string, DeployedBundle> } {
  const previous: PreviousDeployment = {
    gitRepos: Object.fromEntries(first.gitRepos.map((r) => [r.name, { commit: r.commit, clusters: r.clusters }])),
    clusters: first.clusters.map((c) => c.name),
    deploymentIds: Object.fromEntries(Object.entries(first.records).map(([k, r]) => [k, r.deploymentId])),
    paused: Object.fromEntries(Object.keys(first.records).map((k) => [k, false])),
    records: first.records,
  };
  const deployed = new Map(
    first.deployments.map((d) => [
      d.key,
      {
        appliedDeploymentId: d.record.deploymentId,
        objects: d.objects.map((o) => ({ manifest: o.manifest, ...(o.retain ? { retain: o.retain } : {}), ...(o.createOnly ? { createOnly: true } : {}) })),
        spec: d.spec,
        namespaces: first.clusters
          .find((c) => c.name === d.cluster)!
          .namespaces.filter((ns) => d.objects.some((o) => o.manifest.metadata.namespace === ns.metadata.name)),
      } as DeployedBundle,
    ]),
  );
  return { previous, deployed };
}
