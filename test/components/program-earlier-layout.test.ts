/**
 * A plain `pulumi up` (the program reading its own last outputs, components/program.ts) on a stack an
 * earlier version deployed stops before registering anything: only the operations' `up` migrates the
 * state (core/migrate), and the program computes the desired state from the current layout only.
 */
import { expect } from "chai";
import { fleetProgram } from "../../components/program";
import { localStack } from "../support/fleet-fixtures";
import { runUnderMocks } from "../support/mock-engine";

const summary = { gitRepos: { examples: { commit: "c", clusters: ["dev-1"] } }, clusters: { "dev-1": [] } };
const record = { deploymentId: "s-1:a", gitRepo: "examples", bundle: "simple", cluster: "dev-1" };

async function plainUp(stackOutputs: Record<string, unknown>): Promise<{ error?: Error; registered: string[] }> {
  let error: Error | undefined;
  const run = await runUnderMocks(
    () =>
      fleetProgram(localStack("/tmp/pulumi-fleet-earlier-layout-test"), {}).catch((e: Error) => {
        error = e;
      }),
    { stack: "local", stackOutputs },
  );
  return { error, registered: run.registrations.map((r) => r.type).filter((t) => t !== "pulumi:pulumi:StackReference") };
}

describe("a plain `pulumi up` on an earlier version's state (components/program.ts)", function () {
  this.timeout(60_000);

  for (const [layout, outputs] of [
    ["one resource per object (no deploymentStates)", { summary, deployments: { "dev-1/simple": record } }],
    ["pairs named without their GitRepo", { summary, deployments: { "dev-1/simple": record }, deploymentStates: { "dev-1/simple": { state: "Ready" } } }],
  ] as const) {
    it(`stops before registering anything, naming the stack file and \`npm run up\`: ${layout}`, async () => {
      const { error, registered } = await plainUp(outputs);
      expect(error?.message).to.match(/stacks\/Pulumi\.local\.yaml.*earlier version of pulumi-fleet.*`npm run up` migrates/s);
      expect(registered).to.deep.equal([]);
    });
  }

  it("outputs of the current layout pass the guard", async () => {
    const current = { "dev-1/examples/simple": record };
    const { error } = await plainUp({ summary, deployments: current, deploymentStates: { "dev-1/examples/simple": { state: "Ready" } } });
    expect(error?.message ?? "").to.not.match(/earlier version of pulumi-fleet/);
  });
});
