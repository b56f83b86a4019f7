/**
 * The reports (automation/reports/) are pure functions of the desired state, the engine's steps and the
 * outputs: what core decides reaches them as values (core/desired/report-facts.ts), so they import only
 * types from core, never one of its rules to apply a second time.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";

const ROOT = path.resolve(__dirname, "../..");
const REPORTS = path.join(ROOT, "automation", "reports");

/** "file: spec {names}" for each import from core that brings a value (not `import type`, not only `type` names). */
function valueImportsFromCore(file: string, text = fs.readFileSync(file, "utf8")): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  return source.statements.filter(ts.isImportDeclaration).flatMap((d) => {
    const spec = (d.moduleSpecifier as ts.StringLiteral).text;
    if (!path.resolve(path.dirname(file), spec).startsWith(path.join(ROOT, "core") + path.sep)) return [];
    const clause = d.importClause;
    if (!clause || clause.isTypeOnly) return clause ? [] : [`${spec} (side effects)`];
    const named = clause.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
    const values = [
      ...(clause.name ? [clause.name.text] : []),
      ...(clause.namedBindings && ts.isNamespaceImport(clause.namedBindings) ? ["*"] : []),
      ...(named ?? []).filter((e) => !e.isTypeOnly).map((e) => e.name.text),
    ];
    return values.length ? [`${path.relative(ROOT, file)}: ${spec} {${values.join(", ")}}`] : [];
  });
}

describe("reports import only types from core", () => {
  it("no file of automation/reports/ imports a value (a rule, a constant) from core/", () => {
    const files = fs
      .readdirSync(REPORTS)
      .filter((f) => f.endsWith(".ts"))
      .map((f) => path.join(REPORTS, f));
    expect(files.length).to.be.greaterThan(5);
    expect(files.flatMap((f) => valueImportsFromCore(f))).to.deep.equal([]);
  });

  it("would see one", () => {
    const text =
      'import { deploymentKey } from "../../core/model/keys";\nimport type { FleetState } from "../../core/plan/pipeline";\nimport { type Departure } from "../../core/desired/departures";\n';
    expect(valueImportsFromCore(path.join(REPORTS, "probe.ts"), text)).to.deep.equal(["automation/reports/probe.ts: ../../core/model/keys {deploymentKey}"]);
  });
});
