import { expect } from "chai";
import { checkTakeOwnership as decideTakeOwnership, describeOwner, OwnershipInput, ownershipQueries } from "../../core/desired/ownership";
import { ClusterConfig } from "../../core/config/stack";
import { KnownClusters } from "../../core/desired/cluster-facts";
import { Facts } from "../../core/desired/facts";
import { gatherExisting, gatherOwners } from "../../core/desired/gather-objects";
import { claimKey } from "../../core/desired/owners";
import { PlanEntry } from "../../core/targeting/plan";
import { RenderedDeployment } from "../../core/render/deployments";
import { K8sObject } from "../../core/model/k8s-object";
import { FleetError } from "../../core/base/errors";
import { LiveObject, OwnersJob, OwnersResult } from "../../core/model/renderer-protocol";
import { rejectionOf } from "../support/rejection";
import { planEntry } from "../support/plan-entries";

const cm = (name: string, namespace = "apps"): K8sObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace } });
const crd = (name: string): K8sObject => ({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name } });

const entry = (bundle: string, cluster: string, over: Partial<PlanEntry> = {}): PlanEntry =>
  planEntry(bundle, cluster, { deploymentId: `s-1:${bundle}-${cluster}-000000000000`.padEnd(40, "0"), ...over });

type TestInput = OwnershipInput & { clusters: ClusterConfig[] };

/** As the desired state does it: the live objects gathered (core/desired/gather-objects.ts) through `read`, then the decision. */
async function checkTakeOwnership(
  input: TestInput,
  read: (jobs: OwnersJob[]) => Promise<Record<string, OwnersResult>>,
  onConflict?: (entry: PlanEntry, err: FleetError) => void,
): Promise<void> {
  const known: KnownClusters = new Map();
  await gatherExisting(ownershipQueries(input), input.clusters, { objects: read } as Partial<Facts> as Facts, known);
  decideTakeOwnership(input, known, onConflict);
}

function input(entries: [PlanEntry, K8sObject[], K8sObject[]?][], over: Partial<OwnershipInput> = {}): TestInput {
  const rendered = new Map<PlanEntry, RenderedDeployment>(
    entries.map(([e, objects, crds = []]) => [
      e,
      { objects: [...crds, ...objects], style: "yaml", warnings: [], chartCrds: new Set(crds), ignoredFields: new Map() },
    ]),
  );
  return {
    entries: entries.map(([e]) => e),
    rendered,
    clusters: [{ name: "c1", labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: "KUBECONFIG-TEXT" }],
    bundles: [{ gitRepo: "repo", name: "web", fleetYaml: "web/fleet.yaml" } as never],
    ...over,
  };
}

const ours = (bundle: string, cluster = "c1"): LiveObject => ({
  labels: {
    "app.kubernetes.io/managed-by": "pulumi-fleet",
    "fleet.cattle.io/bundle-name": bundle,
    "fleet.cattle.io/repo-name": "repo",
    "fleet.cattle.io/cluster": cluster,
  },
});

/** A fake cluster: objects by "<namespace>/<name>", recording what was asked. */
function cluster(live: Record<string, LiveObject>, asked: OwnersJob[] = []) {
  return async (jobs: OwnersJob[]) => {
    asked.push(...jobs);
    return Object.fromEntries(jobs.map((j) => [j.id, { objects: j.objects.map((o) => live[`${o.namespace}/${o.name}`] ?? null) }]));
  };
}

