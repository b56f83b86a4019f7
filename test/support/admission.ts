/**
 * An admission policy that makes one cluster refuse what the others accept: a ValidatingAdmissionPolicy
 * (and its binding) refusing ConfigMaps labelled `deny`, as a platform team's policy would refuse a
 * bundle's change. Waits until the API server enforces it (or no longer does), probing with a dry run.
 */
import { expect } from "chai";
import { kubeRequest } from "../../automation/kube-client";
import { LocalCluster } from "../../automation/local-clusters";

const API = "/apis/admissionregistration.k8s.io/v1";

async function refused(c: LocalCluster, namespace: string): Promise<boolean> {
  const probe = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "policy-probe", namespace, labels: { deny: "true" } } };
  return kubeRequest(c, "POST", `/api/v1/namespaces/${namespace}/configmaps?dryRun=All`, { body: probe }).then(() => false, () => true);
}

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await ok()); i++) await new Promise((r) => setTimeout(r, 100));
  expect(await ok(), what).to.equal(true);
}

/** The cluster refuses ConfigMaps labelled `deny` with `message`; `namespace` must exist (the probe's). */
export async function refuseLabelledConfigMaps(c: LocalCluster, name: string, message: string, namespace: string): Promise<void> {
  await kubeRequest(c, "POST", `${API}/validatingadmissionpolicies`, { body: {
    apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingAdmissionPolicy", metadata: { name },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"] }] },
      validations: [{ expression: "!has(object.metadata.labels) || !('deny' in object.metadata.labels)", message }],
    },
  } });
  await kubeRequest(c, "POST", `${API}/validatingadmissionpolicybindings`, { body: {
    apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingAdmissionPolicyBinding", metadata: { name }, spec: { policyName: name, validationActions: ["Deny"] },
  } });
  await until("the admission policy takes effect", () => refused(c, namespace));
}

/** Removes the policy (missing parts are fine); with `namespace`, waits until the cluster accepts again. */
export async function liftPolicy(c: LocalCluster, name: string, namespace?: string): Promise<void> {
  for (const kind of ["validatingadmissionpolicybindings", "validatingadmissionpolicies"]) {
    try { await kubeRequest(c, "DELETE", `${API}/${kind}/${name}`); } catch { /* not there */ }
  }
  if (namespace) await until("the admission policy is lifted", async () => !(await refused(c, namespace)));
}
