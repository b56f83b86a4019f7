/**
 * The TypeScript <-> Go boundary has one schema (core/model/schema): the Go types are generated from
 * it (scripts/go-schema.ts). This sends a value with every field of each root type, built from the
 * schema as it is now, through Go's types as they are on disk: Go decodes it strictly, leaves no field
 * unset and writes it back equal; the renderer's trust class per job kind must be the same on both
 * sides. A stale or hand-edited generated file, a Go type written by hand that lacks or adds a field,
 * or a schema edit Go's hand-written code does not follow fails here.
 */
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { samples } from "../../scripts/go-schema";
import { optionsCarried, PAIR_SPEC } from "../../core/model/schema/pair-spec";
import { RENDER_OPTIONS } from "../../core/model/schema/render-options";
import { RENDERER_REQUEST, TRUST } from "../../core/model/schema/renderer-request";
import type { Field, Struct, Type } from "../../core/model/schema/describe";
import { OPTION_FIELDS } from "../../core/config/fleetyaml-fields";
import type { FieldTable } from "../../core/config/field-table";

const ROOT = path.join(__dirname, "../..");

/** Each tool's test binary, compiled once per run (a run of it then takes milliseconds). */
const testBinaries = new Map<string, string>();

/** Runs the tool's generated round-trip test on the samples; throws with Go's words when the sides disagree. */
function goRoundTrip(tool: string, samplesFile: string, dir: string): void {
  const cwd = path.join(ROOT, "tools", tool);
  const env = {
    ...process.env,
    GOTOOLCHAIN: "local",
    CGO_ENABLED: "0",
    GOWORK: path.join(ROOT, "tools/workspace/go.work"),
    PULUMI_FLEET_SCHEMA_SAMPLES: samplesFile,
  };
  if (!testBinaries.has(tool)) {
    const bin = path.join(dir, `${tool}.test`);
    execFileSync("go", ["test", "-mod=readonly", "-c", "-o", bin, "."], { cwd, env, stdio: ["ignore", "pipe", "inherit"] });
    testBinaries.set(tool, bin);
  }
  try {
    execFileSync(testBinaries.get(tool)!, ["-test.run", "^TestSchemaRoundTrip$"], { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`tools/${tool}: TypeScript's schema and Go's types disagree:\n${stdout ?? ""}${stderr ?? ""}`);
  }
}

/** A schema type's kind as fleet.yaml's field table names it. */
function tableKind(t: Type): string {
  if (t.kind === "list") return `list of ${tableKind(t.of)}`;
  if (t.kind === "map" && t.of.kind === "string") return "stringMap";
  return ({ string: "string", bool: "boolean", anyMap: "anyMap", struct: "object" } as Record<string, string>)[t.kind] ?? t.kind;
}
function fieldKind(t: FieldTable[string]["type"]): string {
  return t.kind === "list" ? `list of ${fieldKind(t.items)}` : t.kind;
}

/** Every render option path is fleet.yaml's own, with the same type ("" when it is). */
function optionProblems(s: Struct, table: FieldTable, at: string): string[] {
  return Object.entries(s.fields).flatMap(([key, f]: [string, Field]) => {
    const def = table[key];
    if (!def) return [`${at}${key}: not a fleet.yaml option`];
    if (tableKind(f.type) !== fieldKind(def.type)) return [`${at}${key}: ${tableKind(f.type)} here, ${fieldKind(def.type)} in fleet.yaml`];
    return f.type.kind === "struct" && def.type.kind === "object" ? optionProblems(f.type.struct, def.type.fields, `${at}${key}.`) : [];
  });
}

describe("the TypeScript <-> Go schema (core/model/schema)", function () {
  this.timeout(600_000);
  let dir: string;

  before(() => {
    // The generated Go files as a build writes them (skipped when their stamp is the schema's).
    execFileSync("bash", ["-c", 'tools_dir="$PWD/tools"; source tools/lib.sh; go_schema'], { cwd: ROOT, stdio: "inherit" });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "go-schema-"));
  });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    testBinaries.clear();
  });

  for (const tool of ["fleet-provider", "fleet-render"]) {
    it(`${tool}'s Go types read and write back a value with every field the schema has, and no other`, () => {
      const file = path.join(dir, "samples.json");
      fs.writeFileSync(file, JSON.stringify(samples()));
      goRoundTrip(tool, file, dir);
    });
  }

  it("fails when the two sides disagree: a field Go lacks, a field TypeScript lacks, another trust class", () => {
    const base = samples();
    const broken = [
      { tool: "fleet-provider", edit: (s: typeof base) => ((s.types.Spec as Record<string, unknown>).forced = true) },
      { tool: "fleet-provider", edit: (s: typeof base) => delete (s.types.Spec as Record<string, unknown>).force },
      {
        tool: "fleet-render",
        edit: (s: typeof base) => delete ((s.types.Request as Record<string, Record<string, unknown>[]>).renders[0].options as Record<string, unknown>).helm,
      },
      { tool: "fleet-render", edit: (s: typeof base) => (s.trust.pulls = "content") },
    ];
    for (const [i, b] of broken.entries()) {
      const s = structuredClone(base);
      b.edit(s);
      const file = path.join(dir, `broken-${i}.json`);
      fs.writeFileSync(file, JSON.stringify(s));
      expect(() => goRoundTrip(b.tool, file, dir), `break ${i}`).to.throw(/--- FAIL: TestSchemaRoundTrip/);
    }
  });

  it("gives every pair-spec field a diff class, and the options it carries are fleet.yaml's", () => {
    for (const [key, f] of Object.entries(PAIR_SPEC.fields) as [string, Field][]) {
      expect(f.diff, key).to.be.oneOf(["diff", "objects", "none"]);
      if (f.diff === "none") expect(f.doc, `${key}: why it is never diffed`).to.match(/never diffed/i);
      if (f.fromOption) {
        const [first, ...rest] = f.fromOption.split(".");
        let def = OPTION_FIELDS[first];
        for (const k of rest) def = def?.type.kind === "object" ? def.type.fields[k] : undefined!;
        expect(def, `${key}: fromOption ${f.fromOption}`).to.not.equal(undefined);
      }
    }
  });

  it("carries each option a pair-spec field names into the pair's spec, and nothing when it is unset or false", () => {
    const carriers = (Object.entries(PAIR_SPEC.fields) as [string, Field][]).filter(([, f]) => f.fromOption);
    expect(carriers.map(([k]) => k)).to.include.members(["force", "correctDrift"]);
    const options = (value: unknown) => {
      const o: Record<string, Record<string, unknown>> = {};
      for (const [, f] of carriers) {
        const [first, second] = f.fromOption!.split(".");
        (o[first] ??= {})[second] = value;
      }
      return o;
    };
    expect(optionsCarried(options(true))).to.deep.equal(Object.fromEntries(carriers.map(([k]) => [k, true])));
    expect(optionsCarried(options(false))).to.deep.equal({});
    expect(optionsCarried({})).to.deep.equal({});
  });

  it("reads render options only from fleet.yaml's options, with their types", () => {
    expect(optionProblems(RENDER_OPTIONS, OPTION_FIELDS, "")).to.deep.equal([]);
  });

  it("names a trust class for every job kind of the request", () => {
    const kinds = Object.entries(RENDERER_REQUEST.fields as Record<string, Field>).filter(([, f]) => f.type.kind === "list" || f.type.kind === "map");
    const inputs = ["bundles", "clusters", "helm", "capabilities", "jobGroups", "groupSeconds"];
    expect(kinds.map(([k]) => k).filter((k) => !inputs.includes(k))).to.have.members(Object.keys(TRUST));
    expect(
      Object.entries(TRUST)
        .filter(([, c]) => c === "content")
        .map(([k]) => k),
    ).to.have.members(["yaml", "values", "renders"]);
  });
});
