/**
 * How failures reach the user (automation/reports/error-report.ts): one clear text per failure, no stack trace,
 * no "Unhandled exception", no Automation API command dump, no tool-cache path; the details in a log file
 * whose path is printed, the newest MAX_LOGS kept. And the quiet/verbose rule of the toolchain's build
 * scripts: a warm start prints nothing, --verbose or PULUMI_FLEET_VERBOSE=1 prints what was reused.
 */
import { expect } from "chai";
import { execFile, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { CommandError } from "@pulumi/pulumi/automation";
import {
  CliFailure,
  engineFailureText,
  MAX_LOGS,
  reportFailure,
  userText,
  withoutToolPaths,
  worded,
  writeFailureLog,
} from "../../automation/reports/error-report";
import { FleetError } from "../../core/base/errors";
import { tempDir } from "../support/git-fixtures";

const ROOT = path.resolve(__dirname, "../..");
const CLI = "/root/.cache/pulumi-fleet/tools/proc-guard-e5a1681ce48ea810/cli-c4e4c5249b71/bin/pulumi";

/** A CommandError as the Automation API makes it (its constructor is internal to the SDK). */
function commandError(stderr: string, stdout = "", code = 1): CommandError {
  const err = new Error(`Command failed with exit code ${code}: ${CLI} up --yes --stack s`);
  const result = { stdout, stderr, code, err, toString: () => `code: ${code}\n stdout: ${stdout}\n stderr: ${stderr}\n err?: ${err}\n` };
  return new (CommandError as unknown as new (r: unknown) => CommandError)(result);
}

/** What must never reach the user's text. */
function expectClean(text: string): void {
  expect(text).to.not.match(/\n\s+at /); // a stack trace
  expect(text).to.not.contain("Unhandled exception");
  expect(text).to.not.match(/Command failed|err\?:|stdout:|stderr:|code: -?\d/);
  expect(text).to.not.contain("/.cache/");
  expect(text).to.not.contain("pulumi-fleet/tools");
}

describe("failures, as the user reads them", () => {
  it("a wrong passphrase says so in one line, from the Automation API and from a CLI run of our own", () => {
    const stderr =
      "error: could not deserialize deployment: failed to decrypt: incorrect passphrase, please set PULUMI_CONFIG_PASSPHRASE to the correct passphrase\n";
    const execFileError = Object.assign(new Error(`Command failed: ${CLI} stack export --show-secrets --stack local\n${stderr}`), {
      cmd: `${CLI} stack export`,
      stderr,
      stdout: "",
      code: 1,
    });
    for (const err of [commandError(stderr), execFileError, worded(execFileError, "stack local")]) {
      const text = userText(err, { op: "up", stack: "local" });
      expect(text).to.equal(
        "error: stack local: wrong passphrase: PULUMI_CONFIG_PASSPHRASE (or the file PULUMI_CONFIG_PASSPHRASE_FILE names) does not decrypt this stack's secrets",
      );
      expectClean(text);
    }
  });

  it("an engine failure says what the program or the engine said, once, without the command dump", () => {
    const dump = commandError(`Command failed with exit code 1: ${CLI} up --yes\nUpdating (bad):\n\nDiagnostics:\n`, "Updating (bad):\n");
    const guard = new FleetError("targets: matched 3 cluster(s) in the last deployment and matches none now", { gitRepo: "examples" });
    expect(engineFailureText(dump, [], guard)).to.equal("gitRepo examples: targets: matched 3 cluster(s) in the last deployment and matches none now");
    // Without the program's own error: the engine's error diagnostics, each once, named by their resource.
    const diagnostics = [
      {
        urn: "urn:pulumi:bad::pulumi-fleet::pulumi:pulumi:Stack::pulumi-fleet-bad",
        message: "Unhandled exception: FleetError: gitRepo examples: no clusters\n",
      },
      { urn: "urn:pulumi:bad::pulumi-fleet::pulumi:pulumi:Stack::pulumi-fleet-bad", message: "gitRepo examples: no clusters\n" },
      {
        urn: "urn:pulumi:bad::pulumi-fleet::pulumi-fleet:index:Cluster$pulumi-fleet:index:ClusterSetup::prod-3",
        message: "<{%reset%}>the API server refused: forbidden<{%reset%}>\n",
      },
      { message: "update failed" },
    ];
    const why = engineFailureText(dump, diagnostics);
    expect(why).to.equal("gitRepo examples: no clusters\nprod-3: the API server refused: forbidden");
    // Nothing reported but the CLI's own words: its error lines, tool paths cut to the tool's name.
    expect(engineFailureText(commandError(`Command failed with exit code 255: ${CLI} up\nerror: ${CLI}-language-nodejs exited\n`))).to.equal(
      "pulumi-language-nodejs exited",
    );
    const failed = worded(dump, "up of stack bad failed", diagnostics);
    expect(failed).to.be.instanceOf(CliFailure);
    const text = userText(failed, { op: "up", stack: "bad" });
    expect(text.split("\n")).to.deep.equal(["error: up of stack bad failed: gitRepo examples: no clusters", "prod-3: the API server refused: forbidden"]);
    expectClean(text);
  });

  it("a FleetError says where, a plain error of ours says what it says", () => {
    const err = new FleetError("unknown field; valid fields are: name, repo", { file: "stacks/Pulumi.bad.yaml", field: "gitRepos[0].bogus" });
    expect(userText(err)).to.equal("error: stacks/Pulumi.bad.yaml: gitRepos[0].bogus: unknown field; valid fields are: name, repo");
    expect(userText(new Error("stack dev: stacks/Pulumi.dev.yaml not found"))).to.equal("error: stack dev: stacks/Pulumi.dev.yaml not found");
  });

  it("an unexpected error is named so, its first line only", () => {
    const err = new TypeError("Cannot read properties of undefined (reading 'name')\nmore");
    const text = userText(err, { op: "status", stack: "prod" });
    expect(text).to.equal("error: unexpected error in status of stack prod: TypeError: Cannot read properties of undefined (reading 'name')");
    expectClean(text);
    expect(userText("a string thrown")).to.equal("error: unexpected error: a string thrown");
  });

  it("every failure names a log with its details: the stack trace, the causes and the CLI's output", () => {
    const dir = tempDir("pf-errlog-");
    const cause = commandError(`Command failed with exit code 1: ${CLI} up\nerror: boom\n`, "engine said things\n");
    for (const err of [new TypeError("x is undefined"), new FleetError("bad", { cluster: "prod-3" }), worded(cause, "up of stack s failed")]) {
      const printed = reportFailure(err, { op: "up", stack: "s" }, dir);
      const [line, details, ...rest] = printed.split("\n");
      expect(rest).to.deep.equal([]);
      expectClean(line);
      const log = /^details: (.*\.log)$/.exec(details)?.[1];
      expect(log && path.dirname(log)).to.equal(dir);
      const text = fs.readFileSync(log!, "utf8");
      expect(text).to.contain(line).and.contain("operation: up").and.contain("stack: s");
      expect(text).to.match(/\n\s+at /); // the stack trace is kept here
      if (err instanceof CliFailure) expect(text).to.contain("engine said things").and.contain(CLI);
    }
  });

  it("keeps the newest logs only", () => {
    const dir = tempDir("pf-errlog-");
    for (let i = 0; i < MAX_LOGS + 3; i++) writeFailureLog(dir, new Error(`failure ${i}`), { op: "up" }, new Date(Date.UTC(2026, 0, 1, 0, 0, i)));
    const left = fs.readdirSync(dir).sort();
    expect(left).to.have.length(MAX_LOGS);
    expect(fs.readFileSync(path.join(dir, left[0]), "utf8")).to.contain("failure 3");
  });

  it("cuts tool-cache paths to the tool's name", () => {
    expect(withoutToolPaths(`${CLI} stack export; /home/u/.cache/pulumi-fleet/tools/fleet-render-0123/fleet-render failed`)).to.equal(
      "pulumi stack export; fleet-render failed",
    );
  });
});

describe("toolchain details only on request (--verbose, PULUMI_FLEET_VERBOSE=1) or when something is built", function () {
  this.timeout(10 * 60_000);
  const env = { ...process.env, PULUMI_FLEET_VERBOSE: "" };
  const run = promisify(execFile);

  it("a warm build script prints nothing; with --verbose or PULUMI_FLEET_VERBOSE=1 what it reused", async () => {
    await run("bash", ["tools/build-pulumi.sh"], { cwd: ROOT, env }); // warm (a cold build reports its progress)
    const quiet = await run("bash", ["tools/build-pulumi.sh", "--env"], { cwd: ROOT, env });
    expect(quiet.stderr).to.equal("");
    expect(quiet.stdout).to.contain("export PULUMI_HOME=");
    for (const verbose of [["--verbose"], []]) {
      const r = await run("bash", ["tools/build-pulumi.sh", ...verbose], { cwd: ROOT, env: { ...env, PULUMI_FLEET_VERBOSE: verbose.length ? "" : "1" } });
      expect(r.stderr).to.contain("pulumi-fleet engine").and.contain("[reused]");
    }
    const render = spawnSync("bash", ["tools/build-render.sh", "--path"], { cwd: ROOT, env: { ...env, PULUMI_FLEET_VERBOSE: "1" }, encoding: "utf8" });
    expect(render.stderr).to.match(/^build-render: reusing \S+fleet-render\n$/);
  });

  it("setup.sh hands --verbose among the command's arguments to the build scripts", () => {
    const probe = ["bash", "-c", 'printf %s "$PULUMI_FLEET_VERBOSE"', "probe"];
    const quiet = spawnSync("bash", ["scripts/setup.sh", ...probe], { cwd: ROOT, env, encoding: "utf8" });
    expect([quiet.status, quiet.stderr, quiet.stdout]).to.deep.equal([0, "", ""]);
    const verbose = spawnSync("bash", ["scripts/setup.sh", ...probe, "--verbose"], { cwd: ROOT, env, encoding: "utf8" });
    expect([verbose.status, verbose.stdout]).to.deep.equal([0, "1"]);
    expect(verbose.stderr).to.contain("pulumi-fleet engine").and.contain("build-guard: reusing");
  });
});
