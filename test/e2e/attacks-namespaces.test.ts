/**
 * A namespace belongs to the pairs that use it (issue 53): one team's namespace that the API server
 * refuses, or whose fleet.yaml metadata it would refuse, fails that team's bundles only. The victim's
 * NEW namespace and its bundle deploy in the same `up`; the failure is reported on the attacker's pairs,
 * naming the namespace; nothing is reported against the victim. On the live clusters, with the two-team
 * stack (test/support/teams-stack.ts). The refusal is a ValidatingAdmissionPolicy on the dev cluster that
 * refuses namespaces labelled `deny` (what a platform team's policy, a quota or a webhook does: anything
 * that passes validation when fleet.yaml is read).
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import { CONFIGMAP } from "../support/git-fixtures";
import { eventually } from "../support/eventually";
import { ATTACKER_NS, TeamsStack } from "../support/teams-stack";

const API = "/apis/admissionregistration.k8s.io/v1";
const POLICY = "attack-refuse-namespaces";
const REFUSED_NS = "attack-refused";
const VICTIM_NEW_NS = "victim-new";
const REFUSAL = "namespaces labelled deny are not allowed here";

/** The dev cluster refuses namespaces labelled `deny`; waits until the API server enforces it (a dry-run probe). */
async function refuseLabelledNamespaces(c: LocalCluster): Promise<void> {
  const body = (kind: string, spec: object) => ({ apiVersion: "admissionregistration.k8s.io/v1", kind, metadata: { name: POLICY }, spec });
  await kubeRequest(c, "POST", `${API}/validatingadmissionpolicies`, {
    body: body("ValidatingAdmissionPolicy", {
      failurePolicy: "Fail",
      matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["namespaces"] }] },
      validations: [{ expression: "!has(object.metadata.labels) || !('deny' in object.metadata.labels)", message: REFUSAL }],
    }),
  });
  await kubeRequest(c, "POST", `${API}/validatingadmissionpolicybindings`, {
    body: body("ValidatingAdmissionPolicyBinding", { policyName: POLICY, validationActions: ["Deny"] }),
  });
  const probe = { apiVersion: "v1", kind: "Namespace", metadata: { name: "attack-policy-probe", labels: { deny: "true" } } };
  const enforced = () =>
    kubeRequest(c, "POST", "/api/v1/namespaces?dryRun=All", { body: probe }).then(
      () => false,
      () => true,
    );
  for (let i = 0; i < 100 && !(await enforced()); i++) await new Promise((r) => setTimeout(r, 100));
  expect(await enforced(), "the namespace policy takes effect").to.equal(true);
}

async function liftNamespacePolicy(c: LocalCluster): Promise<void> {
  for (const kind of ["validatingadmissionpolicybindings", "validatingadmissionpolicies"]) {
    if (await kubeGet(c, `${API}/${kind}/${POLICY}`)) await kubeRequest(c, "DELETE", `${API}/${kind}/${POLICY}`);
  }
}

describe("attacks on namespaces: a namespace fails only the pairs that use it, on live clusters (issue 53)", function () {
  this.timeout(15 * 60_000);
  const t = new TeamsStack();
  t.register();
  after(async function () {
    this.timeout(5 * 60_000);
    if (!t.dev) return;
    await liftNamespacePolicy(t.dev);
    for (const c of [t.prod, t.dev])
      for (const ns of [VICTIM_NEW_NS, REFUSED_NS]) {
        if (await kubeGet(c, `/api/v1/namespaces/${ns}`)) await kubeRequest(c, "DELETE", `/api/v1/namespaces/${ns}`);
        // Gone before the next file's teams look for what the attacker left outside its namespace.
        await eventually(
          `namespace ${ns} gone from ${c.name}`,
          () => kubeGet(c, `/api/v1/namespaces/${ns}`),
          (n) => n === undefined,
          120_000,
        );
      }
  });

  it("the attacker's namespace refused by the API server, and one with an annotation key it would refuse: the victim's new namespace and bundle deploy in the same up", async () => {
    await refuseLabelledNamespaces(t.dev);
    t.commitVictim();
    t.victim.commit({ "new/fleet.yaml": `defaultNamespace: ${VICTIM_NEW_NS}\n`, "new/cm.yaml": CONFIGMAP("victim-new-config") }, "victim: a new namespace");
    t.commitAttacker(
      {
        // Valid metadata, refused at apply by the cluster's policy.
        "refused/fleet.yaml": `defaultNamespace: ${REFUSED_NS}\nnamespaceLabels: {deny: "true"}\n`,
        "refused/cm.yaml": CONFIGMAP("attack-in-refused"),
        // Metadata the API server would refuse for every namespace: refused when fleet.yaml is read.
        "badkey/fleet.yaml": `defaultNamespace: ${ATTACKER_NS}\nnamespaceAnnotations:\n  "example.com/a/b": x\n`,
        "badkey/cm.yaml": CONFIGMAP("attack-bad-key"),
        "huge/fleet.yaml": `defaultNamespace: ${ATTACKER_NS}\nnamespaceAnnotations:\n  big: "${"x".repeat(256 * 1024)}"\n`,
        "huge/cm.yaml": CONFIGMAP("attack-huge"),
      },
      "namespaces the API server refuses",
    );
    const run = await t.attack();
    await t.expectContained(
      run,
      {
        "attacker-badkey": [/badkey\/fleet\.yaml/, /namespaceAnnotations: invalid annotation key "example\.com\/a\/b"/],
        "attacker-huge": [/huge\/fleet\.yaml/, /namespaceAnnotations: annotations are \d+ bytes, more than the API server's limit of 262144/],
      },
      { applyRefused: { "attacker-refused": [new RegExp(`namespace ${REFUSED_NS} was refused by the API server`), new RegExp(REFUSAL)] } },
    );
    const refusedPair = run.failures.find((f) => f.bundle === "attacker-refused")!;
    expect(refusedPair.cluster, "on the cluster that refused it").to.equal(t.dev.name);
    // The victim's new namespace and its bundle, on both clusters, in this same up.
    for (const c of [t.prod, t.dev]) {
      expect(await kubeGet(c, `/api/v1/namespaces/${VICTIM_NEW_NS}`), `${c.name}: the victim's new namespace`).to.not.equal(undefined);
      expect(await kubeGet(c, `/api/v1/namespaces/${VICTIM_NEW_NS}/configmaps/victim-new-config`), `${c.name}: the victim's new bundle`).to.not.equal(
        undefined,
      );
    }
    expect(await kubeGet(t.dev, `/api/v1/namespaces/${REFUSED_NS}`), "the refused namespace").to.equal(undefined);

    // The policy lifted, the next up creates the namespace and deploys the bundle: the refusal is retried, not remembered.
    await liftNamespacePolicy(t.dev);
    t.commitVictim();
    const after = await t.attack({ noPreview: true });
    expect(after.failures.map((f) => f.bundle).sort()).to.deep.equal(["attacker-badkey", "attacker-huge"]);
    expect(await kubeGet(t.dev, `/api/v1/namespaces/${REFUSED_NS}/configmaps/attack-in-refused`), "deployed once its namespace is accepted").to.not.equal(
      undefined,
    );
  });
});
