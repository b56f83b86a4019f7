/**
 * The stack file's healthChecks on a live cluster: a custom resource whose readiness is its own
 * `status.phase` (no conditions, so kstatus and Fleet's summary would call it ready once applied) is
 * judged by the operator's CEL expressions. Until the test sets its phase to Running (through the status
 * subresource) the pair is NotReady with the object and the expression named, and the bundle that
 * dependsOn it is held (its ConfigMap not created); then `up` makes both Ready, a second `up` changes
 * nothing, and a phase the `failed` expression matches makes `status` NotReady naming that expression.
 * A broken expression stops `up` before anything is registered, naming the stack file and field.
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { HealthCheck } from "../../core/model/pair";
import { crdName, installStatusKind, StatusKind } from "../support/crds";
import { failureOf, liveStack } from "../support/live-stack";

const NS = "health-checks-test";
const KIND: StatusKind = { group: "health.example.com", kind: "Gadget", plural: "gadgets", singular: "gadget" };
const CRD = crdName(KIND);
const GADGET = `apiVersion: health.example.com/v1\nkind: Gadget\nmetadata:\n  name: g\nspec:\n  size: 1\n`;
const CURRENT = "self.?status.?phase.orValue('') == 'Running'";
const FAILED = "self.?status.?phase.orValue('') == 'Crashed'";
const CHECKS: HealthCheck[] = [{ apiVersion: "health.example.com/v1", kind: "Gadget", current: CURRENT, failed: FAILED }];

describe("healthChecks (CEL per kind) on a live cluster: Ready/NotReady in status, dependsOn gated, the expression named", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("hc", {
    namespace: NS,
    paths: ["svc", "app"],
    files: {
      "svc/gadget.yaml": GADGET,
      "svc/fleet.yaml": `defaultNamespace: ${NS}\nhelm:\n  timeoutSeconds: 5\n`,
      "app/cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: "1"\n',
      "app/fleet.yaml": `defaultNamespace: ${NS}\ndependsOn:\n  - name: hc-svc\n`,
    },
    stack: { healthChecks: CHECKS },
    setup: ({ cluster }) => installStatusKind(cluster, KIND),
  });
  after(async () => {
    if (s.cluster) await kubeRequest(s.cluster, "DELETE", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`);
  });

  const setPhase = async (phase: string) => {
    const path = `/apis/health.example.com/v1/namespaces/${NS}/gadgets/g/status`;
    const live = await kubeGet(s.cluster, path);
    await kubeRequest(s.cluster, "PUT", path, { body: { ...live, status: { phase } } });
  };
  const states = async () => Object.fromEntries((await ops.status(s.options())).deployments.map((d) => [d.bundle, `${d.state} ${d.message}`]));
  const appConfigMap = () => kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/app`);

  it("NotReady with the object and the current expression named until the phase is Running; the dependent is held", async () => {
    const msg = await failureOf(() => ops.up(s.options()));
    expect(msg).to.contain(
      `Gadget ${NS}/g is not ready after the timeout of 5s: InProgress: health check current expression ${JSON.stringify(CURRENT)} is false`,
    );
    expect(await kubeGet(s.cluster, `/apis/health.example.com/v1/namespaces/${NS}/gadgets/g`), "the Gadget was applied").to.not.equal(undefined);
    expect(await appConfigMap(), "the dependent bundle's ConfigMap").to.equal(undefined);
    const st = await states();
    expect(st["hc-svc"]).to.contain(`NotReady Gadget ${NS}/g is not ready after the timeout of 5s`).and.contain(CURRENT);
    expect(st["hc-app"]).to.match(/^WaitApplied waiting for .*hc-svc is NotReady/);
  });

  it("once the phase is Running, up makes it Ready and applies the dependent; a second up changes nothing", async () => {
    await setPhase("Running");
    await ops.up(s.options());
    expect(await appConfigMap(), "the dependent bundle's ConfigMap").to.not.equal(undefined);
    expect(await states()).to.deep.equal({ "hc-svc": "Ready ", "hc-app": "Ready " });
    const again = await ops.up(s.options());
    expect(again.events, "a no-op up").to.deep.equal([]);
  });

  it("status judges by the same expressions: a phase the failed expression matches is NotReady, naming it", async () => {
    await setPhase("Crashed");
    const st = await states();
    expect(st["hc-svc"]).to.equal(`NotReady Gadget ${NS}/g: Failed: health check failed expression ${JSON.stringify(FAILED)} holds`);
  });

  it("an expression that does not compile stops up before anything is registered, naming the stack file, field, kind and expression", async () => {
    const broken = [{ ...CHECKS[0], current: "status.phase ==" }];
    const cfg = { ...s.options().config!, healthChecks: broken };
    const msg = await failureOf(() => ops.up(s.options({ config: cfg })));
    expect(msg)
      .to.contain("stacks/Pulumi.hc.yaml: health checks that do not compile")
      .and.contain(`healthChecks[0].current: health.example.com/v1 Gadget: "status.phase ==" does not compile`);
  });
});
