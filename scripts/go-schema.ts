/**
 * Writes the Go side of the TypeScript <-> Go boundary from its one schema (core/model/schema):
 * tools/fleet-provider/zz_generated_schema.go (the pair spec, diffPair's field tables) and
 * tools/fleet-render/zz_generated_schema.go (the renderer request, each job kind's trust class). Not
 * committed: tools/build-provider.sh, tools/build-render.sh and scripts/go-tests.sh run this first (tools/lib.sh
 * go_schema), and skip it when the file's stamp is the schema sources' hash.
 *
 *   node scripts/run-ts.js scripts/go-schema.ts            write both files (gofmt'ed)
 *   node scripts/run-ts.js scripts/go-schema.ts --samples  print, per root type, a value with every field set (the round-trip test's input)
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { goName, type Field, type Struct, type Type } from "../core/model/schema/describe";
import { PAIR_SPEC } from "../core/model/schema/pair-spec";
import { RENDERER_REQUEST, TRUST } from "../core/model/schema/renderer-request";
import { RENDER_RESULT, RENDERER_RESPONSE, VALUES_RESULT } from "../core/model/schema/renderer-response";

const ROOT = path.join(__dirname, "..");

/** The Go files and the root types each holds (with every struct they reach). */
export const GO_FILES: Record<string, Struct[]> = {
  "tools/fleet-provider/zz_generated_schema.go": [PAIR_SPEC],
  // The results a worker encodes on its own (Response holds their JSON text) are roots of their own.
  "tools/fleet-render/zz_generated_schema.go": [RENDERER_REQUEST, RENDERER_RESPONSE, VALUES_RESULT, RENDER_RESULT],
};

/** The hash of the schema's sources, stamped into each file (tools/lib.sh go_schema computes the same). */
export function schemaStamp(): string {
  const dir = path.join(ROOT, "core/model/schema");
  const files = [
    ...fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".ts"))
      .map((f) => path.join(dir, f)),
    path.join(ROOT, "scripts/go-schema.ts"),
  ];
  files.sort();
  const hash = createHash("sha256");
  for (const f of files) hash.update(fs.readFileSync(f));
  return hash.digest("hex").slice(0, 16);
}

function goType(t: Type, field?: Field): string {
  if (field?.goRaw) return t.kind === "list" ? "[]json.RawMessage" : t.kind === "map" ? "map[string]json.RawMessage" : "json.RawMessage";
  switch (t.kind) {
    case "string":
      return "string";
    case "bool":
      return "bool";
    case "int":
      return "int";
    case "int64":
      return "int64";
    case "float":
      return "float64";
    case "anyMap":
      return "map[string]any";
    case "any":
      return "any";
    case "raw":
      return "json.RawMessage";
    case "pair":
      return "[2]string";
    case "list":
      return `${field?.goPointer ? "*" : ""}[]${goType(t.of)}`;
    case "map":
      return `map[string]${field?.goPointer ? "*" : ""}${goType(t.of)}`;
    case "struct":
      return `${field?.goPointer ? "*" : ""}${t.struct.name}`;
    case "nullable":
      return t.of.kind === "struct" ? `*${t.of.struct.name}` : goType(t.of, field);
  }
}

/** Adds every struct a root reaches to `seen` (by name: each once), the root first. */
function collectStructs(root: Struct, seen: Map<string, Struct>): void {
  if (seen.has(root.name)) return;
  seen.set(root.name, root);
  const visit = (t: Type): void => {
    if (t.kind === "list" || t.kind === "map" || t.kind === "nullable") visit(t.of);
    else if (t.kind === "struct") collectStructs(t.struct, seen);
  };
  for (const f of Object.values(root.fields)) visit(f.type);
}

const comment = (text: string, indent: string): string =>
  text
    ? `${text
        .split(/(?<=\.) /)
        .map((line) => `${indent}// ${line}`)
        .join("\n")}\n`
    : "";

function structDecl(s: Struct): string {
  const lines = Object.entries(s.fields).map(([json, f]) => {
    const tag = `json:"${json}${(f.optional && !f.goKeepEmpty) || f.goOmitEmpty ? ",omitempty" : ""}"`;
    return `${comment(f.doc, "\t")}\t${goName(json, f)} ${goType(f.type, f)} \`${tag}\``;
  });
  if (s.goEmbed) lines.push(`\t${s.goEmbed}`);
  return `${comment(s.doc, "")}type ${s.name} struct {\n${lines.join("\n")}\n}\n`;
}

