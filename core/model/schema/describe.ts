/**
 * The language of the TypeScript <-> Go boundary's one schema: a const descriptor per type, from
 * which TypeScript infers the type (`Shape`) and scripts/go-schema.ts writes the Go struct
 * (zz_generated_schema.go in tools/fleet-provider and tools/fleet-render, not committed). A field
 * names its JSON key; its Go name is derived (goName) unless given; a type may name a Go type written
 * by hand (`goType`), whose methods (a custom UnmarshalJSON) the generator cannot write.
 * test/unit/go-schema-roundtrip.test.ts sends a value with every field set through Go and back.
 */

export type Type =
  | { readonly kind: "string"; readonly values?: readonly string[] }
  | { readonly kind: "bool" }
  | { readonly kind: "int" }
  | { readonly kind: "int64" }
  | { readonly kind: "float" }
  /** Any JSON value (Helm values, a manifest): map[string]any / unknown. */
  | { readonly kind: "anyMap" }
  | { readonly kind: "any" }
  /** A JSON object Go keeps as its text (json.RawMessage) for a library to decode. */
  | { readonly kind: "raw" }
  | { readonly kind: "list"; readonly of: Type }
  | { readonly kind: "map"; readonly of: Type }
  /** A fixed-length list of strings ([cluster, helm]): Go [N]string. */
  | { readonly kind: "pair" }
  | { readonly kind: "struct"; readonly struct: Struct }
  /** The value or null (Go: nil; a struct is then a pointer). */
  | { readonly kind: "nullable"; readonly of: Type };

/** How diffPair (tools/fleet-provider decide.go) treats a pair-spec field, with the reason in `doc`. */
export type DiffClass =
  /** A change updates the pair (reflect.DeepEqual of old and new). */
  | "diff"
  /** Compared object by object, field by field (decide.go diffObjects). */
  | "objects"
  /** Never compared: a change alone applies nothing (the field's doc says why). */
  | "none";

/**
 * A renderer job kind's trust class: "content" evaluates GitRepo content, so it runs only in
 * fleet-render's sandbox; "trusted" reaches the network or a cluster's credentials with the operator's
 * data, so only outside it (core/renderer/fleet-render.ts and tools/fleet-render/main.go both split by it).
 */
export type Trust = "content" | "trusted";

export interface Field {
  readonly type: Type;
  readonly doc: string;
  readonly optional?: boolean;
  /** Go's omitempty where the field is required on the TypeScript side (the provider's outputs leave it out). */
  readonly goOmitEmpty?: boolean;
  /** The Go field's name when goName's derivation is not it. */
  readonly goName?: string;
  /** A pointer in Go: an optional struct or list whose absence means something, or a map's values. */
  readonly goPointer?: boolean;
  /** Go keeps the value as its JSON text (json.RawMessage; a list's or map's values): a worker encoded it, or a library decodes it. */
  readonly goRaw?: boolean;
  /** Go writes the field even when empty (no omitempty) where TypeScript reads it as optional. */
  readonly goKeepEmpty?: boolean;
  /** Renderer-request fields: the job kind's trust class (absent: an input jobs reference by key). */
  readonly trust?: Trust;
  /** Pair-spec fields: diffPair's class. */
  readonly diff?: DiffClass;
  /** Pair-spec fields: the merged fleet.yaml option (a path such as "helm.force") the pair's spec carries as is (core/desired/objects.ts). */
  readonly fromOption?: string;
}

export interface Struct {
  /** The Go type's name; the TypeScript name is the export that infers from it. */
  readonly name: string;
  readonly doc: string;
  readonly fields: Readonly<Record<string, Field>>;
  /** Written by hand in Go (it has methods the generator cannot write): generated nowhere, checked by the round trip. */
  readonly goType?: "hand";
  /** An unexported Go struct, written by hand, embedded in the generated one (fields that never cross the boundary). */
  readonly goEmbed?: string;
}

// Short constructors, so a descriptor reads as a list of fields.
export const text = { kind: "string" } as const;
export const oneOf = <const V extends readonly string[]>(values: V) => ({ kind: "string", values }) as const;
export const bool = { kind: "bool" } as const;
export const int = { kind: "int" } as const;
export const int64 = { kind: "int64" } as const;
export const float = { kind: "float" } as const;
export const anyMap = { kind: "anyMap" } as const;
export const anyValue = { kind: "any" } as const;
export const raw = { kind: "raw" } as const;
export const pair = { kind: "pair" } as const;
export const list = <T extends Type>(of: T) => ({ kind: "list", of }) as const;
export const map = <T extends Type>(of: T) => ({ kind: "map", of }) as const;
export const struct = <S extends Struct>(s: S) => ({ kind: "struct", struct: s }) as const;
export const nullable = <T extends Type>(of: T) => ({ kind: "nullable", of }) as const;
/** A descriptor, checked, with its literal types kept for inference. */
export const describe = <const S extends Struct>(s: S): S => s;

/** The TypeScript type of a schema type. */
export type TypeOf<T extends Type> = T extends { kind: "string"; values: readonly (infer V)[] }
  ? V
  : T extends { kind: "string" }
    ? string
    : T extends { kind: "bool" }
      ? boolean
      : T extends { kind: "int" | "int64" | "float" }
        ? number
        : T extends { kind: "anyMap" | "raw" }
          ? Record<string, unknown>
          : T extends { kind: "any" }
            ? unknown
            : T extends { kind: "pair" }
              ? [string, string]
              : T extends { kind: "list"; of: infer O extends Type }
                ? TypeOf<O>[]
                : T extends { kind: "map"; of: infer O extends Type }
                  ? Record<string, TypeOf<O>>
                  : T extends { kind: "struct"; struct: infer S extends Struct }
                    ? Shape<S>
                    : T extends { kind: "nullable"; of: infer O extends Type }
                      ? TypeOf<O> | null
                      : never;

type Flat<T> = { [K in keyof T]: T[K] };
type OptionalKeys<F> = { [K in keyof F]: F[K] extends { optional: true } ? K : never }[keyof F];

/** The TypeScript type a struct descriptor describes: optional fields optional, the rest required. */
export type Shape<S extends Struct> = Flat<
  { -readonly [K in Exclude<keyof S["fields"], OptionalKeys<S["fields"]>>]: TypeOf<S["fields"][K]["type"]> } & {
    -readonly [K in OptionalKeys<S["fields"]>]?: TypeOf<S["fields"][K]["type"]>;
  }
>;

/** Go's name of a JSON key: exported, with Go's initialisms (deploymentId -> DeploymentID). */
export function goName(json: string, field: Field): string {
  if (field.goName) return field.goName;
  const exported = json[0].toUpperCase() + json.slice(1);
  return exported
    .replace(/Id$/, "ID")
    .replace(/Url(s?)$/, "URL$1")
    .replace(/^Api/, "API")
    .replace(/Crd/, "CRD")
    .replace(/Dns/, "DNS");
}
