/**
 * A field table (field-table.ts) as a JSON Schema (draft-07: what editors' YAML extensions and ajv 6
 * read). Unknown keys are marked (additionalProperties: false) so an editor underlines a typo; the
 * readers say the same (an error, or for fleet.yaml a warning, as Fleet ignores them).
 */
import { FieldDef, FieldTable, FieldType } from "../config/field-table";

export interface JsonSchema {
  [key: string]: unknown;
}

export function tableSchema(id: string, title: string, root: FieldTable): JsonSchema {
  const definitions: Record<string, JsonSchema> = {};
  const body = objectSchema(root, definitions);
  return { $schema: "http://json-schema.org/draft-07/schema#", $id: id, title, ...body, definitions: sorted(definitions) };
}

function objectSchema(table: FieldTable, defs: Record<string, JsonSchema>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [key, def] of Object.entries(table)) properties[key] = fieldSchema(def, defs);
  return { type: "object", properties, additionalProperties: false };
}

function fieldSchema(def: FieldDef, defs: Record<string, JsonSchema>): JsonSchema {
  const schema = typeSchema(def.type, defs);
  return def.description ? { ...schema, description: def.description } : schema;
}

function typeSchema(t: FieldType, defs: Record<string, JsonSchema>): JsonSchema {
  switch (t.kind) {
    case "string":
      return t.enum ? { type: "string", enum: [...t.enum] } : { type: "string" };
    case "boolean":
    case "number":
    case "integer":
      return { type: t.kind };
    case "configInteger":
      return { anyOf: [{ type: "integer" }, { type: "string", pattern: "^[0-9]+$" }] };
    case "intOrString":
      return { type: ["integer", "string"] };
    case "stringMap":
      return { type: "object", additionalProperties: { type: "string" } };
    case "anyMap":
      return { type: "object" };
    case "any":
      return {};
    case "list":
      return { type: "array", items: typeSchema(t.items, defs) };
    case "object":
      return objectSchema(t.fields, defs);
    case "ref":
      if (!defs[t.name]) {
        defs[t.name] = {}; // reserved first: a table may refer to itself
        defs[t.name] = objectSchema(t.table, defs);
      }
      return { $ref: `#/definitions/${t.name}` };
    case "secret":
      return { oneOf: [{ type: "string" }, { type: "object", properties: { secure: { type: "string" } }, required: ["secure"], additionalProperties: false }] };
    case "refused":
      return { not: {} };
  }
}

function sorted<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
