import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { parseCommand, UsageError } from "../../scripts/cli";

const ROOT = path.resolve(__dirname, "../..");
const run = (script: string, ...args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, "scripts/run-ts.js"), path.join(ROOT, script), ...args], {
    encoding: "utf8",
    cwd: ROOT,
    env: { ...process.env, PULUMI_CONFIG_PASSPHRASE: "x" },
  });

const SPEC = {
  usage: "t -- --stack NAME",
  summary: "test",
  positionals: ["OP"],
  options: {
    stack: { type: "string" as const, help: "s" },
    quiet: { type: "boolean" as const, help: "q" },
    label: { type: "string" as const, multiple: true, help: "l" },
  },
};

describe("the command line (one strict parser for every entry point)", () => {
  it("parses --opt value, --opt=value and repeated options", () => {
    expect(parseCommand(["up", "--stack", "prod"], SPEC).values.stack).to.equal("prod");
    expect(parseCommand(["up", "--stack=prod", "--quiet"], SPEC).values).to.deep.equal({ stack: "prod", quiet: true });
    expect(parseCommand(["up", "--label", "a=1", "--label=b=2"], SPEC).values.label).to.deep.equal(["a=1", "b=2"]);
  });

  it("refuses unknown options, missing values and stray positionals", () => {
    expect(() => parseCommand(["up", "--stak", "prod"], SPEC)).to.throw(UsageError, /--stak/);
    expect(() => parseCommand(["up", "--stack"], SPEC)).to.throw(UsageError, /--stack/);
    expect(() => parseCommand(["up", "prod"], SPEC)).to.throw(UsageError, /unexpected argument 'prod'/);
    expect(() => parseCommand([], SPEC)).to.throw(UsageError, /missing OP/);
  });

  it("fleet: a positional stack name is an error, not a silent preview of another stack", () => {
    const r = run("scripts/fleet.ts", "preview", "prod");
    expect(r.status).to.equal(2);
    expect(r.stderr).to.contain("unexpected argument 'prod'").and.contain("usage: npm run <preview|up|destroy|refresh|status|cancel> -- --stack NAME");
  });

  it("fleet: --stack is required, --stack=NAME works, and an option of another operation is refused", () => {
    const none = run("scripts/fleet.ts", "up");
    expect(none.status).to.equal(2);
    expect(none.stderr).to.contain("--stack is required");
    const eq = run("scripts/fleet.ts", "preview", "--stack=no-such-env");
    expect(eq.status).to.equal(1);
    expect(eq.stderr).to.contain("stack no-such-env: stacks/Pulumi.no-such-env.yaml not found");
    const wrong = run("scripts/fleet.ts", "preview", "--stack", "local", "--events-json", "x");
    expect(wrong.status).to.equal(2);
    expect(wrong.stderr).to.contain("--events-json does not apply to preview (only up, destroy)");
    const unknown = run("scripts/fleet.ts", "up", "--stack", "local", "--yes");
    expect(unknown.status).to.equal(2);
    expect(unknown.stderr).to.contain("Unknown option '--yes'");
  });

  it("plan --desired prints every object per cluster as up would apply it, without the engine or the clusters", () => {
    const r = run("scripts/plan.ts", "--stack", "local", "--desired");
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.contain("as for a new stack: no last outputs, no takeOwnership check, fleet-default not looked up");
    expect(r.stdout).to.match(/^cluster dev-1 \(rendered to .*\/dev-1\)\n  agent rancher\/fleet-agent:v0\.13\.1 config [0-9a-f]{12}\n/);
    expect(r.stdout).to.contain("  bundle examples-simple (GitRepo examples @ dir-").and.contain("    apps/v1 Deployment simple/hello\n");
    const json = JSON.parse(run("scripts/plan.ts", "--stack", "local", "--desired", "--json").stdout);
    expect(json.deployments.map((d: { key: string }) => d.key)).to.include("prod-1/examples/examples-simple");
  });

  for (const [script, words] of [
    ["scripts/fleet.ts", "--wait-lock"],
    ["scripts/render.ts", "--revision"],
    ["scripts/plan.ts", "--stack NAME"],
    ["scripts/clusters.ts", "--count N"],
    ["bench/run.ts", "--skip-checkpoints-only"],
    ["bench/git.ts", "--help"],
  ]) {
    it(`${script} --help prints its usage and options`, () => {
      const r = run(script, "--help");
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout)
        .to.match(/^usage: /)
        .and.contain(words);
    });
  }

  it("render, plan, clusters and bench refuse what they do not know", () => {
    expect(run("scripts/render.ts", "examples", "--bogus").status).to.equal(2);
    expect(run("scripts/render.ts", "examples", "other").stderr).to.contain("unexpected argument 'other'");
    expect(run("scripts/plan.ts").stderr).to.contain("--stack is required");
    expect(run("scripts/plan.ts", "--stack", "local", "--json").stderr).to.contain("--json goes with --desired");
    expect(run("scripts/clusters.ts", "down", "--count", "2").stderr).to.contain("--count applies to up only");
    expect(run("bench/run.ts", "plam").stderr).to.contain("unknown benchmark 'plam'");
  });
});