describe("helm.takeOwnership (an existing object this bundle does not own is refused, as Fleet's Helm refuses it)", () => {
  it("reads only what a new or changed deployment would create, on clusters not left out, without chart crds/ (adopting ones too: see below)", () => {
    const web = entry("web", "c1");
    const unchanged = entry("db", "c1");
    const adopting = entry("cache", "c1", { options: { helm: { takeOwnership: true } } });
    const leftOut = entry("web", "c2");
    const q = ownershipQueries(
      input(
        [
          [web, [cm("a")], [crd("x.example.com")]],
          [unchanged, [cm("b")]],
          [adopting, [cm("c")]],
          [leftOut, [cm("a")]],
        ],
        {
          unchanged: new Set([unchanged]),
          skip: new Set(["c2"]),
        },
      ),
    );
    expect([...q.keys()]).to.deep.equal(["c1"]);
    expect(q.get("c1")!.map((x) => `${x.entry.bundle}:${x.object.metadata.name}`)).to.deep.equal(["web:a", "cache:c"]);
  });

  it("takeOwnership (fleet.yaml's or the stack's) adopts a foreign object, never one another GitRepo owns (issue 41)", async () => {
    const theirs: LiveObject = { labels: { ...ours("api").labels, "fleet.cattle.io/repo-name": "team-a" } };
    const live = { "apps/handmade": { labels: {}, managers: ["kubectl"] }, "apps/theirs": theirs };
    const content = entry("web", "c1", { options: { helm: { takeOwnership: true } } });
    expect(async () => await checkTakeOwnership(input([[content, [cm("handmade")]]]), cluster(live))).to.not.throw();
    const errors: FleetError[] = [];
    await checkTakeOwnership(input([[content, [cm("handmade"), cm("theirs")]]]), cluster(live), (_e, err) => errors.push(err));
    const operator = entry("web", "c1");
    await checkTakeOwnership(input([[operator, [cm("theirs")]]], { adopting: new Set(["repo"]) }), cluster(live), (_e, err) => errors.push(err));
    expect(errors.map((e) => e.reason)).to.deep.equal(
      [0, 1].map(
        () =>
          "objects this bundle would create already exist on the cluster and are not its own: " +
          "ConfigMap apps/theirs (it belongs to bundle api of GitRepo team-a). An object another GitRepo or the cluster's agent owns is never adopted, whatever takeOwnership says " +
          "(the GitRepo's stack entry or fleet.yaml): remove it from this bundle, or rename it",
      ),
    );
  });

  it("takeOwnership never adopts the cluster's agent (its objects and its namespace), only the namespaces the cluster creates for bundles", async () => {
    const stacks = { "app.kubernetes.io/managed-by": "pulumi-fleet", "fleet.cattle.io/cluster": "c1" };
    const live: Record<string, LiveObject> = {
      "cattle-fleet-system/fleet-agent": { labels: { ...stacks, app: "fleet-agent" } },
      "/cattle-fleet-system": { labels: { ...stacks, app: "fleet-agent" } },
      "/apps": { labels: stacks },
    };
    const ns = (name: string): K8sObject => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    const sa: K8sObject = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "fleet-agent", namespace: "cattle-fleet-system" } };
    const content = entry("web", "c1", { options: { helm: { takeOwnership: true } } });
    const errors: FleetError[] = [];
    await checkTakeOwnership(input([[content, [sa, ns("cattle-fleet-system"), ns("apps")]]]), cluster(live), (_e, err) => errors.push(err));
    expect(errors.map((e) => e.reason.split(". ")[0])).to.deep.equal([
      "objects this bundle would create already exist on the cluster and are not its own: " +
        "ServiceAccount cattle-fleet-system/fleet-agent (it is the stack's own: its cluster's agent or a namespace the cluster creates); " +
        "Namespace cattle-fleet-system (it is the stack's own: its cluster's agent or a namespace the cluster creates)",
    ]);
  });

  it("passes objects that are absent or carry this deployment's labels; sends the stack's kubeconfig with each cluster's lookups", async () => {
    const asked: OwnersJob[] = [];
    await checkTakeOwnership(input([[entry("web", "c1"), [cm("mine"), cm("new")]]]), cluster({ "apps/mine": ours("web") }, asked));
    expect(asked).to.deep.equal([
      {
        id: "c1\u0000repo",
        kubeconfig: "KUBECONFIG-TEXT",
        context: "",
        objects: [
          { apiVersion: "v1", kind: "ConfigMap", namespace: "apps", name: "mine" },
          { apiVersion: "v1", kind: "ConfigMap", namespace: "apps", name: "new" },
        ],
        timeoutSeconds: 60,
      },
    ]);
  });

  it("refuses a foreign object naming it, its owner, the bundle, cluster, file and field, and counts the other deployments", async () => {
    const e = entry("web", "c1");
    const other = entry("api", "c1");
    const live = {
      "apps/handmade": { labels: {}, managers: ["kubectl-client-side-apply"] },
      "apps/helmed": { annotations: { "meta.helm.sh/release-name": "legacy", "meta.helm.sh/release-namespace": "apps" } },
      "apps/sibling": ours("api"),
    };
    let err: unknown;
    try {
      await checkTakeOwnership(
        input([
          [e, [cm("handmade"), cm("helmed"), cm("sibling"), cm("fresh")]],
          [other, [cm("handmade")]],
        ]),
        cluster(live),
      );
    } catch (x) {
      err = x;
    }
    expect(err).to.be.instanceOf(FleetError);
    const text = (err as Error).message;
    expect(text)
      .to.contain("ConfigMap apps/handmade (it was written by kubectl-client-side-apply)")
      .and.contain("ConfigMap apps/helmed (it belongs to Helm release apps/legacy)")
      .and.contain("ConfigMap apps/sibling (it belongs to bundle api of GitRepo repo)")
      .and.contain("helm.takeOwnership: true")
      .and.contain("1 other bundle deployment has such objects too")
      .and.not.contain("fresh");
    expect((err as FleetError).context).to.include({ gitRepo: "repo", bundle: "web", cluster: "c1", file: "web/fleet.yaml", field: "helm.takeOwnership" });
  });

  it("a cluster that cannot be read is an error naming it, never an unchecked update", async () => {
    expect(
      await rejectionOf(
        checkTakeOwnership(input([[entry("web", "c1"), [cm("a")]]]), async () => ({ "c1\u0000repo": { error: "dial tcp 127.0.0.1:1: connection refused" } })),
        FleetError,
      ),
    ).to.match(/cannot tell who owns .* connection refused/);
  });

  describe("each GitRepo's read of a cluster is its own (one GitRepo's slow or huge read fails only its pairs there)", () => {
    const attacker = (bundle: string, cluster = "c1") => entry(bundle, cluster, { gitRepo: "attacker" });
    const victim = (bundle: string, cluster = "c1") => entry(bundle, cluster, { gitRepo: "victim" });
    const clusters = ["c1", "c2"].map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: "K" }));
    /** Fails the attacker's read on c1 as `error`; every other read answers "absent". */
    const slowFor =
      (error: string, asked: OwnersJob[] = []) =>
      async (jobs: OwnersJob[]) => {
        asked.push(...jobs);
        return Object.fromEntries(jobs.map((j) => [j.id, j.id === "c1\u0000attacker" ? { error } : { objects: j.objects.map(() => null) }]));
      };
    const decide = async (
      entries: [PlanEntry, K8sObject[]][],
      read: (jobs: OwnersJob[]) => Promise<Record<string, OwnersResult>>,
      bounds = { seconds: 2, objects: 100 },
    ) => {
      const i = { ...input(entries), clusters };
      const known: KnownClusters = new Map();
      await gatherExisting(ownershipQueries(i), clusters, { objects: read } as Partial<Facts> as Facts, known, bounds);
      const failed: [PlanEntry, FleetError][] = [];
      decideTakeOwnership(i, known, (e, err) => failed.push([e, err]));
      return failed;
    };

    it("reads once per (cluster, GitRepo), each job with the operator's deadline", async () => {
      const asked: OwnersJob[] = [];
      await decide(
        [
          [attacker("a1"), [cm("x1")]],
          [attacker("a2"), [cm("x2")]],
          [victim("v"), [cm("y")]],
          [victim("v", "c2"), [cm("y")]],
        ],
        slowFor("none", asked),
      );
      expect(asked.map((j) => [j.id, j.objects.length, j.timeoutSeconds])).to.deep.equal([
        ["c1\u0000attacker", 2, 2],
        ["c1\u0000victim", 1, 2],
        ["c2\u0000victim", 1, 2],
      ]);
    });

    it("a read that times out fails only that GitRepo's pairs on that cluster, naming the bound; the other GitRepo's go on; nothing throws", async () => {
      const a1 = attacker("a1");
      const a2 = attacker("a2");
      const a1c2 = attacker("a1", "c2");
      const v = victim("v");
      const failed = await decide(
        [
          [a1, [cm("x1")]],
          [a2, [cm("x2")]],
          [a1c2, [cm("x1")]],
          [v, [cm("y")]],
        ],
        slowFor("the read did not finish within 2s: context deadline exceeded"),
      );
      expect(failed.map(([e]) => e)).to.deep.equal([a1, a2]);
      expect(failed[0][1].message).to.contain("cannot tell who owns").and.contain("PULUMI_FLEET_CLUSTER_READ_SECONDS=2");
      expect(failed[0][1].context).to.include({ gitRepo: "attacker", bundle: "a1", cluster: "c1" });
    });

    it("a GitRepo asking for more objects than the count bound is not read, and fails alone naming the bound", async () => {
      const asked: OwnersJob[] = [];
      const many = Array.from({ length: 101 }, (_, i) => cm(`x${i}`));
      const a = attacker("a1");
      const v = victim("v");
      const failed = await decide(
        [
          [a, many],
          [v, [cm("y")]],
        ],
        slowFor("none", asked),
      );
      expect(asked.map((j) => j.id)).to.deep.equal(["c1\u0000victim"]);
      expect(failed.map(([e]) => e)).to.deep.equal([a]);
      expect(failed[0][1].message).to.contain("101 objects").and.contain("PULUMI_FLEET_CLUSTER_READ_OBJECTS=100");
    });

    it("contested objects' owners: one read per cluster and set of GitRepos declaring them; one that fails or is over the bound tells nothing of its own only", async () => {
      const asked: OwnersJob[] = [];
      const labelsOf = (gitRepo: string) => ({
        labels: {
          "app.kubernetes.io/managed-by": "pulumi-fleet",
          "fleet.cattle.io/cluster": "c1",
          "fleet.cattle.io/repo-name": gitRepo,
          "fleet.cattle.io/bundle-name": `${gitRepo}-b`,
        },
      });
      const read = async (jobs: OwnersJob[]) => {
        asked.push(...jobs);
        return Object.fromEntries(
          jobs.map((j) => [j.id, j.id === "c1\u0000attacker" ? { error: "deadline exceeded" } : { objects: j.objects.map(() => labelsOf("victim")) }]),
        );
      };
      const known: KnownClusters = new Map();
      const contested = [
        { cluster: "c1", object: cm("a"), gitRepos: ["attacker"] },
        { cluster: "c1", object: cm("shared"), gitRepos: ["attacker", "victim"] },
        { cluster: "c1", object: cm("v"), gitRepos: ["victim"] },
        ...Array.from({ length: 3 }, (_, i) => ({ cluster: "c1", object: cm(`m${i}`), gitRepos: ["many"] })),
      ];
      await gatherOwners(contested, clusters, { objects: read } as Partial<Facts> as Facts, known, { bounds: { seconds: 2, objects: 2 } });
      expect(asked.map((j) => [j.id, j.objects.length, j.timeoutSeconds])).to.deep.equal([
        ["c1\u0000attacker", 1, 2],
        ["c1\u0000attacker,victim", 1, 2],
        ["c1\u0000victim", 1, 2],
      ]);
      expect([...known.get("c1")!.owners.keys()]).to.deep.equal([claimKey("c1", cm("shared")), claimKey("c1", cm("v"))]);
    });

    it("a read with no answer at all is that GitRepo's failure too", async () => {
      const a = attacker("a1");
      const failed = await decide(
        [
          [a, [cm("x")]],
          [victim("v"), [cm("y")]],
        ],
        async (jobs) => Object.fromEntries(jobs.filter((j) => j.id !== "c1\u0000attacker").map((j) => [j.id, { objects: [null] }])),
      );
      expect(failed.map(([e]) => e)).to.deep.equal([a]);
      expect(failed[0][1].message).to.contain("no answer");
    });
  });

  it("describes owners from labels, Helm's annotations or field managers", () => {
    expect(describeOwner({})).to.equal("it has no owner metadata");
    expect(describeOwner({ managers: ["a", "a", "b"] })).to.equal("it was written by a, b");
  });
});