/** diffPair's tables: the fields it compares whole, and the sets of objects it compares object by object. */
function diffTables(s: Struct): string {
  const of = (cls: string) => Object.entries(s.fields).filter(([, f]) => f.diff === cls);
  if (!of("diff").length) return "";
  const get = (json: string, f: Field) => `func(s *${s.name}) ${goType(f.type, f)} { return s.${goName(json, f)} }`;
  const entries = (cls: string, wrap: (json: string, f: Field) => string) =>
    of(cls)
      .map(([json, f]) => `\t{${JSON.stringify(json)}, ${wrap(json, f)}},\n`)
      .join("");
  const never = of("none").map(([json]) => json);
  return `
// ${s.name.toLowerCase()}Field is one field of ${s.name} as diffPair (decide.go) reads it.
type ${s.name.toLowerCase()}Field[T any] struct {
\tjson string
\tget  func(*${s.name}) T
}

// ${s.name.toLowerCase()}Diffed: the fields whose change updates the pair (schema diff class "diff").
// Never compared (class "none", the schema says why): ${never.join(", ")}.
var ${s.name.toLowerCase()}Diffed = []${s.name.toLowerCase()}Field[any]{
${entries("diff", (json, f) => `func(s *${s.name}) any { return s.${goName(json, f)} }`)}}

// ${s.name.toLowerCase()}ObjectSets: the sets diffPair compares object by object (schema diff class "objects").
var ${s.name.toLowerCase()}ObjectSets = []${s.name.toLowerCase()}Field[map[string]DesiredObject]{
${entries("objects", get)}}
`;
}

/** Each request field's trust class, and the request's job counts by class (main.go refuses a mix). */
function trustTable(s: Struct): string {
  const kinds = Object.entries(TRUST);
  const count = (cls: string) =>
    kinds
      .filter(([, c]) => c === cls)
      .map(([json]) => `len(r.${goName(json, s.fields[json])})`)
      .join(" + ");
  return `
// jobTrust: each job kind's trust class, in the schema's order. "content" evaluates GitRepo content (only in the sandbox);
// "trusted" reaches the network or a cluster's credentials with the operator's data (only outside it).
var jobTrust = []struct{ kind, class string }{
${kinds.map(([json, c]) => `\t{${JSON.stringify(json)}, ${JSON.stringify(c)}},\n`).join("")}}

// jobCounts: the request's jobs of each trust class.
func (r *${s.name}) jobCounts() (content, trusted int) {
\treturn ${count("content")}, ${count("trusted")}
}
`;
}

export function goSource(roots: Struct[]): string {
  const seen = new Map<string, Struct>();
  for (const r of roots) collectStructs(r, seen);
  const structs = [...seen.values()].filter((s) => s.goType !== "hand");
  const body = structs.map(structDecl).join("\n") + roots.map(diffTables).join("") + (roots.includes(RENDERER_REQUEST) ? trustTable(RENDERER_REQUEST) : "");
  const imports = body.includes("json.RawMessage") ? `import "encoding/json"\n\n` : "";
  const header = `// Code generated by scripts/go-schema.ts from core/model/schema; DO NOT EDIT.\n// schema sources ${schemaStamp()}\n\npackage main\n\n${imports}`;
  return execFileSync("gofmt", [], { input: header + body, encoding: "utf8" });
}

/** A value with every field set, none to its zero value (so a field Go drops or renames shows). */
export function sampleOf(t: Type, name = "v"): unknown {
  switch (t.kind) {
    case "string":
      return t.values ? t.values[t.values.length - 1] : `${name}-text`;
    case "bool":
      return true;
    case "int":
    case "int64":
      return 7;
    case "float":
      return 1.5;
    case "anyMap":
    case "any":
    case "raw":
      return { [name]: { nested: [1, "two"] } };
    case "pair":
      return [`${name}-0`, `${name}-1`];
    case "list":
      return [sampleOf(t.of, name)];
    case "nullable":
      return sampleOf(t.of, name);
    case "map":
      return { [`${name}-key`]: sampleOf(t.of, name) };
    case "struct":
      return Object.fromEntries(Object.entries(t.struct.fields).map(([json, f]) => [json, sampleOf(f.type, json)]));
  }
}

/** What the round trip sends: per root type a value with every field set, and each job kind's trust class. */
export function samples(): { types: Record<string, unknown>; trust: Record<string, string> } {
  const roots = Object.values(GO_FILES).flat();
  return { types: Object.fromEntries(roots.map((r) => [r.name, sampleOf({ kind: "struct", struct: r })])), trust: { ...TRUST } };
}

/**
 * The round trip, in Go: each root decoded strictly from TypeScript's sample (no field Go lacks), with
 * no field left unset (none TypeScript lacks), and written back equal; the renderer's trust classes
 * as TypeScript and Go's jobCounts read them. PULUMI_FLEET_SCHEMA_SAMPLES names fresh samples
 * (test/unit/go-schema-roundtrip.test.ts); without it, those of the schema this file was generated from.
 */
