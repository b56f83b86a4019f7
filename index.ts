/**
 * The Pulumi program. Thin by design: read the stack configuration, build the Fleet component
 * (components/), export a readable summary and one record per BundleDeployment.
 */
import * as pulumi from "@pulumi/pulumi";
import { CONFIG_NAMESPACE, parseStackConfig, stackFileFor, TOP_LEVEL_KEYS } from "./core/config/stack";
import { deployFleet } from "./components";

/** Raw values of our keys; structured values arrive as JSON text, plain strings as they are. */
function rawConfig(): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const key of TOP_LEVEL_KEYS) {
    const text = pulumi.runtime.getConfig(`${CONFIG_NAMESPACE}:${key}`);
    if (text === undefined) continue;
    try {
      raw[key] = JSON.parse(text);
    } catch {
      raw[key] = text;
    }
  }
  return raw;
}

const fleet = deployFleet(parseStackConfig(rawConfig(), stackFileFor(pulumi.getStack()), process.cwd()));

/** Per GitRepo: commit, bundles, clusters matched; per cluster: bundles deployed. Also the record the safety guard reads. */
export const summary = fleet.then((f) => f.summary);
export const deployments = fleet.then((f) => f.deploymentRecords);
