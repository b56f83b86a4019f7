/**
 * A declarative table of a configuration file's fields: the one definition a reader takes its allowed
 * keys from (`keysOf`) and the JSON Schema for editors is generated from (json-schema.ts), so the two
 * cannot drift. The readers stay hand-written for what a schema cannot say (label syntax, a release
 * name's length, Fleet's case-insensitive matching); the table says which keys exist and their types.
 */

/** One field's type, as the reader checks it. */
export type FieldType =
  | { kind: "string"; enum?: readonly string[] }
  | { kind: "boolean" }
  | { kind: "number" }
  | { kind: "integer" }
  /**
   * A whole number at the top level of a stack file: Pulumi keeps config scalars as strings, and the CLI
   * writes a new stack's `5` back as `"5"` (reader.ts optConfigNumber), so its digits as a string count too.
   */
  | { kind: "configInteger" }
  /** An integer or a string such as "25%" (Kubernetes' IntOrString). */
  | { kind: "intOrString" }
  /** A mapping of string to string (labels, annotations). */
  | { kind: "stringMap" }
  /** Any mapping, kept as data (Helm values). */
  | { kind: "anyMap" }
  /** Any value: the field's reader checks it (a section read elsewhere). */
  | { kind: "any" }
  | { kind: "list"; items: FieldType }
  | { kind: "object"; fields: FieldTable }
  /** A named shared definition (a label selector), emitted once under `definitions`. */
  | { kind: "ref"; name: string; table: FieldTable }
  /** A secret: a plain string, or `{secure: ...}` as Pulumi stores it encrypted in a stack file. */
  | { kind: "secret" }
  /** A field the reader refuses with this reason (an error, never ignored). */
  | { kind: "refused"; reason: string };

export interface FieldDef {
  type: FieldType;
  description?: string;
}

export type FieldTable = Readonly<Record<string, FieldDef>>;

/** The allowed keys of a table, for Field.object(). */
export function keysOf(table: FieldTable): string[] {
  return Object.keys(table);
}

/** The table of an object (or a list of objects, or a shared definition) field, for reading one level down. */
export function tableOf(def: FieldDef): FieldTable {
  let t: FieldType = def.type;
  while (t.kind === "list") t = t.items;
  if (t.kind === "object") return t.fields;
  if (t.kind === "ref") return t.table;
  throw new Error(`not an object field: ${t.kind}`);
}

// Short constructors, so a table reads as a list of fields.
export const str = (description?: string, values?: readonly string[]): FieldDef => ({
  type: { kind: "string", ...(values ? { enum: values } : {}) },
  description,
});
export const bool = (description?: string): FieldDef => ({ type: { kind: "boolean" }, description });
export const num = (description?: string): FieldDef => ({ type: { kind: "number" }, description });
export const int = (description?: string): FieldDef => ({ type: { kind: "integer" }, description });
export const configInt = (description?: string): FieldDef => ({ type: { kind: "configInteger" }, description });
export const intOrString = (description?: string): FieldDef => ({ type: { kind: "intOrString" }, description });
export const stringMap = (description?: string): FieldDef => ({ type: { kind: "stringMap" }, description });
export const anyMap = (description?: string): FieldDef => ({ type: { kind: "anyMap" }, description });
export const any = (description?: string): FieldDef => ({ type: { kind: "any" }, description });
export const stringList = (description?: string): FieldDef => ({ type: { kind: "list", items: { kind: "string" } }, description });
export const obj = (fields: FieldTable, description?: string): FieldDef => ({ type: { kind: "object", fields }, description });
export const listOf = (item: FieldDef, description?: string): FieldDef => ({ type: { kind: "list", items: item.type }, description });
export const ref = (name: string, table: FieldTable, description?: string): FieldDef => ({ type: { kind: "ref", name, table }, description });
export const secret = (description?: string): FieldDef => ({ type: { kind: "secret" }, description });
export const refused = (reason: string): FieldDef => ({ type: { kind: "refused", reason }, description: `refused: ${reason}` });
