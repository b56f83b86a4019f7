/**
 * An `up` that only removes pairs runs as the engine's targeted update of them
 * (automation/operation/prune-only.ts) and leaves exactly the state the full update leaves: two stacks
 * of the same fleet (real engine, render mode), one taking the prune-only update and one told to run in
 * full, compared resource by resource and output by output after a target edit, after a second removal,
 * and after the targets come back (a full update again).
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { checkpointInFiles } from "../../automation/engine/checkpoint-file";
import { StackConfig } from "../../core/config/stack";
import { localStack, withoutProdTarget } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

describe("prune-only updates: the same state as the full update (real engine, render mode)", function () {
  this.timeout(10 * 60_000);
  const work = tempDir("pf-prune-only-");
  const stateDir = path.join(work, "state");
  fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
  const options = (stack: string, config: StackConfig, full: boolean): ops.OperationOptions => ({
    stack,
    stateDir,
    stackConfigDir: path.join(work, "stacks"),
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "prune" },
    ...(full ? { pruneOnly: false } : {}),
  });
  // Each stack renders into its own directory, named alike so the two states compare.
  const config = (stack: string, edit: (c: StackConfig) => StackConfig = (c) => c) => edit(localStack(path.join(work, stack, "render")));
  // Out of the `dev` cluster group (env: dev) by its label.
  const withoutDev2 = (c: StackConfig): StackConfig => ({
    ...c,
    clusters: c.clusters.map((x) => (x.name === "dev-2" ? { ...x, labels: { ...x.labels, env: "none" } } : x)),
  });
  const both = async (edit?: (c: StackConfig) => StackConfig) => ({
    pruned: await ops.up(options("pruned", config("pruned", edit), false)),
    full: await ops.up(options("full", config("full", edit), true)),
  });

  /** The stack's checkpoint, with what differs by name or by time alone made equal: its name, provider IDs, times (the records' deployedAt too), source positions, each stack's own encryption of a secret. */
  function normalized(stack: string): Record<string, unknown> {
    const resources = checkpointInFiles(stateDir, stack);
    if (!Array.isArray(resources)) throw new Error(`no checkpoint for ${stack}`);
    const text = JSON.stringify(resources)
      .replaceAll(`urn:pulumi:${stack}::`, "urn:pulumi:STACK::")
      .replaceAll(`fleet:${stack}`, "fleet:STACK")
      .replaceAll(`pulumi-fleet-${stack}`, "pulumi-fleet-STACK")
      .replaceAll(`organization/pulumi-fleet/${stack}`, "organization/pulumi-fleet/STACK")
      .replaceAll(path.join(work, stack), "WORK")
      .replace(/"\d{4}-\d\d-\d\dT[\d:.]+Z"/g, '"TIME"')
      .replace(/"ciphertext":"[^"]*"/g, '"ciphertext":"SECRET"')
      .replace(/::[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"/g, '::ID"');
    const out: Record<string, unknown> = {};
    for (const r of JSON.parse(text) as Record<string, unknown>[]) {
      const { created: _c, modified: _m, stackTrace: _t, sourcePosition: _p, ...rest } = r;
      if (String(rest.type).startsWith("pulumi:providers:")) delete rest.id;
      // A set: the engine keeps a create's order and writes a later registration's in another.
      if (Array.isArray(rest.dependencies)) rest.dependencies = [...(rest.dependencies as string[])].sort();
      out[String(rest.urn)] = rest;
    }
    return out;
  }
  const expectSameState = () => {
    const [pruned, full] = [normalized("pruned"), normalized("full")];
    expect(Object.keys(pruned).sort()).to.deep.equal(Object.keys(full).sort());
    for (const urn of Object.keys(full)) expect(pruned[urn], urn).to.deep.equal(full[urn]);
  };

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
  });

  it("the first up and a no-op run in full on both", async () => {
    for (const r of Object.values(await both())) expect(r.pruneOnly).to.equal(undefined);
    for (const r of Object.values(await both())) {
      expect(r.pruneOnly).to.equal(undefined);
      expect(r.changes).to.not.have.any.keys("create", "update", "delete");
    }
    expectSameState();
  });

  it("a target edit that drops a cluster is pruned alone, to the full update's state", async () => {
    const { pruned, full } = await both(withoutProdTarget);
    expect(pruned.pruneOnly).to.deep.equal({ pairs: 3, setups: 1 });
    expect(full.pruneOnly).to.equal(undefined);
    expect(pruned.changes.delete).to.equal(full.changes.delete).and.be.greaterThan(0);
    expect(pruned.changes.update).to.equal(full.changes.update);
    expect(pruned.events.map((e) => `${e.event} ${e.bundle} ${e.cluster}`).sort()).to.deep.equal(
      full.events.map((e) => `${e.event} ${e.bundle} ${e.cluster}`).sort(),
    );
    expectSameState();
  });

  it("a second removal (a cluster's label edited) is pruned alone too", async () => {
    const { pruned, full } = await both((c) => withoutDev2(withoutProdTarget(c)));
    expect(pruned.pruneOnly).to.deep.equal({ pairs: 3, setups: 1 });
    expect(full.changes.delete).to.be.greaterThan(0);
    expectSameState();
  });

  it("after an up that left a cluster out (its pairs kept their inputs), the next removal runs in full", async () => {
    const leftOut = (stack: string, edit?: (c: StackConfig) => StackConfig) =>
      ops.up({ ...options(stack, config(stack, edit), stack === "full"), deploy: { cacheRoot: path.join(work, "git-cache"), leftOut: new Set(["dev-1"]) } });
    await leftOut("pruned");
    await leftOut("full");
    const { pruned } = await both(withoutProdTarget);
    expect(pruned.pruneOnly).to.equal(undefined);
    expect(pruned.changes.delete).to.be.greaterThan(0);
    expectSameState();
  });

  it("the targets back: a full update on both, and the same state again", async () => {
    const { pruned } = await both();
    expect(pruned.pruneOnly).to.equal(undefined);
    expect(pruned.changes.create).to.be.greaterThan(0);
    expectSameState();
  });
});
