/**
 * Manifests as generators write them (kompose: `creationTimestamp: null`, `status: {}`, `value: null`,
 * empty structs) deploy once on a live cluster and then stay quiet: a second `up` changes nothing,
 * `preview --expect-no-changes` passes, `status` reports Ready (no Modified drift) and `up --refresh`
 * changes nothing. The custom resource is the case that diffed: its CRD has a status subresource, so
 * the API server discards `status: {}` and the provider saw `+status` on every update and refresh.
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { liveStack } from "../support/live-stack";

const NS = "api-ignored-test";
const GROUP = "api-ignored.pulumi-fleet.test";
const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${GROUP}`;

// kompose convert output for a one-service compose file, one file per object as kompose writes them.
const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  creationTimestamp: null
  labels: {io.kompose.service: web}
  name: web
spec:
  replicas: 1
  selector: {matchLabels: {io.kompose.service: web}}
  strategy: {}
  template:
    metadata:
      creationTimestamp: null
      labels: {io.kompose.service: web}
    spec:
      containers:
        - image: nginx
          name: web
          resources: {}
          env:
            - name: X
              value: null
      restartPolicy: Always
status: {}
`;
const SERVICE = `apiVersion: v1
kind: Service
metadata: {creationTimestamp: null, name: web, labels: {io.kompose.service: web}}
spec:
  ports: [{name: "80", port: 80, targetPort: 80}]
  selector: {io.kompose.service: web}
status:
  loadBalancer: {}
`;
// A CRD with a status subresource (as most operators' are) and a custom resource written the same way.
const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.${GROUP}}
spec:
  group: ${GROUP}
  scope: Namespaced
  names: {kind: Gadget, plural: gadgets, singular: gadget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}, label: {type: string}}}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;
const GADGET = `apiVersion: ${GROUP}/v1
kind: Gadget
metadata: {creationTimestamp: null, name: gadget}
spec: {size: 1, label: null}
status: {}
`;

describe("objects that differ only in what the API server ignores, on a live cluster", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("apiignored", {
    namespace: NS,
    paths: ["web", "gadget"],
    files: {
      "web/fleet.yaml": `defaultNamespace: ${NS}\n`,
      "web/web-deployment.yaml": DEPLOYMENT,
      "web/web-service.yaml": SERVICE,
      "gadget/fleet.yaml": `defaultNamespace: ${NS}\n`,
      "gadget/crd.yaml": CRD,
      "gadget/gadget.yaml": GADGET,
    },
  });
  after(async function () {
    this.timeout(60_000);
    if (await kubeGet(s.cluster, crdPath)) await kubeRequest(s.cluster, "DELETE", crdPath);
  });

  const changed = (r: ops.OperationResult) => Object.entries(r.changes).filter(([op]) => op !== "same" && op !== "read");
  const steps = (r: ops.OperationResult) =>
    [...r.groups.deployments.values()].flatMap((d) => d.steps.filter((x) => x.op !== "refresh").map((x) => `${x.op} ${x.urn.split("::").pop()}`));

  it("a kompose-style bundle and custom resource deploy once: a second up, a preview, status and up --refresh see no change", async () => {
    const first = await ops.up(s.options());
    expect(first.events.map((e) => `${e.event} ${e.bundle}`).sort()).to.deep.equal(["deployed apiignored-gadget", "deployed apiignored-web"]);

    const second = await ops.up(s.options());
    expect(steps(second), "second up").to.deep.equal([]);
    expect(changed(second), "second up").to.deep.equal([]);
    expect(second.events).to.deep.equal([]);

    await ops.preview(s.options({ expectNoChanges: true }));

    const status = await ops.status(s.options());
    expect(status.deployments.map((d) => `${d.bundle} ${d.state} ${d.message}`.trim())).to.deep.equal(["apiignored-gadget Ready", "apiignored-web Ready"]);

    const refreshed = await ops.up(s.options({ refresh: true }));
    expect(steps(refreshed), "up --refresh").to.deep.equal([]);
    expect(changed(refreshed), "up --refresh").to.deep.equal([]);

    // What was applied is what the API server keeps: no status on the custom resource, no null env value.
    const gadget = await kubeGet(s.cluster, `/apis/${GROUP}/v1/namespaces/${NS}/gadgets/gadget`);
    expect(gadget.spec).to.deep.equal({ size: 1 });
    expect(gadget).to.not.have.property("status");
    const web = await kubeGet(s.cluster, `/apis/apps/v1/namespaces/${NS}/deployments/web`);
    expect(web.spec.template.spec.containers[0].env).to.deep.equal([{ name: "X" }]);
    expect(web.metadata.generation).to.equal(1);
  });
});
