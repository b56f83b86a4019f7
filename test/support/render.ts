/** Renders one bundle for one set of options through fleet-render, as the pipeline does for a plan entry. */
import { Bundle, DeploymentOptions } from "../../core/bundles/types";
import { K8sObject } from "../../core/model/k8s-object";
import { helmReleaseNameOf } from "../../core/base/naming";
import { PlanEntry } from "../../core/targeting/plan";
import { renderDeployments } from "../../core/render/deployments";
import { runRenderer } from "../../core/renderer/fleet-render";

export async function renderBundle(
  bundle: Bundle,
  options: DeploymentOptions = bundle.options,
  cluster = "c1",
): Promise<{ objects: K8sObject[]; warnings: string[]; style: string }> {
  const entry: PlanEntry = {
    gitRepo: bundle.gitRepo,
    bundle: bundle.name,
    cluster,
    target: "t",
    customizations: [],
    options,
    namespace: options.namespace || options.defaultNamespace || "default",
    releaseName: options.helm?.releaseName || helmReleaseNameOf(bundle.name),
    manifestId: bundle.manifestId,
    deploymentId: "d",
    paused: false,
    dependsOn: [],
  };
  return (await renderDeployments([entry], [bundle], () => "0123456789abcdef0123456789abcdef01234567", runRenderer)).get(entry)!;
}

export async function renderObjects(bundle: Bundle, options?: DeploymentOptions, cluster?: string): Promise<K8sObject[]> {
  return (await renderBundle(bundle, options, cluster)).objects;
}
