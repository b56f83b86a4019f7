import { expect } from "chai";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { runUnderMocks } from "../support/mock-engine";

/** Resolves an Output or promise-valued export in mock mode. */
const valueOf = <T>(v: pulumi.Input<T>): Promise<T> => new Promise((resolve) => pulumi.output(v).apply((x) => resolve(x as T)));

describe("index.ts under Pulumi mocks", function () {
  this.timeout(30_000);
  it("reads the stack config through Pulumi, builds the fleet and exports the summary and deployment records", async () => {
    const run = await runUnderMocks(
      async () => {
        pulumi.runtime.setAllConfig({
          "pulumi-fleet:clusters": JSON.stringify([
            { name: "dev-1", labels: { env: "dev" } },
            { name: "prod-1", labels: { env: "prod" } },
          ]),
          "pulumi-fleet:clusterGroups": JSON.stringify([{ name: "dev", selector: { matchLabels: { env: "dev" } } }]),
          "pulumi-fleet:gitRepos": JSON.stringify([
            { name: "examples", repo: path.resolve(__dirname, "../../examples"), paths: ["simple"], targets: [{ clusterGroup: "dev" }] },
          ]),
          "pulumi-fleet:renderDir": "/tmp/pulumi-fleet-index-test",
          "pulumi-fleet:fleetVersion": "0.13.1",
          "pulumi-fleet:agent": JSON.stringify({ apiServerURL: "https://fleet.example.com" }),
        });
        const program = await import("../../index");
        return { summary: await valueOf(program.summary), deployments: await valueOf(program.deployments) };
      },
      { stack: "local" },
    );
    const { summary, deployments } = run.result;
    expect(summary.gitRepos.examples.bundles).to.deep.equal(["examples-simple"]);
    expect(summary.gitRepos.examples.clusters).to.deep.equal(["dev-1"]);
    expect(summary.clusters["prod-1"]).to.deep.equal([]);
    expect(Object.keys(deployments)).to.deep.equal(["dev-1/examples/examples-simple"]);
    expect(deployments["dev-1/examples/examples-simple"]).to.include({
      bundle: "examples-simple",
      cluster: "dev-1",
      namespace: "simple",
      objectCount: 3,
      paused: false,
    });
    expect(deployments["dev-1/examples/examples-simple"].deploymentId).to.match(/^s-[0-9a-f]+:[0-9a-f]{64}$/);
    expect(run.registrations.some((r) => r.type === "pulumi:pulumi:StackReference" && r.name === "organization/pulumi-fleet/local")).to.equal(true);
  });
});
