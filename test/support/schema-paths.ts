/**
 * Field paths of a JSON Schema (Fleet's published fleet.yaml schema) and how our field table covers
 * each: `helm.valuesFrom[].configMapKeyRef.name`. Used by test/unit/schemas.test.ts.
 */
import { FieldDef, FieldTable, FieldType } from "../../core/config/field-table";

type Schema = { $ref?: string; properties?: Record<string, Schema>; items?: Schema; [k: string]: unknown };

/** Every property path of `schema`, following `$ref`s into `$defs`/`definitions` (each definition once per path). */
export function schemaPaths(root: Schema): string[] {
  const defs = (root.$defs ?? root.definitions ?? {}) as Record<string, Schema>;
  const resolve = (s: Schema): Schema => (s.$ref ? resolve(defs[s.$ref.split("/").pop()!]) : s);
  const out: string[] = [];
  const walk = (s: Schema, prefix: string, seen: string[]) => {
    if (s.$ref && seen.includes(s.$ref)) return;
    const seenHere = s.$ref ? [...seen, s.$ref] : seen;
    const r = resolve(s);
    if (r.items) return walk(r.items, `${prefix}[]`, seenHere);
    for (const [key, child] of Object.entries(r.properties ?? {})) {
      const at = prefix ? `${prefix}.${key}` : key;
      out.push(at);
      walk(child, at, seenHere);
    }
  };
  walk(root, "", []);
  return out.sort();
}

/** How the table covers a path: a field of ours, inside a field we keep as data, refused, or missing. */
export function coverage(table: FieldTable, path: string): "present" | "data" | "refused" | "missing" {
  let fields: FieldTable | undefined = table;
  let data = false;
  for (const part of path.split(".")) {
    const key = part.replace(/\[\]$/, "");
    if (data) return "data";
    if (!fields) return "missing";
    const def: FieldDef | undefined = fields[key];
    if (!def) return "missing";
    let t: FieldType = def.type;
    while (t.kind === "list") t = t.items;
    if (t.kind === "refused") return "refused";
    data = t.kind === "any" || t.kind === "anyMap" || t.kind === "stringMap";
    fields = t.kind === "object" ? t.fields : t.kind === "ref" ? t.table : undefined;
  }
  return "present";
}