function goTestSource(roots: Struct[]): string {
  const checks = roots.map((r) => `\tschemaRoundTrip(t, ${JSON.stringify(r.name)}, s.Types[${JSON.stringify(r.name)}], &${r.name}{})\n`).join("");
  const trust = roots.includes(RENDERER_REQUEST)
    ? `
\tvar fields map[string]json.RawMessage
\tif err := json.Unmarshal(s.Types["Request"], &fields); err != nil {
\t\tt.Fatal(err)
\t}
\tfor _, k := range jobTrust {
\t\tif s.Trust[k.kind] != k.class {
\t\t\tt.Errorf("job kind %s: Go's trust class is %q, TypeScript's %q", k.kind, k.class, s.Trust[k.kind])
\t\t}
\t}
\tfor kind, class := range s.Trust {
\t\tvar only Request
\t\tif err := json.Unmarshal([]byte(\`{"\`+kind+\`":\`+string(fields[kind])+\`}\`), &only); err != nil {
\t\t\tt.Fatal(err)
\t\t}
\t\tif content, trusted := only.jobCounts(); (class == "content") != (content > 0) || (class == "trusted") != (trusted > 0) {
\t\t\tt.Errorf("job kind %s (TypeScript: %s): Go counts %d content and %d trusted jobs", kind, class, content, trusted)
\t\t}
\t}
`
    : "";
  const body = `// Code generated by scripts/go-schema.ts from core/model/schema; DO NOT EDIT.

package main

import (
\t"bytes"
\t"encoding/json"
\t"os"
\t"reflect"
\t"testing"
)

const schemaSamples = \`${JSON.stringify(samples())}\`

func TestSchemaRoundTrip(t *testing.T) {
\traw := []byte(schemaSamples)
\tif file := os.Getenv("PULUMI_FLEET_SCHEMA_SAMPLES"); file != "" {
\t\tvar err error
\t\tif raw, err = os.ReadFile(file); err != nil {
\t\t\tt.Fatal(err)
\t\t}
\t}
\tvar s struct {
\t\tTypes map[string]json.RawMessage \`json:"types"\`
\t\tTrust map[string]string          \`json:"trust"\`
\t}
\tif err := json.Unmarshal(raw, &s); err != nil {
\t\tt.Fatal(err)
\t}
${checks}${trust}}

func schemaRoundTrip(t *testing.T, name string, in json.RawMessage, v any) {
\tt.Helper()
\tdec := json.NewDecoder(bytes.NewReader(in))
\tdec.DisallowUnknownFields()
\tdec.UseNumber()
\tif err := dec.Decode(v); err != nil {
\t\tt.Errorf("%s: Go does not read what TypeScript writes: %v", name, err)
\t\treturn
\t}
\tif path := schemaUnset(reflect.ValueOf(v).Elem(), name); path != "" {
\t\tt.Errorf("%s: TypeScript's value sets no %s (a field Go has that the schema lacks)", name, path)
\t}
\tout, err := json.Marshal(v)
\tif err != nil {
\t\tt.Fatal(err)
\t}
\tif a, b := schemaJSON(t, in), schemaJSON(t, out); !reflect.DeepEqual(a, b) {
\t\tt.Errorf("%s: Go writes back\\n%s\\nnot what TypeScript wrote\\n%s", name, out, in)
\t}
}

func schemaJSON(t *testing.T, raw []byte) any {
\tdec := json.NewDecoder(bytes.NewReader(raw))
\tdec.UseNumber()
\tvar v any
\tif err := dec.Decode(&v); err != nil {
\t\tt.Fatal(err)
\t}
\treturn v
}

// schemaUnset is the path of the first exported field left at its zero value ("" when none is).
func schemaUnset(v reflect.Value, path string) string {
\tswitch v.Kind() {
\tcase reflect.Pointer, reflect.Interface:
\t\tif v.IsNil() {
\t\t\treturn path
\t\t}
\t\treturn schemaUnset(v.Elem(), path)
\tcase reflect.Struct:
\t\tfor i := 0; i < v.NumField(); i++ {
\t\t\tif f := v.Type().Field(i); f.IsExported() {
\t\t\t\tif p := schemaUnset(v.Field(i), path+"."+f.Name); p != "" {
\t\t\t\t\treturn p
\t\t\t\t}
\t\t\t}
\t\t}
\tcase reflect.Slice, reflect.Map:
\t\tif v.Len() == 0 {
\t\t\treturn path
\t\t}
\t\tif v.Kind() == reflect.Slice {
\t\t\treturn schemaUnset(v.Index(0), path+"[0]")
\t\t}
\t\tfor _, k := range v.MapKeys() {
\t\t\tif p := schemaUnset(v.MapIndex(k), path+"["+k.String()+"]"); p != "" {
\t\t\t\treturn p
\t\t\t}
\t\t}
\tdefault:
\t\tif v.IsZero() {
\t\t\treturn path
\t\t}
\t}
\treturn ""
}
`;
  return execFileSync("gofmt", [], { input: body, encoding: "utf8" });
}

function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

if (process.argv[1] === __filename) {
  if (process.argv[2] === "--samples") {
    console.log(JSON.stringify(samples()));
  } else {
    for (const [file, roots] of Object.entries(GO_FILES)) {
      writeAtomically(path.join(ROOT, file), goSource(roots));
      writeAtomically(path.join(ROOT, file.replace(/\.go$/, "_test.go")), goTestSource(roots));
    }
  }
}
