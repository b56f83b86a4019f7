/**
 * The whole fleet as one component: the desired state (core/desired) mapped to resources, nothing
 * decided here. Clusters (providers, namespaces, agent), GitRepos, and one BundleDeployment per
 * deployment under its GitRepo, in the order core gives (sorted by name; dependencies first).
 */
import * as pulumi from "@pulumi/pulumi";
import { DeploymentRecord } from "../core/desired/records";
import { DesiredState, FLEET_TYPE } from "../core/desired/types";
import { Agent } from "./agent";
import { BundleDeployment } from "./bundle-deployment";
import { Cluster } from "./cluster";
import { GitRepo } from "./git-repo";

/** A moved-in cluster's components were moved to the root of the state (core/desired/previous.ts arrivedClusters). */
const fromStateRoot = (arrived: boolean): pulumi.Alias[] => (arrived ? [{ parent: pulumi.rootStackResource }] : []);

export class Fleet extends pulumi.ComponentResource {
  readonly deploymentRecords: pulumi.Output<Record<string, DeploymentRecord>>;

  constructor(name: string, desired: DesiredState, opts: pulumi.ComponentResourceOptions = {}) {
    super(FLEET_TYPE, name, {}, opts);
    for (const w of desired.warnings) pulumi.log.warn(w, this);
    const clusters = new Map<string, Cluster>();
    for (const c of desired.clusters) {
      const cluster = new Cluster(c.name, c, { parent: this, aliases: fromStateRoot(c.arrived) });
      clusters.set(c.name, cluster);
      if (c.agent) new Agent(c.name, { agent: c.agent, provider: cluster.provider }, { parent: cluster });
    }
    const gitRepos = new Map(desired.gitRepos.map((r) => [r.name, new GitRepo(r.name, r, { parent: this })]));
    const deployments = new Map<string, BundleDeployment>();
    for (const d of desired.deployments) {
      const cluster = clusters.get(d.cluster)!;
      deployments.set(d.key, new BundleDeployment(d.key, {
        deployment: d, provider: cluster.providerFor(d.account), namespaces: cluster.namespaces, dependsOn: d.dependsOn.map((key) => deployments.get(key)!),
      }, { parent: gitRepos.get(d.gitRepo)!, aliases: fromStateRoot(d.arrived) }));
    }
    this.deploymentRecords = pulumi.output(desired.records);
    this.registerOutputs({ summary: desired.summary, deployments: this.deploymentRecords });
  }
}
