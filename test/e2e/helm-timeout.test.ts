/**
 * helm.timeoutSeconds on a live cluster: a Deployment that can never become ready (its pods fit no
 * node) fails the update after that many seconds, naming it, not after the provider's default await
 * of 10 minutes.
 */
import { expect } from "chai";
import * as ops from "../../automation/operations";
import { failureOf, liveStack } from "../support/live-stack";

const NS = "helm-timeout-test";
const STUCK = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: stuck
spec:
  replicas: 1
  selector: {matchLabels: {app: stuck}}
  template:
    metadata: {labels: {app: stuck}}
    spec:
      nodeSelector: {pulumi-fleet.test/no-such-node: "true"}
      containers: [{name: app, image: registry.invalid/app:1}]
`;

describe("helm.timeoutSeconds on a live cluster", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("timeout", {
    namespace: NS,
    paths: ["app"],
    files: { "app/fleet.yaml": `defaultNamespace: ${NS}\nhelm: {timeoutSeconds: 15}\n`, "app/deployment.yaml": STUCK },
  });

  it("a Deployment that never becomes ready fails the update after timeoutSeconds, naming it", async () => {
    const started = Date.now();
    const message = await failureOf(() => ops.up(s.options()));
    const seconds = (Date.now() - started) / 1000;
    expect(message, "up failed").to.contain("stuck");
    expect(message).to.match(/timeout|timed out/i);
    // 15 s of await plus the engine's own start-up and the program; the provider's default is 600 s.
    expect(seconds, `failed after ${seconds.toFixed(0)} s`).to.be.lessThan(120);
  });
});
