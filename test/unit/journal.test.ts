import { expect } from "chai";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { identityOf, JournalEntry, JournalObject, sweep, sweepPlan } from "../../core/desired/journal";
import { journalObjects } from "../../core/desired/journal-objects";
import { PlanEntry } from "../../core/targeting/plan";
import { RenderedDeployment } from "../../core/render/deployments";
import { K8sObject } from "../../core/model/k8s-object";
import { OwnersJob } from "../../core/model/renderer-protocol";
import { journalStore, stateIdentities } from "../../automation/engine/journal-store";
import { FleetError } from "../../core/base/errors";
import { desiredObjects } from "../../core/desired/objects";
import { deploymentKey } from "../../core/model/keys";
import { DesiredDeployment } from "../../core/desired/types";
import { rejectionOf } from "../support/rejection";
import { planEntry } from "../support/plan-entries";

const cm = (name: string, namespace = "apps"): K8sObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace } });
const crd = (name: string): K8sObject => ({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name } });

const entry = planEntry;
const rendered = (objects: K8sObject[]): RenderedDeployment => ({ objects, style: "yaml", warnings: [], chartCrds: new Set(), ignoredFields: new Map() });
const obj = (name: string, over: Partial<JournalObject> = {}): JournalObject => ({
  cluster: "c1",
  gitRepo: "repo",
  bundle: "web",
  apiVersion: "v1",
  kind: "ConfigMap",
  namespace: "apps",
  name,
  ...over,
});
const clusters = [{ name: "c1", labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: "KC1" }];

