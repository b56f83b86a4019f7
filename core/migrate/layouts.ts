/**
 * The layouts a stack's state has had, numbered. A state records no number (versions before this one
 * wrote none, and a number the program writes as an output is lost with the outputs of a failed
 * program), so the number is read from the state's shape: each layout leaves resources no later one
 * registers, and a state holding several (an upgrade interrupted half-way) is at the earliest.
 */
import { isUnqualifiedKey } from "./renames";
import { BUNDLE_DEPLOYMENT_TYPE } from "../desired/types";
import { isKubernetesProviders, legacyObjects, legacySetups } from "./legacy-resources";
import { nameOfUrn, StateResource } from "./state-shape";

export interface Layout {
  version: number;
  /** The commit of the last version that wrote it (test/e2e/upgrade-from-previous.test.ts deploys each). */
  lastWrittenBy?: string;
  says: string;
}

export const LAYOUTS: readonly Layout[] = [
  { version: 1, lastWrittenBy: "84ad92a", says: "helm and kustomize bundles as the Kubernetes provider's Chart and Directory components" },
  { version: 2, lastWrittenBy: "b501f27", says: "one engine resource per Kubernetes object under a BundleDeployment component" },
  { version: 3, lastWrittenBy: "c93238e", says: "one BundleDeployment per pair, named without its GitRepo; agents and namespaces one resource per object" },
  { version: 4, says: "one BundleDeployment per pair named <cluster>/<gitRepo>/<bundle>, one ClusterSetup per cluster" },
];

export const CURRENT_LAYOUT = LAYOUTS[LAYOUTS.length - 1].version;

const isChartComponent = (type: string) => /^kubernetes:(helm\.sh|kustomize)\/v\d+:(Chart|Directory)$/.test(type);

/** The earliest layout the state shows (CURRENT_LAYOUT for a new or current state). */
export function layoutOf(resources: StateResource[]): number {
  if (resources.some((r) => isChartComponent(r.type))) return 1;
  if (legacyObjects(resources).length) return 2;
  const unqualified = resources.some((r) => r.type === BUNDLE_DEPLOYMENT_TYPE && r.custom && isUnqualifiedKey(nameOfUrn(r.urn)));
  if (unqualified || legacySetups(resources).length || resources.some((r) => isKubernetesProviders(r.type))) return 3;
  return CURRENT_LAYOUT;
}

/**
 * Whether the stack's outputs (what a plain `pulumi up` reads of its last update: components/program.ts)
 * show an earlier layout: deployment records without the `deploymentStates` output (layouts 1 and 2,
 * one resource per object), or keyed without their GitRepo (up to layout 3). Only the operations'
 * `up` migrates such a stack.
 */
export function outputsShowEarlierLayout(deployments: unknown, states: unknown): boolean {
  const records = deployments && typeof deployments === "object" ? Object.keys(deployments) : [];
  if (!records.length) return false;
  return !states || typeof states !== "object" || records.some(isUnqualifiedKey);
}
