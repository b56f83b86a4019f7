/**
 * Stack configurations shared by the component tests (mocks) and the end-to-end tests (real engine):
 * the embedded local stack, and the edits the tests apply to it.
 */
import { StackConfig } from "../../core/config/stack";
import { GitRepoConfig } from "../../core/config/git-repo";
import { loadStackFile } from "../../core/plan/pipeline";
import { PROJECT_DIR } from "../../core/base/project-dir";

/** The local stack (examples/ to dev-1, dev-2, prod-1), rendering under `renderDir`. */
export function localStack(renderDir: string): StackConfig {
  return { ...loadStackFile("local", PROJECT_DIR), renderDir };
}

/** Config B of the prune tests: the GitRepo's `prod` target removed, so prod-1 is dropped. */
export function withoutProdTarget(config: StackConfig): StackConfig {
  return {
    ...config,
    gitRepos: config.gitRepos.map((r) => ({ ...r, targets: r.targets.filter((t) => t.name !== "prod") })),
  };
}

/** Every list of the stack file reversed, and every map's keys reversed: must change nothing. */
export function reordered(config: StackConfig): StackConfig {
  const rev = <T>(xs: T[]) => [...xs].reverse();
  const revMap = <V>(m: Record<string, V>) => Object.fromEntries(rev(Object.entries(m)));
  return {
    ...config,
    clusters: rev(config.clusters).map((c) => ({ ...c, labels: revMap(c.labels), templateValues: revMap(c.templateValues) })),
    clusterGroups: rev(config.clusterGroups),
    gitRepos: rev(config.gitRepos).map((r) => ({ ...r, targets: rev(r.targets), paths: rev(r.paths) })),
  };
}

/** A render-mode stack of the named clusters (no labels) and GitRepos, as the unit tests of the desired state use. */
export function renderStack(clusters: string[], gitRepos: GitRepoConfig[]): StackConfig {
  return {
    file: "stacks/Pulumi.test.yaml",
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    renderDir: "/tmp/pulumi-fleet-render",
    clusterGroups: [],
    clusters: clusters.map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false })),
    gitRepos,
  };
}
