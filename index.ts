/**
 * The Pulumi program. Thin by design: read the stack configuration, run the pure pipeline, export a
 * readable summary. The components that turn the plan into resources arrive with issue 3; until then
 * `pulumi preview` / `up` register nothing and only export the plan.
 */
import * as pulumi from "@pulumi/pulumi";
import { CONFIG_NAMESPACE, parseStackConfig, stackFileFor, TOP_LEVEL_KEYS } from "./core/config/stack";
import { planFleet } from "./core/pipeline";

const KEYS = ["fleetVersion", "renderDir", "clusters", "clusterGroups", "gitRepos", "agent"];

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

const config = parseStackConfig(rawConfig(), stackFileFor(pulumi.getStack()), process.cwd());

export const summary = planFleet(config).then((state) => ({
  gitRepos: Object.fromEntries(config.gitRepos.map((r) => [r.name, {
    commit: state.sources.get(r.name)!.commit,
    bundles: state.bundles.filter((b) => b.gitRepo === r.name).map((b) => b.name),
    clusters: [...new Set(state.plan.entries.filter((e) => e.gitRepo === r.name).map((e) => e.cluster))].sort(),
  }])),
  clusters: Object.fromEntries(config.clusters.map((c) => [c.name,
    state.plan.entries.filter((e) => e.cluster === c.name).map((e) => `${e.bundle} ${e.deploymentId.slice(-12)}`)])),
}));
