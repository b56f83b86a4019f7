/**
 * The example environments under stacks/ are documentation users copy: each must parse and validate
 * (stack keys, selectors, agent settings) exactly as the program would read it.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { resolveAgents } from "../../core/agent/effective";
import { loadStackFile } from "../../core/plan/pipeline";
import { PROJECT_DIR } from "../../core/base/project-dir";

describe("stacks/ example environments", () => {
  const stacks = fs
    .readdirSync(path.join(PROJECT_DIR, "stacks"))
    .map((f) => /^Pulumi\.(.+)\.yaml$/.exec(f)?.[1])
    .filter((s): s is string => !!s)
    .sort();

  it("are local, dev, staging and prod", () => {
    expect(stacks).to.deep.equal(["dev", "local", "prod", "staging"]);
  });

  for (const stack of ["dev", "staging", "prod", "local"]) {
    it(`${stack}: parses, and every cluster's agent configuration resolves`, () => {
      const config = loadStackFile(stack, PROJECT_DIR);
      expect(config.clusters.length).to.be.greaterThan(0);
      expect(config.gitRepos.length).to.be.greaterThan(0);
      const agents = resolveAgents(config);
      expect([...agents.keys()].sort()).to.deep.equal(config.clusters.map((c) => c.name).sort());
    });
  }

  it("prod pins one agent and lets the others follow fleetVersion", () => {
    const agents = resolveAgents(loadStackFile("prod", PROJECT_DIR));
    expect(agents.get("prod-us-1")!.config.image).to.equal("rancher/fleet-agent:v0.12.4");
    expect(agents.get("prod-eu-1")!.config.image).to.equal("rancher/fleet-agent:v0.13.1");
  });
});
