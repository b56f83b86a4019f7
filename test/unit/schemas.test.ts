/**
 * The JSON Schemas (schemas/*.json) are generated from the readers' field tables: the committed files
 * are what the tables generate; a real validator (ajv) and the readers agree on every fleet.yaml of
 * examples/ and test/corpus/ and on every stack file; a wrong type at any field is refused by both;
 * and every field of Fleet's published fleet.yaml schema is ours, refused, or listed as not read.
 */
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import * as os from "node:os";
import * as fs from "node:fs";
import * as path from "node:path";
import Ajv from "ajv";
import * as YAML from "yaml";
import { fleetYamlSchema, schemaTexts, stackSchema } from "../../core/schema/schemas";
import { FieldTable, FieldType } from "../../core/config/field-table";
import { FLEET_FIELDS_NOT_READ, FLEET_YAML_FIELDS } from "../../core/config/fleetyaml-fields";
import { parseFleetYaml } from "../../core/bundles/fleetyaml";
import { parseYamlDocuments } from "../../core/base/yaml-documents";
import { configFromStackFile, parseStackConfig } from "../../core/config/stack";
import { STACK_FIELDS } from "../../core/config/stack-fields";
import { FleetError } from "../../core/base/errors";
import { coverage } from "../support/schema-paths";

const ROOT = path.resolve(__dirname, "../..");
const FLEET_FIELDS = path.join(ROOT, "test/fleet-schema/fleet-yaml-fields.json");
/** Fleet v0.16.0's FleetYAML field paths, from its Go types' json tags (test/fleet-schema/go-fields). */
const FLEET_GO_FIELDS = path.join(ROOT, "test/fleet-schema/fleet-v0.16.0-go-fields.txt");
/** Fleet's API types as a Go module, from the Go module proxy (as tools/build-fleet.sh fetches it, same checksum). */
const FLEET_APIS_MODULE = "github.com/rancher/fleet/pkg/apis@v0.16.0";
const FLEET_APIS_SUM = "h1:M1O9JjqInoAVT+rjG8K56eywhwDtMYfiSS1ImNEg9PQ=";

function fleetYamlFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const at = path.join(dir, e.name);
    if (e.isDirectory()) return fleetYamlFiles(at);
    return /^fleet\.ya?ml$/.test(e.name) ? [at] : [];
  });
}

/** What the reader says of a document: refused (its error), warned (a key it does not know or matched by case), or clean. */
function readerVerdict(doc: unknown, file: string): "clean" | "warned" | FleetError {
  try {
    const fy = parseFleetYaml(structuredClone(doc), file);
    return fy.unhonoured.some((w) => /unknown field|without regard to case/.test(w)) ? "warned" : "clean";
  } catch (err) {
    if (err instanceof FleetError) return err;
    throw err;
  }
}

