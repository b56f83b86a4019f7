/**
 * The whole fleet as one component: the desired state (core/desired) mapped to resources, nothing
 * decided here. Clusters (providers, and the setup that creates their namespaces and agent), GitRepos, and one BundleDeployment per
 * deployment under its GitRepo, in the order core gives (sorted by name; dependencies first).
 */
import * as pulumi from "@pulumi/pulumi";
import { DeploymentRecord } from "../core/desired/records";
import { PairReport, withheldMessages } from "../core/model/pair";
import { ClusterAccess, DesiredState, FLEET_TYPE, stackProviderName } from "../core/desired/types";
import { bundleDeployment } from "./bundle-deployment";
import { BundleDeploymentPair, FleetProvider } from "./pair";
import { Contents } from "./content";
import { Cluster } from "./cluster";
import { Adoptions } from "../core/migrate/adoptions";
import { GitRepo } from "./git-repo";
import { PruneOnly } from "../core/desired/prune-only";
import { clusterAccess } from "../core/desired/providers";

/** A moved-in cluster's components were moved to the root of the state (core/desired/previous.ts arrivedClusters). */
const fromStateRoot = (arrived: boolean): pulumi.Alias[] => (arrived ? [{ parent: pulumi.rootStackResource }] : []);

/** What the program is given of the stack's state besides the desired state (Fleet's constructor). */
export interface FromState {
  carried?: Record<string, ClusterAccess>;
  namesInState?: Record<string, string>;
  adoptions?: Adoptions;
  /** An update that only removes pairs (core/desired/prune-only.ts): the engine targets them, and only the setups it changes are registered. */
  pruneOnly?: PruneOnly;
}

export class Fleet extends pulumi.ComponentResource {
  readonly deploymentRecords: pulumi.Output<Record<string, DeploymentRecord>>;
  readonly deploymentStates: pulumi.Output<Record<string, PairReport>>;
  /** Each cluster's setup (its namespaces and agent) state, by cluster. */
  readonly clusterSetupStates: pulumi.Output<Record<string, PairReport>>;

  /**
   * `state`: what the operation read of the stack's state besides the desired state (components/program.ts
   * ProgramInputs): `carried`, the access of clusters no longer in the stack whose pairs the state still
   * holds through this provider (automation/engine/deployed-objects.ts carriedAccessOf): the engine deletes
   * them with the provider's new configuration, so it keeps their access until they are gone;
   * `namesInState`, the name the state still holds a pair under until an earlier version's state is
   * migrated, its alias; `adoptions`, what the pairs and ClusterSetups take over of an earlier version's
   * resources, and the pairs that retire its deployments no longer deployed.
   */
  constructor(name: string, desired: DesiredState, opts: pulumi.ComponentResourceOptions = {}, state: FromState = {}) {
    super(FLEET_TYPE, name, {}, opts);
    for (const w of desired.warnings) pulumi.log.warn(w, this);
    // One provider for the stack (a plugin process), named after it: a cluster moved here from another
    // shard arrives with a copy of that shard's provider (automation/shards/moves.ts), which must not
    // collide with this one; its pairs move to this one by their next update, and the copy goes.
    const provider = new FleetProvider(stackProviderName(pulumi.getStack()), { ...state.carried, ...clusterAccess(desired.clusters) }, { parent: this });
    const partial = state.pruneOnly;
    const registered = partial ? desired.clusters.filter((c) => partial.setups.includes(c.name)) : desired.clusters;
    const clusters = new Map(
      registered.map((c) => [c.name, new Cluster(c.name, c, provider, { parent: this, aliases: fromStateRoot(c.arrived) }, state.adoptions?.setups[c.name])]),
    );
    const gitRepos = new Map(desired.gitRepos.map((r) => [r.name, new GitRepo(r.name, r, { parent: this })]));
    // Each distinct render once, beside the GitRepos (two GitRepos may deploy the same one), deleted by the engine when no pair names it.
    const contents = new Contents({ parent: this, provider });
    const deployments = new Map<string, BundleDeploymentPair>();
    // Pruning only: the kept pairs are not registered (the engine keeps what it does not target); their warnings still show.
    if (partial) for (const w of desired.deployments.flatMap((d) => d.warnings)) pulumi.log.warn(w, this);
    for (const d of partial ? [] : desired.deployments) {
      const cluster = clusters.get(d.cluster)!;
      deployments.set(
        d.key,
        bundleDeployment(
          d.key,
          {
            deployment: d,
            provider,
            cluster: cluster.accessKey(d.account),
            setup: cluster.setup,
            waitFor: d.dependsOn.map((key) => [key, deployments.get(key)!]),
            adopt: state.adoptions?.pairs[d.key],
            contents,
          },
          {
            parent: gitRepos.get(d.gitRepo)!,
            aliases: [...fromStateRoot(d.arrived), ...(state.namesInState?.[d.key] ? [{ name: state.namesInState[d.key] }] : [])],
          },
        ),
      );
    }
    // Registered beside the GitRepos (their GitRepo may be gone): adopted and pruned in this update.
    for (const r of partial ? [] : (state.adoptions?.retiring ?? [])) {
      new BundleDeploymentPair(r.key, { ...r.spec, cluster: clusters.get(r.cluster)!.accessKey() }, { parent: this, provider });
    }
    this.deploymentRecords = pulumi.output(desired.records);
    // Fleet's BundleDeployment status of each pair, as its provider reported it: the operations read
    // failures (ErrApplied, NotReady, WaitApplied) from here, so every machine sees the same.
    const secret = new Set(desired.deployments.filter((d) => d.secret).map((d) => d.key));
    this.deploymentStates = pulumi.output({
      ...partial?.states,
      ...Object.fromEntries(
        [...deployments].map(([key, p]) => [
          key,
          pulumi.all([p.state, pulumi.unsecret(p.messages), p.appliedDeploymentId]).apply(([state, messages, appliedDeploymentId]) => ({
            state,
            messages: secret.has(key) ? withheldMessages(messages?.length ?? 0) : (messages ?? []),
            appliedDeploymentId,
          })),
        ]),
      ),
    });
    this.clusterSetupStates = pulumi.output({
      ...partial?.setupStates,
      ...Object.fromEntries(
        [...clusters].flatMap(([name, c]) =>
          c.setup
            ? [
                [
                  name,
                  pulumi
                    .all([c.setup.state, c.setup.messages, c.setup.appliedDeploymentId])
                    .apply(([state, messages, appliedDeploymentId]) => ({ state, messages: messages ?? [], appliedDeploymentId })),
                ],
              ]
            : [],
        ),
      ),
    });
    // The stack's outputs hold these records (components/program.ts); registered here too they were a second
    // copy of every pair's record in the state, written and streamed by every update.
    this.registerOutputs({});
  }
}
