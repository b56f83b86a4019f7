/**
 * A state written before each render was kept once (issue 57): the version before it (its own code, a
 * `git archive` run in a child process, as test/e2e/upgrade-from-previous.test.ts runs earlier ones)
 * deploys the example fleet in render mode, its pairs holding their manifests; this version's first
 * `up` on that state is a "same" for every pair and a create of each BundleContent, and nothing is
 * applied: no rendered file is written again. The state then holds each render once, and a further
 * preview changes nothing.
 */
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { EngineEvent } from "@pulumi/pulumi/automation";
import * as ops from "../../automation/operations";
import { openStack } from "../../automation/engine/stack";
import { toolchain } from "../../automation/engine/toolchain";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { BUNDLE_CONTENT_TYPE, BUNDLE_DEPLOYMENT_TYPE } from "../../core/desired/types";
import { localStack } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

/** The last commit whose pairs hold their manifests. */
const BEFORE_CONTENTS = "1492a5d";

const OLD_UP_SCRIPT = `
import * as fs from "node:fs";
import * as ops from "./automation/operations";
const [optionsFile] = process.argv.slice(2);
ops.up(JSON.parse(fs.readFileSync(optionsFile, "utf8"))).catch((e) => { console.error(e); process.exit(1); });
`;

/** Each rendered file with its modification time and text: an apply in render mode writes the file again. */
function renderedFiles(dir: string): Record<string, string> {
  const files = (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(".yaml")).sort();
  return Object.fromEntries(files.map((f) => [f, `${fs.statSync(path.join(dir, f)).mtimeMs} ${fs.readFileSync(path.join(dir, f), "utf8")}`]));
}

describe("upgrade to one content per render (render mode): nothing applied", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-content-upgrade-");
  const oldTree = path.join(work, "previous");
  const renderDir = path.join(work, "render");
  const options = (extra: Partial<ops.OperationOptions> = {}): ops.OperationOptions => ({
    stack: "content-upgrade",
    stateDir: path.join(work, "state"),
    stackConfigDir: path.join(work, "stacks"),
    config: localStack(renderDir),
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: "content-upgrade" },
    ...extra,
  });
  const resources = async () => ((await (await openStack(options())).exportStack()).deployment?.resources ?? []) as any[];
  let filesBefore: Record<string, string>;

  before(async function () {
    this.timeout(30 * 60_000);
    toolchain();
    fs.mkdirSync(oldTree);
    fs.mkdirSync(path.join(work, "stacks"));
    const tar = path.join(work, "previous.tar");
    execFileSync("git", ["-C", PROJECT_DIR, "archive", "--format=tar", "-o", tar, BEFORE_CONTENTS]);
    execFileSync("tar", ["-xf", tar, "-C", oldTree]);
    fs.symlinkSync(path.join(PROJECT_DIR, "node_modules"), path.join(oldTree, "node_modules"));
    fs.writeFileSync(path.join(oldTree, "old-up.ts"), OLD_UP_SCRIPT);
    const optionsFile = path.join(work, "options.json");
    fs.writeFileSync(optionsFile, JSON.stringify(options()));
    const log = path.join(work, "previous-up.log");
    await new Promise<void>((resolve, reject) => {
      const out = fs.openSync(log, "a");
      const child = spawn(process.execPath, [path.join(oldTree, "scripts/run-ts.js"), "old-up.ts", optionsFile], { cwd: oldTree, stdio: ["ignore", out, out] });
      child.on("error", reject);
      child.on("exit", (code) =>
        code === 0 ? resolve() : reject(new Error(`the previous version's up failed:\n${fs.readFileSync(log, "utf8").slice(-4000)}`)),
      );
    });
  });

  after(() => (process.env.KEEP_WORK ? console.log(work) : fs.rmSync(work, { recursive: true, force: true })));

  it("the previous version's pairs hold their manifests", async () => {
    const pairs = (await resources()).filter((r) => r.type === BUNDLE_DEPLOYMENT_TYPE);
    expect(pairs).to.have.length(9);
    for (const p of pairs)
      expect(
        Object.values(p.inputs.objects as Record<string, { manifest?: string }>).every((o) => typeof o.manifest === "string"),
        p.urn,
      ).to.equal(true);
    filesBefore = renderedFiles(renderDir);
    expect(Object.keys(filesBefore).length).to.be.greaterThan(9);
  });

  it("this version's up: every pair the same, one content created per render, no file written again; the next preview changes nothing", async () => {
    const stepsByType: Record<string, string[]> = {};
    const onEvent = (e: EngineEvent) => {
      const m = e.resourcePreEvent?.metadata;
      if (m) (stepsByType[m.type] ??= []).push(m.op);
    };
    const sizeBefore = JSON.stringify(await resources()).length;
    await ops.up(options({ onEvent }));
    expect(stepsByType[BUNDLE_DEPLOYMENT_TYPE]).to.have.length(9);
    expect([...new Set(stepsByType[BUNDLE_DEPLOYMENT_TYPE])], "the pairs' steps").to.deep.equal(["same"]);
    expect([...new Set(stepsByType[BUNDLE_CONTENT_TYPE])], "the contents' steps").to.deep.equal(["create"]);
    expect(renderedFiles(renderDir), "no rendered file written again").to.deep.equal(filesBefore);

    const after = await resources();
    const contents = after.filter((r) => r.type === BUNDLE_CONTENT_TYPE);
    // dev-1 and dev-2 render two of the example bundles alike (helm's values name the cluster): fewer contents than pairs.
    expect(contents.length).to.equal(7);
    for (const p of after.filter((r) => r.type === BUNDLE_DEPLOYMENT_TYPE)) {
      expect(
        contents.map((c) => c.urn.split("::").pop()),
        p.urn,
      ).to.include(p.inputs.content);
      expect(
        Object.values(p.inputs.objects as Record<string, { manifest?: string }>).some((o) => o.manifest !== undefined),
        p.urn,
      ).to.equal(false);
    }
    // Three clusters are too few for the sharing to outweigh each pair's digests: the size is bench/engine.ts's (200 clusters).
    console.log(`      state (exported JSON) ${sizeBefore} -> ${JSON.stringify(after).length} bytes; ${contents.length} contents for 9 pairs`);
    await ops.preview(options({ expectNoChanges: true }));
  });
});