describe("JSON Schemas generated from the readers' field tables", () => {
  const ajv = new Ajv({ allErrors: true });
  const validFleetYaml = ajv.compile(fleetYamlSchema());
  const validStack = ajv.compile(stackSchema());

  it("the committed schemas/*.json are what the tables generate (npm run schemas writes them)", () => {
    for (const [file, text] of Object.entries(schemaTexts())) {
      expect(fs.readFileSync(path.join(ROOT, file), "utf8"), `${file} is stale: run npm run schemas`).to.equal(text);
    }
  });

  it("every fleet.yaml of examples/ and test/corpus/: the schema (ajv) accepts it exactly when the reader reads it without a warning about its keys", () => {
    const files = [...fleetYamlFiles(path.join(ROOT, "examples")), ...fleetYamlFiles(path.join(ROOT, "test/corpus"))];
    expect(files.length).to.be.greaterThan(10);
    const verdicts = files.flatMap((file) => {
      const rel = path.relative(ROOT, file);
      let doc: unknown;
      try {
        doc = parseYamlDocuments(fs.readFileSync(file, "utf8"), rel)[0] ?? {};
      } catch {
        return []; // a corpus case of YAML that cannot be read (a merge left a list unclosed): no schema applies
      }
      const schemaValid = validFleetYaml(structuredClone(doc)) as boolean;
      const verdict = readerVerdict(doc, rel);
      expect(verdict, `${rel}: the reader refuses it: ${verdict instanceof FleetError ? verdict.message : ""}`).not.to.be.instanceOf(FleetError);
      expect(schemaValid, `${rel}: schema ${schemaValid ? "accepts" : `refuses (${ajv.errorsText(validFleetYaml.errors)})`}, reader says ${verdict}`).to.equal(
        verdict === "clean",
      );
      return [{ rel, schemaValid }];
    });
    expect(verdicts.length).to.be.greaterThan(10);
    for (const v of verdicts.filter((x) => x.rel.startsWith("examples/"))) expect(v.schemaValid, v.rel).to.equal(true);
    // The corpus holds Fleet's case-insensitive keys: the schema flags them as an editor should.
    expect(verdicts.some((v) => !v.schemaValid)).to.equal(true);
  });

  it("a wrong type at any field of fleet.yaml is refused by both the schema and the reader, at that field", () => {
    const cases = wrongTypeCases(FLEET_YAML_FIELDS);
    expect(cases.length).to.be.greaterThan(80);
    const disagree: string[] = [];
    for (const { field, doc } of cases) {
      const schemaValid = validFleetYaml(structuredClone(doc));
      const verdict = readerVerdict(doc, "fleet.yaml");
      const readerField = verdict instanceof FleetError ? verdict.context.field : undefined;
      if (schemaValid || readerField !== field) disagree.push(`${field}: schema ${schemaValid ? "accepts" : "refuses"}, reader ${readerField ?? verdict}`);
    }
    expect(disagree).to.deep.equal([]);
  });

  it("every stack file of stacks/: the schema (ajv) accepts it and the reader reads it; an unknown key is refused by both", () => {
    const files = fs.readdirSync(path.join(ROOT, "stacks")).filter((f) => /^Pulumi\..+\.yaml$/.test(f));
    expect(files.length).to.be.greaterThan(2);
    for (const f of files) {
      const doc = YAML.parse(fs.readFileSync(path.join(ROOT, "stacks", f), "utf8"));
      expect(validStack(doc), `${f}: ${ajv.errorsText(validStack.errors)}`).to.equal(true);
      expect(() => parseStackConfig(configFromStackFile(doc, f), f, ROOT)).not.to.throw();
      const typo = structuredClone(doc);
      typo.config["pulumi-fleet:cluster"] = [];
      expect(validStack(typo), `${f} with a typo`).to.equal(false);
      typo.config["pulumi-fleet:clusters"][0].lables = {};
      delete typo.config["pulumi-fleet:cluster"];
      expect(validStack(typo), `${f} with a typo in a cluster`).to.equal(false);
      expect(() => parseStackConfig(configFromStackFile(typo, f), f, ROOT)).to.throw(/clusters\[0\]\.lables: unknown field/);
    }
  });

  it('a top-level whole number as the CLI writes it back (`5` as `"5"`) is accepted by both; text is refused by both', () => {
    const keys = Object.entries(STACK_FIELDS)
      .filter(([, def]) => def.type.kind === "configInteger")
      .map(([key]) => key);
    expect(keys).to.include.members(["clustersPerShard", "stalledAfter"]);
    const clusters = [{ name: "a" }];
    for (const key of keys) {
      for (const [value, valid] of [
        [5, true],
        ["5", true],
        ["five", false],
        [" 5", false],
        ["5.0", false],
        ["1e1", false],
      ] as const) {
        const schemaValid = validStack({ config: { [`pulumi-fleet:${key}`]: value } });
        const readerValid = (() => {
          try {
            parseStackConfig({ clusters, [key]: value }, "stack", ROOT);
            return true;
          } catch {
            return false;
          }
        })();
        expect([key, value, schemaValid, readerValid]).to.deep.equal([key, value, valid, valid]);
      }
    }
  });

  it("a wrong type at any top-level key of the stack file is refused by both the schema and the reader, at that key", () => {
    const disagree: string[] = [];
    for (const [key, def] of Object.entries(STACK_FIELDS)) {
      const wrong = def.type.kind === "string" ? 12 : def.type.kind === "list" ? "text" : ["a list"];
      const schemaValid = validStack({ config: { [`pulumi-fleet:${key}`]: wrong } });
      let field: string | undefined;
      try {
        parseStackConfig({ [key]: wrong }, "stack", ROOT);
      } catch (err) {
        field = (err as FleetError).context?.field;
      }
      if (schemaValid || field !== key) disagree.push(`${key}: schema ${schemaValid ? "accepts" : "refuses"}, reader ${field ?? "accepts"}`);
    }
    expect(disagree).to.deep.equal([]);
  });

  it("every field of Fleet's published fleet.yaml schema and of its v0.16.0 Go types is ours, kept as data, refused, or listed as not read", () => {
    const { paths } = JSON.parse(fs.readFileSync(FLEET_FIELDS, "utf8")) as { paths: string[] };
    const goPaths = fs.readFileSync(FLEET_GO_FIELDS, "utf8").trim().split("\n");
    for (const list of [paths, goPaths]) {
      expect(list).to.include.members(["helm.chart", "targetCustomizations[].helm.values", "rolloutStrategy.partitions[].maxUnavailable"]);
      const uncovered = list.filter(
        (p) => coverage(FLEET_YAML_FIELDS, p) === "missing" && !p.split(/\[\]\.|\./).some((k) => k.replace("[]", "") in FLEET_FIELDS_NOT_READ),
      );
      expect(uncovered).to.deep.equal([]);
    }
    // Each field listed as not read is one of Fleet's, and not one of ours.
    for (const key of Object.keys(FLEET_FIELDS_NOT_READ)) {
      expect(
        [...paths, ...goPaths].some((p) => p === key || p.endsWith(`.${key}`)),
        key,
      ).to.equal(true);
      expect(FLEET_YAML_FIELDS, key).not.to.have.property(key);
    }
  });

  it("the committed list of Fleet v0.16.0's Go fields is what its Go types say (the module github.com/rancher/fleet/pkg/apis@v0.16.0)", function () {
    this.timeout(300_000);
    const goEnv = { ...process.env, GOTOOLCHAIN: "local", GOWORK: "off", GOFLAGS: "-mod=mod" };
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pf-fleet-apis-"));
    try {
      fs.writeFileSync(path.join(scratch, "go.mod"), "module scratch\n\ngo 1.22\n");
      const mod = JSON.parse(execFileSync("go", ["mod", "download", "-json", FLEET_APIS_MODULE], { cwd: scratch, env: goEnv, encoding: "utf8" }));
      // The same zip tools/build-fleet.sh pins (apis_sum): a changed module fails here.
      expect(mod.Sum).to.equal(FLEET_APIS_SUM);
      const out = execFileSync("go", ["run", ".", path.join(mod.Dir, "fleet.cattle.io/v1alpha1")], {
        cwd: path.join(ROOT, "test/fleet-schema/go-fields"),
        env: goEnv,
        encoding: "utf8",
      });
      expect(out).to.equal(fs.readFileSync(FLEET_GO_FIELDS, "utf8"));
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});

/** For each field (lists of objects entered with one item), a document setting it to a value of the wrong type. */
function wrongTypeCases(table: FieldTable): { field: string; doc: unknown }[] {
  const out: { field: string; doc: unknown }[] = [];
  const walk = (fields: FieldTable, prefix: string, wrap: (leaf: Record<string, unknown>) => unknown, depth: number) => {
    for (const [key, def] of Object.entries(fields)) {
      let t: FieldType = def.type;
      let listed = false;
      while (t.kind === "list" && t.items.kind !== "string" && t.items.kind !== "stringMap") {
        t = t.items;
        listed = true;
      }
      const at = prefix ? `${prefix}.${key}` : key;
      const wrong = listed ? "text" : wrongValue(t);
      if (wrong !== undefined) out.push({ field: at, doc: wrap({ [key]: wrong }) });
      const sub = t.kind === "object" ? t.fields : t.kind === "ref" ? t.table : undefined;
      if (sub && depth < 4) {
        const field = listed ? `${at}[0]` : at;
        // The fields a reader needs before it reads the others (a selector requirement's key, a dependency's name).
        const base = REQUIRED_FIRST[key] ?? {};
        walk(sub, field, (leaf) => wrap({ [key]: listed ? [{ ...base, ...leaf }] : { ...base, ...leaf } }), depth + 1);
      }
    }
  };
  walk(table, "", (leaf) => leaf, 0);
  return out;
}

const REQUIRED_FIRST: Record<string, Record<string, unknown>> = { matchExpressions: { key: "a", operator: "Exists" }, dependsOn: { name: "b" } };

function wrongValue(t: FieldType): unknown {
  switch (t.kind) {
    case "string":
      return 12;
    case "boolean":
    case "number":
    case "integer":
    case "configInteger":
    case "stringMap":
    case "anyMap":
    case "object":
    case "ref":
      return t.kind === "stringMap" || t.kind === "anyMap" || t.kind === "object" || t.kind === "ref" ? ["a list"] : "text";
    case "intOrString":
      return true;
    case "list":
      return "text";
    case "refused":
      return {};
    default:
      return undefined;
  }
}
