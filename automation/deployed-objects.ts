/**
 * The objects the stack's state holds per bundle deployment, read before the engine runs: an unchanged
 * deployment is registered with exactly these (core/desired/state.ts deployedAsBefore), as Fleet keeps
 * a BundleDeployment's release until its deploymentID changes. One `pulumi stack export --show-secrets`
 * (a Secret's data is a secret in the state; the program registers it as it was, and the provider marks
 * it secret again).
 */
import { Stack } from "@pulumi/pulumi/automation";
import { DeployedBundle, DeployedNamespace } from "../core/desired/facts";
import { clusterOfKey } from "../core/desired/keys";
import { K8sObject } from "../core/bundles/manifests";
import { BUNDLE_DEPLOYMENT_TYPE, CLUSTER_TYPE } from "../core/desired/types";
import { runCli } from "./stack";

const SECRET_SIG = "4dabf18193072939515e22adb298388d";

interface StateResource {
  urn: string; type: string; custom?: boolean; parent?: string; provider?: string;
  inputs?: Record<string, unknown>; outputs?: Record<string, unknown>; retainOnDelete?: boolean | null;
}

const NAMESPACE_TYPE = "kubernetes:core/v1:Namespace";

/** The logical name at the end of a URN (a provider reference ends in "::<id>" after it). */
const nameOfUrn = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

export async function readDeployedObjects(stack: Stack): Promise<Map<string, DeployedBundle>> {
  const exported = JSON.parse(await runCli(stack, ["stack", "export", "--show-secrets", "--stack", stack.name]));
  return deployedObjectsOf(exported?.deployment?.resources ?? []);
}

/**
 * Per BundleDeployment's logical name (its deploymentKey): the deploymentID its objects were all applied
 * at (its `appliedDeploymentId` output), its Kubernetes objects in registration order, the user they
 * were applied as, and the namespaces its cluster created for them: what a failed deployment keeps.
 */
export function deployedObjectsOf(resources: StateResource[]): Map<string, DeployedBundle> {
  const out = new Map<string, DeployedBundle>();
  const byUrn = new Map<string, DeployedBundle>();
  for (const r of resources.filter((x) => x.type === BUNDLE_DEPLOYMENT_TYPE)) {
    const applied = r.outputs?.appliedDeploymentId;
    const bundle: DeployedBundle = { ...(typeof applied === "string" ? { appliedDeploymentId: applied } : {}), objects: [] };
    out.set(nameOfUrn(r.urn), bundle);
    byUrn.set(r.urn, bundle);
  }
  const clusterUrns = new Set(resources.filter((r) => r.type === CLUSTER_TYPE).map((r) => r.urn));
  const namespaces = new Map(resources.filter((r) => r.type === NAMESPACE_TYPE && r.parent && clusterUrns.has(r.parent) && r.inputs)
    .map((r) => [nameOfUrn(r.urn), r]));
  for (const r of resources) {
    const bundle = r.parent ? byUrn.get(r.parent) : undefined;
    if (!bundle || !r.type.startsWith("kubernetes:") || !r.inputs) continue;
    const cluster = clusterOfKey(nameOfUrn(r.parent!));
    const manifest = revealed(r.inputs) as K8sObject;
    bundle.objects.push({ manifest, retainOnDelete: r.retainOnDelete === true });
    // Providers are named "<cluster>" or "<cluster>/as/<user>" (core/desired/state.ts providerSettings).
    const provider = r.provider ? nameOfUrn(r.provider.slice(0, r.provider.lastIndexOf("::"))) : "";
    if (provider.startsWith(`${cluster}/as/`)) bundle.account = provider.slice(`${cluster}/as/`.length);
    const ns = manifest.metadata?.namespace ? namespaces.get(`${cluster}/${manifest.metadata.namespace}`) : undefined;
    if (ns && !bundle.namespaces?.some((n) => n.name === nameOfUrn(ns.urn))) {
      (bundle.namespaces ??= []).push({ name: nameOfUrn(ns.urn), metadata: ns.inputs!.metadata as DeployedNamespace["metadata"], retainOnDelete: ns.retainOnDelete === true });
    }
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
