/**
 * The stack file's `healthChecks` (core/config/health-checks.ts): parsed and refused with the file and
 * field named; carried by every pair only when set (a stack without it registers what it did before);
 * its expressions compiled by the provider binary itself (core/config/health-check-compile.ts).
 */
import { expect } from "chai";
import { parseStackConfig } from "../../core/config/stack";
import { healthChecksInput } from "../../core/config/health-checks";
import { compileHealthChecks } from "../../core/config/health-check-compile";
import { desiredState } from "../../core/desired/state";
import { errorOf } from "../support/errors";
import { fakeFacts } from "../support/fake-facts";
import { localStack } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

const FILE = "stacks/Pulumi.test.yaml";
const parse = (raw: Record<string, unknown>) => parseStackConfig(raw, FILE, "/project");
const widget = { apiVersion: "example.com/v1", kind: "Widget", current: "status.phase == 'Running'" };

describe("healthChecks in the stack file", function () {
  this.timeout(120_000);

  it("reads each kind's expressions; absent or empty: no field at all", () => {
    const full = { ...widget, inProgress: "status.phase == 'Starting'", failed: "status.phase == 'Crashed'" };
    expect(parse({ healthChecks: [full, { apiVersion: "v1", kind: "Pod", current: "true" }] }).healthChecks).to.deep.equal([
      full,
      { apiVersion: "v1", kind: "Pod", current: "true" },
    ]);
    expect(parse({}).healthChecks).to.equal(undefined);
    expect(parse({ healthChecks: [] }).healthChecks).to.equal(undefined);
    expect(healthChecksInput(undefined)).to.deep.equal({});
    expect(healthChecksInput([widget])).to.deep.equal({ healthChecks: [widget] });
  });

  it("refuses a bad entry naming the file and field", () => {
    expect(errorOf(() => parse({ healthChecks: [{ apiVersion: "example.com/v1", kind: "Widget" }] }))).to.equal(
      `${FILE}: healthChecks[0].current: is required`,
    );
    expect(errorOf(() => parse({ healthChecks: [{ ...widget, apiVersion: "example.com" }] }))).to.contain(
      `${FILE}: healthChecks[0].apiVersion: must be <group>/<version> or <version>`,
    );
    expect(errorOf(() => parse({ healthChecks: [{ ...widget, kind: "widgets" }] }))).to.contain("healthChecks[0].kind: must be a kind's name");
    expect(errorOf(() => parse({ healthChecks: [widget, { ...widget, apiVersion: "example.com/v2" }] }))).to.equal(
      `${FILE}: healthChecks[1].kind: example.com/v2 Widget has health checks already at index 0 (one entry per group and kind)`,
    );
    expect(errorOf(() => parse({ healthChecks: [{ ...widget, failed: " " }] }))).to.equal(`${FILE}: healthChecks[0].failed: is empty`);
    expect(errorOf(() => parse({ healthChecks: [{ ...widget, healthy: "true" }] }))).to.contain("healthChecks[0].healthy: unknown field");
  });

  it("every bundle deployment carries the list when set, and nothing when not", async () => {
    const cacheRoot = tempDir("pf-cache-");
    const render = "/tmp/pulumi-fleet-render";
    const without = await desiredState(localStack(render), fakeFacts(), { cacheRoot });
    expect(without.deployments.every((d) => !("healthChecks" in d.spec))).to.equal(true);
    const withChecks = await desiredState({ ...localStack(render), healthChecks: [widget] }, fakeFacts(), { cacheRoot });
    expect(withChecks.deployments.map((d) => d.spec.healthChecks)).to.deep.equal(withChecks.deployments.map(() => [widget]));
    // Nothing else of a pair changes.
    expect(withChecks.deployments.map((d) => ({ ...d.spec, healthChecks: undefined }))).to.deep.equal(
      without.deployments.map((d) => ({ ...d.spec, healthChecks: undefined })),
    );
  });

  it("compiles the expressions with the provider's own CEL: a broken one names the file, field, kind and expression", () => {
    compileHealthChecks(FILE, [widget]);
    compileHealthChecks(FILE, undefined, () => {
      throw new Error("not run without checks");
    });
    const msg = errorOf(() =>
      compileHealthChecks(FILE, [widget, { apiVersion: "example.com/v1", kind: "Gadget", current: "true", failed: "status.phase ==" }]),
    );
    expect(msg).to.match(
      /^stacks\/Pulumi\.test\.yaml: health checks that do not compile \(CEL, as Flux's healthCheckExprs\):\n {2}healthChecks\[1\]\.failed: example\.com\/v1 Gadget: "status\.phase ==" does not compile: /,
    );
  });
});
