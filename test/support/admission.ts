/**
 * An admission policy that makes one cluster refuse what the others accept: a ValidatingAdmissionPolicy
 * (and its binding) refusing ConfigMaps (or Secrets) labelled `deny`, as a platform team's policy would
 * refuse a bundle's change. Waits until the API server enforces it (or no longer does), probing with a dry run.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";

const API = "/apis/admissionregistration.k8s.io/v1";

/** The kinds a policy here refuses, by their resource name. */
type Refused = "configmaps" | "secrets";
const KIND: Record<Refused, string> = { configmaps: "ConfigMap", secrets: "Secret" };

async function refused(c: LocalCluster, namespace: string, resource: Refused): Promise<boolean> {
  const probe = { apiVersion: "v1", kind: KIND[resource], metadata: { name: "policy-probe", namespace, labels: { deny: "true" } } };
  return kubeRequest(c, "POST", `/api/v1/namespaces/${namespace}/${resource}?dryRun=All`, { body: probe }).then(
    () => false,
    () => true,
  );
}

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await ok()); i++) await new Promise((r) => setTimeout(r, 100));
  expect(await ok(), what).to.equal(true);
}

/** The cluster refuses ConfigMaps labelled `deny` with `message`; `namespace` must exist (the probe's). */
export async function refuseLabelledConfigMaps(c: LocalCluster, name: string, message: string, namespace: string): Promise<void> {
  await refuseLabelled(c, name, "configmaps", { message }, namespace);
}

/**
 * The cluster refuses objects of `resource` labelled `deny`, with a fixed `message` or a CEL
 * `messageExpression` (which may quote the object's fields, as a real policy's message may).
 */
export async function refuseLabelled(
  c: LocalCluster,
  name: string,
  resource: Refused,
  says: { message: string } | { messageExpression: string },
  namespace: string,
): Promise<void> {
  await kubeRequest(c, "POST", `${API}/validatingadmissionpolicies`, {
    body: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: [resource] }] },
        validations: [{ expression: "!has(object.metadata.labels) || !('deny' in object.metadata.labels)", ...says }],
      },
    },
  });
  await kubeRequest(c, "POST", `${API}/validatingadmissionpolicybindings`, {
    body: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name },
      spec: { policyName: name, validationActions: ["Deny"] },
    },
  });
  await until("the admission policy takes effect", () => refused(c, namespace, resource));
}

/** Removes the policy (missing parts are fine); with `namespace`, waits until the cluster accepts ConfigMaps again. */
export async function liftPolicy(c: LocalCluster, name: string, namespace?: string): Promise<void> {
  for (const kind of ["validatingadmissionpolicybindings", "validatingadmissionpolicies"]) {
    try {
      await kubeRequest(c, "DELETE", `${API}/${kind}/${name}`);
    } catch {
      /* not there */
    }
  }
  if (namespace) await until("the admission policy is lifted", async () => !(await refused(c, namespace, "configmaps")));
}

/**
 * One bundle per name, each one ConfigMap named after its bundle in `namespace` holding `version`; the
 * `denied` bundle's ConfigMap carries the label refuseLabelledConfigMaps' policy refuses.
 */
export function writeConfigMapBundles(
  repoDir: string,
  bundles: readonly string[],
  namespace: string,
  version: (bundle: string) => number,
  denied?: string,
): void {
  for (const b of bundles) {
    fs.mkdirSync(path.join(repoDir, b), { recursive: true });
    fs.writeFileSync(path.join(repoDir, b, "fleet.yaml"), `defaultNamespace: ${namespace}\n`);
    const labels = b === denied ? '  labels: {deny: "true"}\n' : "";
    fs.writeFileSync(
      path.join(repoDir, b, "cm.yaml"),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${b}\n${labels}data:\n  version: "${version(b)}"\n`,
    );
  }
}