describe("crash journal (core/desired/journal.ts): what an update records and what the next one sweeps", () => {
  it("records every desired object on the clusters this update applies to; what a prune retains and namespaces are marked retain", () => {
    const web = entry("web", "c1");
    const kept = entry("keep", "c1", { options: { keepResources: true } });
    const out = entry("web", "c2");
    // As fleet-render gives it, Fleet's post-render: annotated to be kept (deleteCRDResources unset).
    const theCrd: K8sObject = { ...crd("widgets.example.com"), metadata: { name: "widgets.example.com", annotations: { "helm.sh/resource-policy": "keep" } } };
    const ns: K8sObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "apps" } };
    const desired = (e: PlanEntry, r: RenderedDeployment) =>
      ({
        key: deploymentKey(e),
        entry: e,
        gitRepo: e.gitRepo,
        cluster: e.cluster,
        record: { bundle: e.bundle },
        objects: desiredObjects(e, r),
      }) as DesiredDeployment;
    const objects = journalObjects(
      [desired(web, rendered([cm("a"), theCrd, ns])), desired(kept, rendered([cm("k")])), desired(out, rendered([cm("a")]))],
      new Set(["c2"]),
    );
    // The retain mark is the pair's retain reason (one rule, core/desired/objects.ts), in registration order.
    expect(objects.map((o) => `${o.cluster}/${o.bundle}/${o.name}${o.retain ? " retain" : ""}`)).to.deep.equal([
      "c1/web/widgets.example.com retain",
      "c1/web/apps retain",
      "c1/web/a",
      "c1/keep/k retain",
    ]);
  });

  it("identities ignore the version, as the engine's aliases do", () => {
    expect(identityOf({ cluster: "c1", apiVersion: "example.com/v1", kind: "W", namespace: "n", name: "x" })).to.equal(
      identityOf({ cluster: "c1", apiVersion: "example.com/v2", kind: "W", namespace: "n", name: "x" }),
    );
    expect(identityOf({ cluster: "c1", apiVersion: "v1", kind: "Namespace", name: "x" })).to.equal("c1/core:Namespace:_:x");
  });

  it("sweeps only what is neither in the state nor planned nor retained; unreadable clusters are deferred, duplicates looked up once", () => {
    const recorded: JournalEntry[] = [
      { writer: "a", objects: [obj("in-state"), obj("planned"), obj("orphan"), obj("kept", { retain: true }), obj("far", { cluster: "gone" })] },
      { writer: "b", objects: [obj("orphan")] },
    ];
    const id = (name: string, cluster = "c1") => identityOf(obj(name, { cluster }));
    const plan = sweepPlan(recorded, new Set([id("in-state")]), new Set([id("planned")]), (c) => c === "c1");
    expect([...plan.candidates].map(([c, os]) => `${c}: ${os.map((o) => o.name).join(",")}`)).to.deep.equal(["c1: orphan"]);
    expect(plan.deferred.map((o) => `${o.cluster}/${o.name}`)).to.deep.equal(["gone/far"]);
  });

  it("a planned object on a cluster left out now is deferred, not dropped; a cluster-scoped object the renderer gave a namespace still matches the state", () => {
    const recorded: JournalEntry[] = [
      {
        writer: "a",
        objects: [obj("planned-far", { cluster: "c2" }), obj("policy", { apiVersion: "kyverno.io/v1", kind: "ClusterPolicy", namespace: "apps" })],
      },
    ];
    const plan = sweepPlan(
      recorded,
      new Set([identityOf(obj("policy", { apiVersion: "kyverno.io/v1", kind: "ClusterPolicy", namespace: "" }))]),
      new Set([identityOf(obj("planned-far", { cluster: "c2" }))]),
      (c) => c === "c1",
    );
    expect([...plan.candidates]).to.deep.equal([]);
    expect(plan.deferred.map((o) => `${o.cluster}/${o.name}`)).to.deep.equal(["c2/planned-far"]);
  });

  it("asks fleet-render to delete each candidate only if it carries its bundle's ownership labels, and reports what was deleted", async () => {
    const asked: OwnersJob[] = [];
    const plan = sweepPlan([{ writer: "a", objects: [obj("orphan"), obj("absent")] }], new Set(), new Set(), () => true);
    const result = await sweep(plan, clusters, async (jobs) => {
      asked.push(...jobs);
      return { c1: { objects: [{ deleted: true }, null] } };
    });
    expect(asked).to.deep.equal([
      {
        id: "c1",
        kubeconfig: "KC1",
        context: "",
        delete: true,
        propagation: "background",
        objects: [
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            namespace: "apps",
            name: "orphan",
            labels: {
              "fleet.cattle.io/repo-name": "repo",
              "fleet.cattle.io/bundle-name": "web",
              "fleet.cattle.io/cluster": "c1",
              "app.kubernetes.io/managed-by": "pulumi-fleet",
            },
          },
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            namespace: "apps",
            name: "absent",
            labels: {
              "fleet.cattle.io/repo-name": "repo",
              "fleet.cattle.io/bundle-name": "web",
              "fleet.cattle.io/cluster": "c1",
              "app.kubernetes.io/managed-by": "pulumi-fleet",
            },
          },
        ],
      },
    ]);
    expect(result.deleted).to.deep.equal(["c1: ConfigMap apps/orphan (bundle web)"]);
  });

  it("a cluster that cannot be read stops the update naming it (the journal keeps the record)", async () => {
    const plan = sweepPlan([{ writer: "a", objects: [obj("orphan")] }], new Set(), new Set(), () => true);
    expect(
      await rejectionOf(
        sweep(plan, clusters, async () => ({ c1: { error: "connection refused" } })),
        FleetError,
      ),
    ).to.match(/cluster c1: cannot remove the objects an interrupted update created.*connection refused/);
  });

  it("the file store keeps one file per entry: adding never loses an entry written meanwhile, removing takes only the named ones", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-journal-"));
    try {
      const backend = { url: `file://${dir}`, source: "test", fileDir: dir, localDir: dir };
      const store = journalStore(backend, "pulumi-fleet", "dev")!;
      expect(await store.list()).to.deep.equal([]);
      const k1 = await store.add({ writer: "one", objects: [obj("a")] });
      const k2 = await store.add({ writer: "two", objects: [obj("b")] });
      expect((await store.list()).map((x) => x.entry.writer)).to.deep.equal(["one", "two"]);
      await store.remove([k1]);
      expect((await store.list()).map((x) => x.key)).to.deep.equal([k2]);
      expect(journalStore({ url: "s3://bucket", source: "test", localDir: dir }, "pulumi-fleet", "dev"), "no journal on other backends").to.equal(undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads the identities of a state's Kubernetes objects, with the cluster from the URN", () => {
    const urn = (type: string, name: string) => `urn:pulumi:dev::pulumi-fleet::pulumi-fleet:index:Fleet$${type}::${name}`;
    const ids = stateIdentities({
      resources: [
        {
          urn: urn("kubernetes:core/v1:ConfigMap", "c1/web/core:ConfigMap:apps:a"),
          type: "kubernetes:core/v1:ConfigMap",
          outputs: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "apps" } },
        },
        { urn: urn("pulumi:providers:kubernetes", "c1"), type: "pulumi:providers:kubernetes", outputs: {} },
      ],
    });
    expect([...ids]).to.deep.equal(["c1/core:ConfigMap:apps:a"]);
  });
});
