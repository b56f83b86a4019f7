/**
 * `npm run validate`: a repository's fleet.yaml files checked and every bundle rendered for the stack's
 * clusters, offline (KUBECONFIG points nowhere readable), one line per problem as `file:line field: ...`.
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { CONFIGMAP, tempDir } from "../support/git-fixtures";
import { lineOfField } from "../../core/bundles/field-lines";

const ROOT = path.resolve(__dirname, "../..");
const validate = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, "scripts/run-ts.js"), path.join(ROOT, "scripts/validate.ts"), ...args], {
    encoding: "utf8",
    cwd: ROOT,
    // No credentials: a kubeconfig read would fail the run.
    env: { ...process.env, KUBECONFIG: "/nonexistent/kubeconfig" },
  });

function repo(files: Record<string, string>): string {
  const dir = tempDir("pf-validate-");
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe("validate command (offline)", () => {
  it("the examples render for the local stack's clusters as its GitRepo targets them; exit 0", () => {
    const out = validate("examples");
    expect(out.status, out.stdout + out.stderr).to.equal(0);
    expect(out.stderr).to.contain("validating as GitRepo examples of stacks/Pulumi.local.yaml");
    expect(out.stdout).to.match(/^3 bundles, 9 \(bundle, cluster\) renders of 3 clusters, \d+ objects, 0 problems/m);
  });

  it("each problem is one line naming file:line and field, a template error once for all its clusters; every other bundle renders; exit 1", () => {
    const dir = repo({
      "ok/cm.yaml": CONFIGMAP("ok"),
      "typo/fleet.yaml": "defaultNamespace: a\nhelm:\n  releaseName: 12\n",
      "typo/cm.yaml": CONFIGMAP("typo"),
      "deep/fleet.yaml": "targetCustomizations:\n  - name: t\n    yaml:\n      overlays: [1]\n",
      "deep/cm.yaml": CONFIGMAP("deep"),
      "syntax/fleet.yaml": "namespace: [x\n",
      "syntax/cm.yaml": CONFIGMAP("syntax"),
      "chart/fleet.yaml": "helm:\n  releaseName: chart\n  valuez: {}\n",
      "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
      "chart/templates/cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  x: {{ required "x is required" .Values.x }}\n',
    });
    const out = validate(dir, "--stack", "local", "--name", "vt");
    fs.rmSync(dir, { recursive: true, force: true });
    expect(out.status, out.stdout + out.stderr).to.equal(1);
    const lines = out.stdout.trim().split("\n");
    expect(lines).to.include(`${dir}/typo/fleet.yaml:3 helm.releaseName: must be a string (got number 12) (bundle vt-typo)`);
    expect(lines).to.include(`${dir}/deep/fleet.yaml:4 targetCustomizations[0].yaml.overlays[0]: must be a string (got number 1) (bundle vt-deep)`);
    expect(lines.find((l) => l.startsWith(`${dir}/syntax/fleet.yaml:`) && l.includes(": invalid YAML: Flow sequence"))).to.match(/fleet\.yaml:\d+: /);
    expect(lines).to.include(`${dir}/chart/fleet.yaml:3 helm.valuez: warning: unknown field, ignored as Fleet ignores it (bundle vt-chart)`);
    const template = lines.filter((l) => l.includes("x is required"));
    expect(template).to.have.length(1);
    expect(template[0]).to.contain("(bundle vt-chart, clusters dev-1, dev-2, prod-1)");
    expect(lines[lines.length - 1]).to.match(/^2 bundles, 3 \(bundle, cluster\) renders of 3 clusters, 3 objects, 4 problems/);
  });

  it("a repository the stack does not name is validated under its own name, so its bundles' dependsOn find each other", () => {
    // The corpus case: web depends on api, api on db, and db is targeted to prod only.
    const out = validate("test/corpus/depends-on-not-targeted");
    expect(out.status, out.stdout + out.stderr).to.equal(1);
    expect(out.stderr).to.contain("is not a GitRepo of stacks/Pulumi.local.yaml");
    expect(out.stdout).not.to.contain("not among the bundles read");
    expect(out.stdout).to.contain(
      "test/corpus/depends-on-not-targeted/api/fleet.yaml:2 dependsOn: dependsOn depends-on-not-targeted-db, which is not deployed to this cluster",
    );
    expect(out.stdout).to.match(/\(bundle depends-on-not-targeted-api, clusters dev-1, dev-2\)$/m);
  });

  it("a stack file's error names its line", () => {
    const stacks = path.join(ROOT, "stacks");
    const file = path.join(stacks, "Pulumi.validate-test.yaml");
    fs.writeFileSync(file, "config:\n  pulumi-fleet:clusters:\n    - name: a\n      lables: {}\n");
    try {
      const out = validate("examples", "--stack", "validate-test");
      expect(out.status).to.equal(1);
      expect(out.stderr).to.contain("stacks/Pulumi.validate-test.yaml:4: clusters[0].lables: unknown field");
    } finally {
      fs.rmSync(file);
    }
  });
});

describe("lineOfField: a reader's field path to its line in the YAML text", () => {
  const text = [
    "helm:", //                         1
    "  values:", //                     2
    "    app.kubernetes.io/name: x", // 3
    "targetCustomizations:", //         4
    "  - name: a", //                   5
    "  - name: b", //                   6
    "    Helm:", //                     7
    "      releaseName: 1", //          8
  ].join("\n");
  it("follows keys, list indexes, keys holding dots and keys matched without regard to case", () => {
    expect(lineOfField(text, "helm.values")).to.equal(2);
    expect(lineOfField(text, "helm.values.app.kubernetes.io/name")).to.equal(3);
    expect(lineOfField(text, "targetCustomizations[1]")).to.equal(6);
    expect(lineOfField(text, "targetCustomizations[1].helm.releaseName")).to.equal(8);
  });
  it("stops at the deepest part that exists; undefined for text that does not parse", () => {
    expect(lineOfField(text, "targetCustomizations[1].helm.chart")).to.equal(7);
    expect(lineOfField(text, "targetCustomizations[5].name")).to.equal(4);
    expect(lineOfField("a: [", "a")).to.equal(undefined);
  });
  it("parses only within the YAML budgets (the file an error names may be one only the renderer read)", () => {
    const deep = `a: ${"[".repeat(600)}${"]".repeat(600)}\nb: 1\n`; // nested past the YAML budget's 512 levels (DEFAULT_YAML_BUDGET.depth)
    expect(lineOfField(deep, "b")).to.equal(undefined);
    expect(lineOfField(`${"x: 1\n".repeat(10)}b: 1\n`, "b"), "within the budgets").to.equal(11);
  });
});
