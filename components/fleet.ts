/**
 * The whole fleet as one component: the desired state (core/desired) mapped to resources, nothing
 * decided here. Clusters (providers, and the setup that creates their namespaces and agent), GitRepos, and one BundleDeployment per
 * deployment under its GitRepo, in the order core gives (sorted by name; dependencies first).
 */
import * as pulumi from "@pulumi/pulumi";
import { DeploymentRecord } from "../core/desired/records";
import { PairReport, withheldMessages } from "../core/desired/pair";
import { DesiredState, FLEET_TYPE } from "../core/desired/types";
import { bundleDeployment } from "./bundle-deployment";
import { BundleDeploymentPair } from "./pair";
import { Cluster } from "./cluster";
import { GitRepo } from "./git-repo";

/** A moved-in cluster's components were moved to the root of the state (core/desired/previous.ts arrivedClusters). */
const fromStateRoot = (arrived: boolean): pulumi.Alias[] => (arrived ? [{ parent: pulumi.rootStackResource }] : []);


export class Fleet extends pulumi.ComponentResource {
  readonly deploymentRecords: pulumi.Output<Record<string, DeploymentRecord>>;
  readonly deploymentStates: pulumi.Output<Record<string, PairReport>>;
  /** Each cluster's setup (its namespaces and agent) state, by cluster. */
  readonly clusterSetupStates: pulumi.Output<Record<string, PairReport>>;

  constructor(name: string, desired: DesiredState, opts: pulumi.ComponentResourceOptions = {}) {
    super(FLEET_TYPE, name, {}, opts);
    for (const w of desired.warnings) pulumi.log.warn(w, this);
    const clusters = new Map(desired.clusters.map((c) => [c.name, new Cluster(c.name, c, { parent: this, aliases: fromStateRoot(c.arrived) })]));
    const gitRepos = new Map(desired.gitRepos.map((r) => [r.name, new GitRepo(r.name, r, { parent: this })]));
    const deployments = new Map<string, BundleDeploymentPair>();
    for (const d of desired.deployments) {
      const cluster = clusters.get(d.cluster)!;
      deployments.set(d.key, bundleDeployment(d.key, {
        deployment: d, provider: cluster.fleetProviderFor(d.account), setup: cluster.setup,
        waitFor: d.dependsOn.map((key) => [key, deployments.get(key)!]),
      }, { parent: gitRepos.get(d.gitRepo)!, aliases: [...fromStateRoot(d.arrived), ...(d.formerName ? [{ name: d.formerName }] : [])] }));
    }
    // Registered beside the GitRepos (their GitRepo may be gone): adopted and pruned in this update.
    for (const r of desired.retiring) {
      new BundleDeploymentPair(r.key, r.spec, { parent: this, provider: clusters.get(r.cluster)!.fleetProvider });
    }
    this.deploymentRecords = pulumi.output(desired.records);
    // Fleet's BundleDeployment status of each pair, as its provider reported it: the operations read
    // failures (ErrApplied, NotReady, WaitApplied) from here, so every machine sees the same.
    const secret = new Set(desired.deployments.filter((d) => d.secret).map((d) => d.key));
    this.deploymentStates = pulumi.output(Object.fromEntries([...deployments].map(([key, p]) => [key, pulumi.all([p.state, pulumi.unsecret(p.messages), p.appliedDeploymentId])
      .apply(([state, messages, appliedDeploymentId]) => ({ state, messages: secret.has(key) ? withheldMessages(messages?.length ?? 0) : messages ?? [], appliedDeploymentId }))])));
    this.clusterSetupStates = pulumi.output(Object.fromEntries([...clusters].flatMap(([name, c]) => (c.setup ? [[name, pulumi.all([c.setup.state, c.setup.messages, c.setup.appliedDeploymentId])
      .apply(([state, messages, appliedDeploymentId]) => ({ state, messages: messages ?? [], appliedDeploymentId }))]] : []))));
    this.registerOutputs({ summary: desired.summary, deployments: this.deploymentRecords, deploymentStates: this.deploymentStates, clusterSetupStates: this.clusterSetupStates });
  }
}
