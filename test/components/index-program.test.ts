import { expect } from "chai";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";

/** Resolves an Output or promise-valued export in mock mode. */
const valueOf = <T>(v: pulumi.Input<T>): Promise<T> => new Promise((resolve) => pulumi.output(v).apply((x) => resolve(x as T)));

describe("index.ts under Pulumi mocks", () => {
  it("reads the stack config through Pulumi and exports the plan summary", async () => {
    await pulumi.runtime.setMocks({ newResource: (a) => ({ id: `${a.name}_id`, state: a.inputs }), call: (a) => a.inputs }, "pulumi-fleet", "local", false);
    pulumi.runtime.setAllConfig({
      "pulumi-fleet:clusters": JSON.stringify([{ name: "dev-1", labels: { env: "dev" } }, { name: "prod-1", labels: { env: "prod" } }]),
      "pulumi-fleet:clusterGroups": JSON.stringify([{ name: "dev", selector: { matchLabels: { env: "dev" } } }]),
      "pulumi-fleet:gitRepos": JSON.stringify([{ name: "examples", repo: path.resolve(__dirname, "../../examples"), paths: ["simple"], targets: [{ clusterGroup: "dev" }] }]),
      "pulumi-fleet:fleetVersion": "0.13.1",
    });
    const program = await import("../../index");
    const summary = await valueOf(program.summary);
    expect(summary.gitRepos.examples.bundles).to.deep.equal(["examples-simple"]);
    expect(summary.gitRepos.examples.clusters).to.deep.equal(["dev-1"]);
    expect(summary.clusters["prod-1"]).to.deep.equal([]);
  });
});
