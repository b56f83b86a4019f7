/**
 * The objects the stack's state holds per bundle deployment, read before the engine runs: an unchanged
 * deployment is registered with exactly these (core/desired/state.ts deployedAsBefore), as Fleet keeps
 * a BundleDeployment's release until its deploymentID changes. One `pulumi stack export --show-secrets`
 * (a Secret's data is a secret in the state; the program registers it as it was, and the provider marks
 * it secret again).
 */
import { Stack } from "@pulumi/pulumi/automation";
import { DeployedBundle } from "../core/desired/facts";
import { K8sObject } from "../core/bundles/manifests";
import { BUNDLE_DEPLOYMENT_TYPE } from "../core/desired/types";
import { runCli } from "./stack";

const SECRET_SIG = "4dabf18193072939515e22adb298388d";

interface StateResource { urn: string; type: string; custom?: boolean; parent?: string; inputs?: Record<string, unknown>; outputs?: Record<string, unknown>; retainOnDelete?: boolean | null }

export async function readDeployedObjects(stack: Stack): Promise<Map<string, DeployedBundle>> {
  const exported = JSON.parse(await runCli(stack, ["stack", "export", "--show-secrets", "--stack", stack.name]));
  return deployedObjectsOf(exported?.deployment?.resources ?? []);
}

/**
 * Per BundleDeployment's logical name (its deploymentKey): the deploymentID its objects were all applied
 * at (its `appliedDeploymentId` output), and its Kubernetes objects in registration order.
 */
export function deployedObjectsOf(resources: StateResource[]): Map<string, DeployedBundle> {
  const out = new Map<string, DeployedBundle>();
  const byUrn = new Map<string, DeployedBundle>();
  for (const r of resources.filter((x) => x.type === BUNDLE_DEPLOYMENT_TYPE)) {
    const applied = r.outputs?.appliedDeploymentId;
    const bundle: DeployedBundle = { ...(typeof applied === "string" ? { appliedDeploymentId: applied } : {}), objects: [] };
    out.set(r.urn.slice(r.urn.lastIndexOf("::") + 2), bundle);
    byUrn.set(r.urn, bundle);
  }
  for (const r of resources) {
    const bundle = r.parent ? byUrn.get(r.parent) : undefined;
    if (!bundle || !r.type.startsWith("kubernetes:") || !r.inputs) continue;
    bundle.objects.push({ manifest: revealed(r.inputs) as K8sObject, retainOnDelete: r.retainOnDelete === true });
  }
  return out;
}

/** A value with the state's secret envelopes (`--show-secrets`: the plaintext as JSON text) opened. */
function revealed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(revealed);
  if (!v || typeof v !== "object") return v;
  const o = v as Record<string, unknown>;
  if (SECRET_SIG in o) {
    if (typeof o.plaintext !== "string") throw new Error("the state holds a secret that was not decrypted (stack export --show-secrets)");
    return revealed(JSON.parse(o.plaintext));
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, revealed(x)]));
}
