/**
 * The migration's rename of layout 3's BundleDeployments (core/migrate/renames.ts) is the engine's own:
 * the same state renamed by the Pulumi CLI this project pins (`pulumi state rename`, one resource at a
 * time, on a file backend) and by planMigration in one pass gives the same references everywhere. No
 * cluster and no provider plugin: the CLI only edits the checkpoint.
 */
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { toolchain } from "../../automation/engine/toolchain";
import { planMigration } from "../../core/migrate/migrate";
import { ExportedState, StateResource } from "../../core/migrate/state-shape";
import { tempDir } from "../support/git-fixtures";

const PREFIX = "urn:pulumi:s::pulumi-fleet::";
const ROOT = `${PREFIX}pulumi:pulumi:Stack::pulumi-fleet-s`;
const FLEET = `${PREFIX}pulumi-fleet:index:Fleet::fleet`;
const PROVIDER = `${PREFIX}pulumi-fleet:index:Fleet$pulumi:providers:pulumi-fleet::c1`;
const GIT_REPO = `${PREFIX}pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo::examples`;
const pairUrn = (name: string) => `${PREFIX}pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::${name}`;
const owner = (gitRepo: string) => ({ deletePolicy: { ownerLabels: { "fleet.cattle.io/repo-name": gitRepo } } });

/** A layout-3 state: two pairs named "<cluster>/<bundle>", one waiting for the other (each kind of reference a pair can have), and a current pair naming both. */
function layout3(): ExportedState {
  const pair = (name: string, more: Record<string, unknown> = {}): StateResource =>
    ({
      urn: pairUrn(name),
      type: "pulumi-fleet:index:BundleDeployment",
      custom: true,
      id: name,
      parent: GIT_REPO,
      provider: `${PROVIDER}::pid`,
      inputs: owner("examples"),
      outputs: { state: "Ready" },
      ...more,
    }) as StateResource;
  const resources: StateResource[] = [
    { urn: ROOT, type: "pulumi:pulumi:Stack", custom: false },
    { urn: FLEET, type: "pulumi-fleet:index:Fleet", custom: false, parent: ROOT },
    { urn: PROVIDER, type: "pulumi:providers:pulumi-fleet", custom: true, id: "pid", parent: FLEET, inputs: {}, outputs: {} },
    { urn: GIT_REPO, type: "pulumi-fleet:index:GitRepo", custom: false, parent: FLEET },
    pair("c1/base"),
    pair("c1/app", {
      dependencies: [pairUrn("c1/base")],
      propertyDependencies: { waitFor: [pairUrn("c1/base")] },
      deletedWith: pairUrn("c1/base"),
      // No replaceWith: the CLI's rename (3.259.0) keeps the old URN in it beside the new one, and its integrity check then fails.
    }),
    pair("c1/examples/current", { dependencies: [pairUrn("c1/app"), GIT_REPO], propertyDependencies: { waitFor: [pairUrn("c1/app")] } }),
  ];
  return { version: 3, deployment: { resources } };
}

/** What a rename may change of each resource. */
const references = (resources: StateResource[]) =>
  resources.map((r) => {
    const x = r as StateResource & Record<string, unknown>;
    return [r.urn, r.parent, x.dependencies ?? [], x.propertyDependencies ?? {}, x.deletedWith ?? null, x.replaceWith ?? [], r.provider ?? null];
  });

describe("the migration renames layout 3's BundleDeployments as `pulumi state rename` does (core/migrate/renames.ts)", function () {
  this.timeout(5 * 60_000);

  it("the same state renamed by the CLI, one resource at a time, and by the migration in one pass: the same URNs and references", () => {
    const work = tempDir("pf-rename-");
    try {
      const env = { ...process.env, ...toolchain().env, PULUMI_CONFIG_PASSPHRASE: "rename", PULUMI_BACKEND_URL: `file://${work}` };
      fs.writeFileSync(path.join(work, "Pulumi.yaml"), "name: pulumi-fleet\nruntime: nodejs\n");
      const pulumi = (...args: string[]) =>
        execFileSync("pulumi", [...args, "--non-interactive"], { cwd: work, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
      pulumi("stack", "init", "s");
      const state = layout3();
      fs.writeFileSync(path.join(work, "state.json"), JSON.stringify(state));
      pulumi("stack", "import", "--file", path.join(work, "state.json"), "--stack", "s");

      const m = planMigration(state, { configured: new Set(["c1"]) });
      expect([...m.renames]).to.deep.equal([
        [pairUrn("c1/base"), pairUrn("c1/examples/base")],
        [pairUrn("c1/app"), pairUrn("c1/examples/app")],
      ]);
      for (const [from, to] of m.renames) pulumi("state", "rename", from, to.slice(to.lastIndexOf("::") + 2), "--yes", "--stack", "s");
      const byEngine = (JSON.parse(pulumi("stack", "export", "--stack", "s")) as ExportedState).deployment!.resources!;
      expect(references(m.state.deployment!.resources!)).to.deep.equal(references(byEngine));
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
