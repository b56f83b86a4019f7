import { expect } from "chai";
import { K8sObject } from "../../core/model/k8s-object";
import { nullStringValues, withoutApiIgnored } from "../../core/render/api-ignored";
import { desiredObjects } from "../../core/desired/objects";
import { RenderedDeployment } from "../../core/render/deployments";
import { PlanEntry } from "../../core/targeting/plan";
import { readBundles } from "../../core/bundles/read";
import { gitRepoConfig, TestRepo } from "../support/git-fixtures";
import { renderBundle } from "../support/render";

/** A Deployment as kompose writes it (creationTimestamp: null, empty structs, a null env value, status: {}). */
const komposeDeployment = (): K8sObject =>
  ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { creationTimestamp: null, labels: { "io.kompose.service": "web" }, name: "web" },
    spec: {
      replicas: 1,
      selector: { matchLabels: { "io.kompose.service": "web" } },
      strategy: {},
      template: {
        metadata: { creationTimestamp: null, labels: { "io.kompose.service": "web" } },
        spec: { containers: [{ image: "nginx", name: "web", resources: {}, env: [{ name: "X", value: null }] }], restartPolicy: "Always" },
      },
    },
    status: {},
  }) as unknown as K8sObject;

describe("what the API server ignores (core/render/api-ignored)", () => {
  it("drops null map entries at any depth, creationTimestamp: null and an empty status; keeps empty structs", () => {
    expect(withoutApiIgnored(komposeDeployment())).to.deep.equal({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { labels: { "io.kompose.service": "web" }, name: "web" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { "io.kompose.service": "web" } },
        strategy: {},
        template: {
          metadata: { labels: { "io.kompose.service": "web" } },
          spec: { containers: [{ image: "nginx", name: "web", resources: {}, env: [{ name: "X" }] }], restartPolicy: "Always" },
        },
      },
    });
  });

  it("keeps a non-empty status (a CRD without a status subresource stores it), null list items, and everything else", () => {
    const service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web" },
      spec: { ports: [{ port: 80 }] },
      status: { loadBalancer: {} },
    } as K8sObject;
    expect(withoutApiIgnored(service)).to.deep.equal(service);
    const note = {
      apiVersion: "example.com/v1",
      kind: "Note",
      metadata: { name: "n" },
      spec: { args: ["a", null], zero: 0, empty: "", off: false, list: [] },
      status: { phase: "stored", gone: null },
    } as unknown as K8sObject;
    expect(withoutApiIgnored(note)).to.deep.equal({
      apiVersion: "example.com/v1",
      kind: "Note",
      metadata: { name: "n" },
      spec: { args: ["a", null], zero: 0, empty: "", off: false, list: [] },
      status: { phase: "stored" },
    });
    // A status that only held nulls is applied as `status: {}`, so it goes as well.
    expect(withoutApiIgnored({ ...note, status: { gone: null } })).to.not.have.property("status");
    // Only the top-level status: a field of that name elsewhere is the kind's own.
    const nested = { apiVersion: "example.com/v1", kind: "Job", metadata: { name: "j" }, spec: { status: {} } } as K8sObject;
    expect(withoutApiIgnored(nested)).to.deep.equal(nested);
  });

  it("leaves its input alone and is idempotent", () => {
    const input = komposeDeployment();
    const once = withoutApiIgnored(input);
    expect(input).to.deep.equal(komposeDeployment());
    expect(withoutApiIgnored(once)).to.deep.equal(once);
  });

  it("is what desiredObjects registers, under the ownership labels", () => {
    const entry = {
      gitRepo: "repo",
      bundle: "repo-web",
      cluster: "c1",
      target: "all",
      customizations: [],
      options: {},
      namespace: "apps",
      releaseName: "repo-web",
      manifestId: "s-1",
      deploymentId: "s-1:x",
      paused: false,
      dependsOn: [],
    } as PlanEntry;
    const rendered: RenderedDeployment = { objects: [komposeDeployment()], style: "yaml", warnings: [], chartCrds: new Set(), ignoredFields: new Map() };
    const [web] = desiredObjects(entry, rendered);
    expect(web.manifest).to.not.have.property("status");
    expect(web.manifest.metadata).to.not.have.property("creationTimestamp");
    expect(web.manifest.metadata.labels).to.include({ "io.kompose.service": "web", "fleet.cattle.io/bundle-name": "repo-web" });
    const template = (web.manifest.spec as any).template;
    expect(template.metadata).to.not.have.property("creationTimestamp");
    expect(template.spec.containers[0].env).to.deep.equal([{ name: "X" }]);
  });
});

describe('null string values, which Fleet\'s Helm stores as "" (core/render/api-ignored nullStringValues)', () => {
  it("names each null in labels, annotations and a ConfigMap's or Secret's data, and nothing else; a render says so", async () => {
    const cm = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "env", labels: { a: null, b: "x" }, annotations: { n: null } },
      data: { DEBUG: null, MODE: "prod" },
    } as unknown as K8sObject;
    expect(nullStringValues(cm)).to.deep.equal(["metadata.labels.a", "metadata.annotations.n", "data.DEBUG"]);
    expect(nullStringValues(komposeDeployment())).to.deep.equal([]);
    const repo = new TestRepo({ "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: env\ndata:\n  DEBUG: null\n" });
    const [bundle] = await readBundles(repo.dir, gitRepoConfig({ name: "t", repo: repo.dir, paths: ["app"] }));
    const r = await renderBundle(bundle);
    expect(r.warnings).to.deep.equal([
      'ConfigMap env: data.DEBUG is null: it is not applied (the Kubernetes provider drops nulls), where Fleet\'s Helm would store an empty string; write "" to keep the key',
    ]);
  });
});
