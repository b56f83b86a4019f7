/**
 * The set-up the live tests of single fleet.yaml settings share: the first live cluster, a local
 * GitRepo directory with the given files, and a stack of its own that targets every cluster in the
 * config (only that one). Call it inside describe(): it registers the before and after hooks; after
 * destroys the stack and deletes the test's namespace, so the next file finds the cluster as it was.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { ClusterConfig, StackConfig } from "../../core/config/stack";
import { GitRepoConfig } from "../../core/config/git-repo";
import { AgentSettings } from "../../core/config/agent-settings";
import { gitRepoConfig, tempDir } from "./git-fixtures";
import { liveClusters } from "./live-clusters";

export interface LiveStack {
  /** Set when the before hook has run. */
  cluster: LocalCluster;
  repoDir: string;
  /** Writes a file of the GitRepo (a plain directory: read as it is on disk at each operation). */
  write(file: string, text: string): void;
  options(over?: Partial<ops.OperationOptions>): ops.OperationOptions;
}

/** A live cluster's entry in a stack config: its kubeconfig's text, the given labels, nothing else set. */
export function liveClusterConfig(c: LocalCluster, labels: Record<string, string> = {}): ClusterConfig {
  return { name: c.name, labels, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: fs.readFileSync(c.kubeconfig, "utf8") };
}

/**
 * The stack config of the live tests: the given live clusters, one GitRepo `name` (also the stack's
 * name) reading `paths` of the directory `repo` on every cluster, and a management endpoint for the agents.
 */
export function liveStackConfig(
  name: string,
  clusters: LocalCluster[],
  repo: { dir: string; paths: string[] },
  over: { agent?: AgentSettings; gitRepo?: Partial<GitRepoConfig>; stack?: Partial<StackConfig> } = {},
): StackConfig {
  return {
    file: `stacks/Pulumi.${name}.yaml`,
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com", ...over.agent },
    clusterGroups: [],
    clusters: clusters.map((c) => liveClusterConfig(c)),
    gitRepos: [gitRepoConfig({ name, repo: repo.dir, paths: repo.paths, targets: [{ clusterSelector: {} }], ...over.gitRepo })],
    ...over.stack,
  };
}

/** `name` names the stack, its GitRepo (so bundles are `<name>-<path>`) and its passphrase. */
export function liveStack(
  name: string,
  spec: {
    namespace: string;
    paths: string[];
    files: Record<string, string>;
    setup?: (s: LiveStack) => Promise<void>;
    /** Global agent settings beside the management endpoint (for example its namespace). */
    agent?: AgentSettings;
    /** Settings of the GitRepo's stack entry (for example allowTakeOwnership). */
    gitRepo?: Partial<GitRepoConfig>;
    /** More top-level settings of the stack file (for example healthChecks). */
    stack?: Partial<StackConfig>;
  },
): LiveStack {
  const work = tempDir(`pf-${name}-`);
  const repoDir = path.join(work, "repo");
  let config: StackConfig;
  const stack: LiveStack = {
    cluster: undefined as unknown as LocalCluster,
    repoDir,
    write(file, text) {
      fs.mkdirSync(path.dirname(path.join(repoDir, file)), { recursive: true });
      fs.writeFileSync(path.join(repoDir, file), text);
    },
    options: (over = {}) => ({
      stack: name,
      stateDir: path.join(work, "state"),
      stackConfigDir: path.join(work, "stacks"),
      config,
      deploy: { cacheRoot: path.join(work, "git-cache") },
      env: { PULUMI_CONFIG_PASSPHRASE: name },
      ...over,
    }),
  };

  before(async function () {
    this.timeout(60 * 60_000);
    toolchain();
    stack.cluster = liveClusters().clusters[0];
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    for (const [file, text] of Object.entries(spec.files)) stack.write(file, text);
    config = liveStackConfig(name, [stack.cluster], { dir: repoDir, paths: spec.paths }, spec);
    await spec.setup?.(stack);
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await ops.destroy(stack.options());
    const ns = `/api/v1/namespaces/${spec.namespace}`;
    if (await kubeGet(stack.cluster, ns)) await kubeRequest(stack.cluster, "DELETE", ns);
    fs.rmSync(work, { recursive: true, force: true });
  });

  return stack;
}

/** The message an operation fails with; "" when it succeeds (so an assertion on the message then fails). */
export async function failureOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return "";
  } catch (err) {
    return String((err as Error).message);
  }
}

/** A live e2e's end on several clusters: its stack destroyed, its namespace deleted where it is left, its work folder removed whatever failed. */
export async function tearDownLive(options: ops.OperationOptions, clusters: LocalCluster[], namespace: string, work: string): Promise<void> {
  try {
    await ops.destroy(options);
    const ns = `/api/v1/namespaces/${namespace}`;
    for (const c of clusters) if (await kubeGet(c, ns)) await kubeRequest(c, "DELETE", ns);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
