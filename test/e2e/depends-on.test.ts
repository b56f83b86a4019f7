/**
 * dependsOn with Fleet's default acceptedStates [Ready], on a live cluster: the dependent bundle is
 * applied only once the bundle it depends on is Ready. The dependency's Deployment has a pod that the
 * fake kubelet (kwok) makes ready after 6 s; the dependent's ConfigMap must not exist before the
 * Deployment became Available.
 */
import { expect } from "chai";
import { kubeGet } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { CONFIGMAP } from "../support/git-fixtures";
import { liveStack } from "../support/live-stack";

const NS = "depends-on-test";
const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata:
      labels: {app: db}
      annotations: {pulumi-fleet.test/ready-delay: "6s"}
    spec:
      containers: [{name: db, image: example.com/db:1}]
`;

describe("dependsOn (acceptedStates [Ready]) on a live cluster: the dependent waits for the other bundle to be Ready", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("dep", {
    namespace: NS,
    paths: ["db", "app"],
    files: {
      "db/deployment.yaml": DEPLOYMENT,
      "db/fleet.yaml": `defaultNamespace: ${NS}\n`,
      "app/cm.yaml": CONFIGMAP("app"),
      "app/fleet.yaml": `defaultNamespace: ${NS}\ndependsOn:\n  - name: dep-db\n    acceptedStates: [Ready]\n`,
    },
  });

  it("the dependent's object is created after the dependency's Deployment became Available", async () => {
    const r = await ops.up(s.options());
    expect(r.events.map((e) => `${e.event} ${e.bundle}`).sort()).to.deep.equal(["deployed dep-app", "deployed dep-db"]);
    const deployment = await kubeGet(s.cluster, `/apis/apps/v1/namespaces/${NS}/deployments/db`);
    const cm = await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/app`);
    const available = deployment.status.conditions.find((c: { type: string }) => c.type === "Available");
    expect(available.status).to.equal("True");
    const t = (x: string) => Date.parse(x);
    // The pod's readiness really was delayed (else this test would prove nothing) ...
    expect(t(available.lastTransitionTime) - t(deployment.metadata.creationTimestamp), "delay before Available").to.be.at.least(5000);
    // ... and the dependent was applied only after it (timestamps have one-second resolution).
    expect(t(cm.metadata.creationTimestamp), "ConfigMap created").to.be.at.least(t(available.lastTransitionTime));
  });
});
