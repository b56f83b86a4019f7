/**
 * The prune-only decision (core/desired/prune-only.ts) and the digests it compares
 * (core/desired/registrations.ts), as plain functions: the example fleet's desired state (fake facts),
 * a state as its last update would have left it, and each reason the full update runs instead.
 * test/e2e/prune-only.test.ts compares the two updates' states on the real engine.
 */
import { expect } from "chai";
import { desiredState } from "../../core/desired/state";
import { clusterAccess } from "../../core/desired/providers";
import { PROVIDER_ENCRYPTED, PruneOnly, pruneOnly, PruneOnlyFacts, StateRef } from "../../core/desired/prune-only";
import { Registrations, registrationsFromOutput, registrationsOf } from "../../core/desired/registrations";
import { CLUSTER_SETUP_TYPE, withSetup } from "../../core/desired/setup";
import { OperatorSecret } from "../../core/desired/operator-secrets";
import {
  BUNDLE_CONTENT_TYPE,
  BUNDLE_DEPLOYMENT_TYPE,
  CLUSTER_TYPE,
  DesiredState,
  FLEET_TYPE,
  GIT_REPO_TYPE,
  stackProviderName,
} from "../../core/desired/types";
import { fakeFacts } from "../support/fake-facts";
import { localStack, withoutProdTarget } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

const RENDER = "/tmp/pulumi-fleet-render";
const cacheRoot = tempDir("pf-cache-");
const CODE = "code-1";
const OPERATOR_SECRET: OperatorSecret = {
  gitRepo: "examples",
  field: "gitRepos[0].downstreamResources[0]",
  manifest: {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "registry", namespace: "cattle-fleet-system", labels: {}, annotations: {} },
    type: "Opaque",
    data: { password: "aHVudGVyMg==" },
  },
};
const urn = (type: string, name: string) => `urn:pulumi:s::pulumi-fleet::${type}::${name}`;

/** The state the full update of `d` leaves: every pair and setup Ready at its deploymentID, one content per pair. */
function stateOf(d: DesiredState): StateRef[] {
  return [
    { urn: urn("pulumi:pulumi:Stack", "pulumi-fleet-s"), type: "pulumi:pulumi:Stack" },
    { urn: urn(FLEET_TYPE, "fleet"), type: FLEET_TYPE },
    {
      urn: urn("pulumi:providers:pulumi-fleet", stackProviderName("s")),
      type: "pulumi:providers:pulumi-fleet",
      inputs: { clusters: clusterAccess(d.clusters) },
    },
    ...d.gitRepos.map((g) => ({ urn: urn(GIT_REPO_TYPE, g.name), type: GIT_REPO_TYPE })),
    ...d.clusters.map((c) => ({ urn: urn(CLUSTER_TYPE, c.name), type: CLUSTER_TYPE })),
    ...d.clusters
      .filter((c) => c.setup)
      .map((c) => ({
        urn: urn(CLUSTER_SETUP_TYPE, c.name),
        type: CLUSTER_SETUP_TYPE,
        custom: true,
        outputs: { state: "Ready", appliedDeploymentId: c.setup!.deploymentId },
      })),
    ...d.deployments.flatMap((x) => [
      {
        urn: urn(BUNDLE_DEPLOYMENT_TYPE, x.key),
        type: BUNDLE_DEPLOYMENT_TYPE,
        custom: true,
        inputs: { content: `content-${x.key}` },
        outputs: { state: "Ready", appliedDeploymentId: x.spec.deploymentId },
      },
      { urn: urn(BUNDLE_CONTENT_TYPE, `content-${x.key}`), type: BUNDLE_CONTENT_TYPE, custom: true },
    ]),
  ];
}
/** As after a first update: nothing arrives from another stack any more (previous.ts arrivedClusters). */
const settled = (d: DesiredState): DesiredState => ({
  ...d,
  clusters: d.clusters.map((c) => ({ ...c, arrived: false })),
  deployments: d.deployments.map((x) => ({ ...x, arrived: false })),
});
const reports = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, { state: "Ready", messages: [], appliedDeploymentId: "x" }]));

describe("prune-only updates (core/desired/prune-only.ts)", function () {
  this.timeout(60_000);
  let earlier: DesiredState;
  let after: DesiredState;
  let facts: PruneOnlyFacts;
  const decide = (over: Partial<PruneOnlyFacts> = {}) => pruneOnly({ ...facts, ...over });
  const why = (over: Partial<PruneOnlyFacts> = {}) => (decide(over) as { why?: string }).why;

  before(async () => {
    earlier = settled(await desiredState(localStack(RENDER), fakeFacts(), { cacheRoot }));
    after = settled(await desiredState(withoutProdTarget(localStack(RENDER)), fakeFacts(), { cacheRoot }));
  });
  beforeEach(() => {
    facts = {
      previous: registrationsOf(earlier, CODE),
      next: registrationsOf(after, CODE),
      desired: after,
      resources: stateOf(earlier),
      states: reports(earlier.deployments.map((d) => d.key)),
      setupStates: reports(earlier.clusters.map((c) => c.name)),
      access: clusterAccess(after.clusters),
      stateAccess: clusterAccess(earlier.clusters),
      provider: stackProviderName("s"),
      extras: false,
    };
  });

  it("a target edit dropping prod-1: its pairs, their contents and its setup are the targets; the rest keeps its states", () => {
    const p = decide() as PruneOnly;
    const prod = earlier.deployments.filter((d) => d.cluster === "prod-1").map((d) => d.key);
    expect(prod).to.have.length(3);
    expect(p.removed).to.deep.equal([...prod].sort());
    expect(p.setups).to.deep.equal(["prod-1"]);
    expect(p.targets).to.have.members([
      ...prod.map((k) => urn(BUNDLE_DEPLOYMENT_TYPE, k)),
      ...prod.map((k) => urn(BUNDLE_CONTENT_TYPE, `content-${k}`)),
      urn(CLUSTER_SETUP_TYPE, "prod-1"),
    ]);
    expect(Object.keys(p.states)).to.have.members(after.deployments.map((d) => d.key));
    expect(Object.keys(p.setupStates)).to.have.members(["dev-1", "dev-2"]);
  });

  it("the digests: the same desired state gives the same ones, another code others; none that could be guessed back to a secret value", () => {
    expect(registrationsOf(earlier, CODE)).to.deep.equal(facts.previous);
    expect(registrationsOf(earlier, "code-2").pairs).to.not.deep.equal(facts.previous!.pairs);
    expect(Object.keys(facts.previous!.pairs)).to.have.length(earlier.deployments.length);
    // A setup whose only Secret is the agent's token has one (its deploymentID counts the token already, in clear).
    expect(Object.keys(facts.previous!.setups)).to.have.members(["dev-1", "dev-2", "prod-1"]);
    const digestOf = (d: DesiredState) => registrationsOf(d, CODE);
    const token = (d: DesiredState, value: string): DesiredState => ({
      ...d,
      clusters: d.clusters.map((c) =>
        withSetup({
          ...c,
          setup: undefined,
          agent: { ...c.agent!, secret: { ...c.agent!.secret, stringData: { ...c.agent!.secret.stringData, token: value } } },
        }),
      ),
    });
    expect(digestOf(token(earlier, "a")).setups["dev-1"]).to.not.equal(digestOf(token(earlier, "b")).setups["dev-1"]);
    // An operator's Secret, or a pair holding a secret value: no digest (a digest of a short password could be guessed back).
    const operator = { ...earlier, clusters: earlier.clusters.map((c) => withSetup({ ...c, setup: undefined }, [OPERATOR_SECRET])) };
    expect(digestOf(operator).setups).to.deep.equal({});
    const secretPair = { ...earlier, deployments: earlier.deployments.map((d, i) => (i ? d : { ...d, secret: true as const })) };
    expect(Object.keys(digestOf(secretPair).pairs)).to.have.length(earlier.deployments.length - 1);
    expect(registrationsFromOutput(JSON.parse(JSON.stringify(facts.previous)))).to.deep.equal(facts.previous);
    expect(registrationsFromOutput({ code: "c", pairs: {} })).to.equal(undefined);
  });

  it("an unchanged fleet, or one that adds a pair, is a full update", () => {
    expect(why({ desired: earlier, next: facts.previous })).to.equal("no pair is removed");
    expect(why({ desired: earlier, next: facts.previous, previous: registrationsOf(after, CODE), resources: stateOf(after) })).to.match(
      / is added or changed$/,
    );
  });

  it("a kept pair changed, not Ready, at another deploymentID, or missing from the outputs: a full update", () => {
    const kept = after.deployments[0].key;
    const changed: Registrations = { ...facts.next, pairs: { ...facts.next.pairs, [kept]: "other" } };
    expect(why({ next: changed })).to.equal(`${kept} is added or changed`);
    const withState = (outputs: Record<string, unknown>) => facts.resources.map((r) => (r.urn === urn(BUNDLE_DEPLOYMENT_TYPE, kept) ? { ...r, outputs } : r));
    expect(why({ resources: withState({ state: "NotReady", appliedDeploymentId: after.deployments[0].spec.deploymentId }) })).to.match(/is not Ready/);
    expect(why({ resources: withState({ state: "Ready", appliedDeploymentId: "s-older" }) })).to.match(/is not Ready/);
    expect(why({ states: {} })).to.equal(`${kept} has no state in the outputs`);
  });

  it("anything but removals around the pairs: a full update, with its reason", () => {
    expect(why({ previous: undefined })).to.equal("the last update recorded no registrations");
    expect(why({ next: { ...facts.next, code: "code-2" } })).to.equal("the code that registers the resources changed");
    expect(why({ extras: true })).to.equal("the state is being carried, adopted or renamed");
    expect(why({ resources: [...facts.resources, { urn: urn("kubernetes:core/v1:ConfigMap", "x"), type: "kubernetes:core/v1:ConfigMap" }] })).to.equal(
      "the state holds a kubernetes:core/v1:ConfigMap",
    );
    expect(why({ provider: stackProviderName("other") })).to.equal("the state holds another provider");
    expect(why({ access: {} })).to.equal("the provider's configuration changes");
    expect(why({ stateAccess: undefined })).to.equal(PROVIDER_ENCRYPTED);
    expect(why({ desired: { ...after, clusters: after.clusters.slice(1) } })).to.equal("a cluster comes or goes");
    expect(why({ desired: { ...after, gitRepos: [] } })).to.equal("a GitRepo comes or goes");
    expect(why({ desired: { ...after, clusters: after.clusters.map((c, i) => (i ? c : { ...c, arrived: true })) } })).to.equal(
      "a cluster arrived from another stack",
    );
  });

  it("a setup that changes under pairs the update keeps: a full update (their inputs read its outputs)", () => {
    const setups = { ...facts.next.setups, "dev-1": "other" };
    expect(why({ next: { ...facts.next, setups } })).to.equal("cluster dev-1's setup changes under pairs it keeps");
    const notReady = facts.resources.map((r) => (r.urn === urn(CLUSTER_SETUP_TYPE, "dev-2") ? { ...r, outputs: { state: "ErrApplied" } } : r));
    expect(why({ resources: notReady })).to.equal("cluster dev-2's setup is not Ready in the state");
  });
});
